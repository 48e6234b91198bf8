// SkillBank: optimisation skills for GPU kernels, each gated by a predicate over measured features (the
// long-term rule memory of KernelSkill; docs/memory.md). The built-in bank is a versioned data file shipped
// with the package (skills/skills.json, with one example file per skill and kernel language); users load
// more files, and add, replace or remove skills in code. The prompt builder shows the skills whose
// predicates hold for the request (PromptBuilderOptions::skills).
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kernelsmith/export.hpp"
#include "kernelsmith/features.hpp"
#include "kernelsmith/predicate.hpp"

namespace kernelsmith {

struct KERNELSMITH_API Skill {
  /// snake_case, unique in a bank: what the model names in its <skill> tag and the experience records.
  std::string name;
  /// One line: what the skill does.
  std::string title;
  /// When it applies.
  Predicate when;
  /// What to do, in a few sentences.
  std::string advice;
  /// A short example per kernel language ("cuda", "opencl", "triton", ...): compilable device code.
  std::map<std::string, std::string> examples;
  /// The file it was loaded from; empty for a skill made in code.
  std::string origin;

  bool applies(const Features& features) const { return when.holds(features); }
  /// The example in `language`, or "" (an example in another language would teach the wrong syntax).
  std::string example(const std::string& language) const;
  /// Throws ValidationError naming the field: a name that is not snake_case, no advice, an example in an
  /// unknown language or empty.
  void validate(const std::string& origin = "<skill>") const;
};

/// The schema tag of skill bank files.
inline constexpr const char* kSkillBankSchema = "kernelsmith.skills/1";

/// One file loaded into a bank.
struct SkillFile {
  std::string path;
  std::string version;  ///< the file's own "version"
  std::size_t skills = 0;
};

class KERNELSMITH_API SkillBank {
 public:
  /// An empty bank.
  SkillBank() = default;

  /// The built-in bank (skills/skills.json in skill_search_path()), read once per process. Throws NotFoundError
  /// naming the folders searched when the file is not there, ValidationError when it is malformed.
  static SkillBank builtin();
  /// A bank of one file.
  static SkillBank load(const std::string& path);

  /// Adds the skills of a file (docs/memory.md, "Skill bank files"); one named like a skill already in the
  /// bank replaces it where it stands. Example files are named relative to the file. Returns how many skills it
  /// read. Throws NotFoundError for a missing file, ValidationError naming the file, the field and, for a
  /// predicate, the column.
  std::size_t load_file(const std::string& path);
  /// The same for a document in memory; `folder` resolves example files (empty: examples must be inline).
  std::size_t load_json(const std::string& json_text, const std::string& origin = "<skills>",
                        const std::filesystem::path& folder = {});

  /// Adds a skill, or replaces the one of the same name where it stands. Throws ValidationError (Skill::validate).
  void add(Skill skill);
  /// Removes a skill; false when there is none of that name.
  bool remove(const std::string& name);
  /// The skill of that name, or null.
  const Skill* find(const std::string& name) const;
  const std::vector<Skill>& skills() const { return skills_; }
  std::size_t size() const { return skills_.size(); }
  const std::vector<SkillFile>& files() const { return files_; }

  /// The skills whose predicates hold for the features, in bank order (the order of the files, then of the
  /// skills in each: earlier is shown first).
  std::vector<Skill> applicable(const Features& features) const;

  /// The bank as one document of the file format, examples inline; load_json reads it back.
  std::string to_json() const;

 private:
  std::vector<Skill> skills_;
  std::vector<SkillFile> files_;
};

/// The folders searched for the built-in skills/skills.json, in order: $KERNELSMITH_SKILLS_PATH
/// (':'-separated), skills/ beside the library (a wheel), share/kernelsmith/skills (an installed tree), the
/// source tree's skills/.
KERNELSMITH_API std::vector<std::filesystem::path> skill_search_path();

}  // namespace kernelsmith
