// The columns an experience item's facts take in SQLite, shared by the experience memory's file (table items)
// and the run store (table experience): one column list, one binder and one reader, so a fact is added in one
// place.
#pragma once

#include <string>

#include "detail/sqlite.hpp"
#include "kernelsmith/experience.hpp"

namespace kernelsmith::detail {

/// The facts' column definitions, for a CREATE TABLE: task, task_features, feedback, stage, skill, edit, status,
/// compiled, correct, speedup, parent_speedup, note, reward, origin, created.
extern const char* const kExperienceFactDefinitions;
/// Their names, in that order, for a SELECT or an INSERT.
extern const char* const kExperienceFactColumns;
/// How many there are.
inline constexpr int kExperienceFactCount = 15;

/// Binds the item's facts to parameters first_index, first_index + 1, ...
void bind_experience_facts(SqliteStatement& statement, int first_index, const ExperienceItem& item);
/// Reads the facts from columns first_column, first_column + 1, ... into `item`; `where` names the row in errors.
void read_experience_facts(const SqliteStatement& row, int first_column, ExperienceItem& item, const std::string& where);

}  // namespace kernelsmith::detail
