#include "memory/experience_rows.hpp"

#include "kernelsmith/run_store.hpp"

namespace kernelsmith::detail {

const char* const kExperienceFactDefinitions = R"sql(
  task TEXT NOT NULL,
  task_features TEXT NOT NULL,
  feedback TEXT NOT NULL,
  stage TEXT NOT NULL,
  skill TEXT NOT NULL,
  edit TEXT NOT NULL,
  status TEXT NOT NULL,
  compiled INTEGER NOT NULL,
  correct INTEGER NOT NULL,
  speedup REAL NOT NULL,
  parent_speedup REAL NOT NULL,
  note TEXT NOT NULL,
  reward REAL NOT NULL,
  origin TEXT NOT NULL,
  created REAL NOT NULL)sql";

const char* const kExperienceFactColumns =
    "task, task_features, feedback, stage, skill, edit, status, compiled, correct, speedup, parent_speedup, note, "
    "reward, origin, created";

void bind_experience_facts(SqliteStatement& statement, int first_index, const ExperienceItem& item) {
  const int i = first_index;
  statement.bind(i, item.task)
      .bind(i + 1, item.task_features.to_json())
      .bind(i + 2, item.feedback.to_json())
      .bind(i + 3, to_string(item.stage))
      .bind(i + 4, item.skill)
      .bind(i + 5, item.edit)
      .bind(i + 6, to_string(item.status))
      .bind(i + 7, item.compiled ? 1 : 0)
      .bind(i + 8, item.correct ? 1 : 0)
      .bind(i + 9, item.speedup)
      .bind(i + 10, item.parent_speedup)
      .bind(i + 11, item.note)
      .bind(i + 12, item.reward)
      .bind(i + 13, item.origin)
      .bind(i + 14, item.created > 0.0 ? item.created : unix_seconds());
}

void read_experience_facts(const SqliteStatement& row, int first_column, ExperienceItem& item,
                           const std::string& where) {
  int column = first_column;
  item.task = row.text(column++);
  item.task_features = Features::from_json(row.text(column++), where + ": task_features");
  item.feedback = Features::from_json(row.text(column++), where + ": feedback");
  item.stage = parse_stage(row.text(column++));
  item.skill = row.text(column++);
  item.edit = row.text(column++);
  item.status = parse_status(row.text(column++));
  item.compiled = row.int64(column++) != 0;
  item.correct = row.int64(column++) != 0;
  item.speedup = row.real(column++);
  item.parent_speedup = row.real(column++);
  item.note = row.text(column++);
  item.reward = row.real(column++);
  item.origin = row.text(column++);
  item.created = row.real(column++);
}

}  // namespace kernelsmith::detail
