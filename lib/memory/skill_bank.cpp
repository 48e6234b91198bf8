#include "kernelsmith/skill_bank.hpp"

#include <algorithm>
#include <cctype>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "detail/contained_path.hpp"
#include "detail/data_path.hpp"
#include "detail/file_cache.hpp"
#include "detail/json_util.hpp"
#include "detail/text.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/language.hpp"

namespace kernelsmith {

namespace fs = std::filesystem;

namespace {

bool is_snake_case(const std::string& name) {
  if (name.empty() || name.size() > 64 || !std::islower(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_';
  });
}

// A file's text; NotFoundError when it cannot be read, ValidationError when it is not text.
std::string read_text_file(const fs::path& path, const std::string& what) {
  const auto text = detail::read_whole_file(path.string());
  if (!text) throw NotFoundError(fmt::format("{}: cannot read {}", what, path.string()));
  if (auto problem = detail::binary_content(*text)) {
    throw ValidationError(fmt::format("{}: {} is not text ({})", what, path.string(), *problem));
  }
  return *text;
}

Skill read_skill(const detail::JsonField& field, const fs::path& folder) {
  field.expect_object({"name", "title", "when", "advice", "examples"});
  Skill skill;
  skill.name = field["name"].string();
  if (auto title = field.optional("title")) skill.title = title->string();
  const detail::JsonField when = field["when"];
  try {
    skill.when = Predicate(when.string());
  } catch (const ValidationError& error) {
    when.fail(error.what());
  }
  skill.advice = field["advice"].string();
  if (auto examples = field.optional("examples")) {
    for (const auto& [language, example] : examples->members()) {
      if (example.json().is_string()) {
        // A file named relative to the bank's file.
        if (folder.empty()) {
          example.fail("an example file needs a bank loaded from a file; give the code inline as {\"code\": \"...\"}");
        }
        const fs::path path = folder / example.string();
        fs::path resolved;
        try {
          resolved = detail::path_inside(folder, example.string());
        } catch (const ValidationError& error) {
          example.fail(error.what());
        }
        try {
          skill.examples[language] = read_text_file(resolved, example.origin() + ": " + example.path());
        } catch (const NotFoundError&) {
          example.fail(fmt::format("the example file {} does not exist", path.lexically_normal().string()));
        }
      } else {
        example.expect_object({"code"});
        skill.examples[language] = example["code"].string();
      }
    }
  }
  skill.validate(field.origin() + ": " + field.path());
  return skill;
}

const char* const kBankFile = "skills.json";

}  // namespace

std::string Skill::example(const std::string& language) const {
  auto found = examples.find(language);
  return found != examples.end() ? found->second : std::string();
}

void Skill::validate(const std::string& where) const {
  if (!is_snake_case(name)) {
    throw ValidationError(fmt::format("{}: skill name '{}' must be snake_case (a lower-case letter, then lower-case "
                                      "letters, digits and underscores; at most 64 characters)",
                                      where, name));
  }
  if (detail::trim(advice).empty()) {
    throw ValidationError(fmt::format("{}: skill '{}' has no advice: say what to do", where, name));
  }
  for (const auto& [language, code] : examples) {
    if (find_kernel_language(language) == nullptr) {
      throw ValidationError(fmt::format("{}: skill '{}' has an example in '{}', which is no kernel language; the "
                                        "languages are {}",
                                        where, name, language, kernel_language_names()));
    }
    if (detail::trim(code).empty()) {
      throw ValidationError(fmt::format("{}: skill '{}': its {} example is empty", where, name, language));
    }
  }
}

std::vector<fs::path> skill_search_path() {
#ifdef KERNELSMITH_SOURCE_SKILLS_DIR
  const std::string source_folder = KERNELSMITH_SOURCE_SKILLS_DIR;  // an uninstalled build
#else
  const std::string source_folder;
#endif
  return detail::data_search_path("KERNELSMITH_SKILLS_PATH", "skills", source_folder);
}

SkillBank SkillBank::builtin() {
  // Read once: the bank is data of the package, and every prompt builder of a process shares it.
  static std::mutex mutex;
  static std::optional<SkillBank> cached;
  std::lock_guard<std::mutex> lock(mutex);
  if (!cached) {
    std::error_code error;
    std::string searched;
    for (const fs::path& folder : skill_search_path()) {
      if (fs::is_regular_file(folder / kBankFile, error)) {
        cached = load((folder / kBankFile).string());
        break;
      }
      searched += (searched.empty() ? "" : ", ") + folder.string();
    }
    if (!cached) {
      throw NotFoundError(fmt::format("the built-in skill bank ({}) was not found (searched {}); set "
                                      "KERNELSMITH_SKILLS_PATH to the folder holding it, or give the prompt builder a "
                                      "bank of your own",
                                      kBankFile, searched.empty() ? "no folder" : searched));
    }
  }
  return *cached;
}

SkillBank SkillBank::load(const std::string& path) {
  SkillBank bank;
  bank.load_file(path);
  return bank;
}

std::size_t SkillBank::load_file(const std::string& path) {
  const fs::path file(path);
  const std::string text = read_text_file(file, "skill bank");
  return load_json(text, file.lexically_normal().string(), file.parent_path().lexically_normal());
}

std::size_t SkillBank::load_json(const std::string& json_text, const std::string& origin, const fs::path& folder) {
  const detail::Json json = detail::parse_json(json_text, origin);
  const detail::JsonField root(json, origin);
  root.expect_object({"schema", "version", "description", "skills"});
  const std::string schema = root["schema"].string();
  if (schema != kSkillBankSchema) {
    root["schema"].fail(fmt::format("this build reads skill banks of schema \"{}\", not \"{}\"", kSkillBankSchema,
                                    schema));
  }
  SkillFile file;
  file.path = origin;
  if (auto version = root.optional("version")) file.version = version->string();
  // Read every skill before changing the bank, so that a malformed file leaves it as it was.
  std::vector<Skill> read;
  for (const detail::JsonField& field : root["skills"].elements()) {
    Skill skill = read_skill(field, folder);
    skill.origin = origin;
    for (const Skill& earlier : read) {
      if (earlier.name == skill.name) {
        field.fail(fmt::format("a second skill named '{}' in the same file", skill.name));
      }
    }
    read.push_back(std::move(skill));
  }
  for (Skill& skill : read) add(std::move(skill));
  file.skills = read.size();
  files_.push_back(std::move(file));
  return read.size();
}

void SkillBank::add(Skill skill) {
  skill.validate(skill.origin.empty() ? "<skill>" : skill.origin);
  for (Skill& existing : skills_) {
    if (existing.name == skill.name) {
      existing = std::move(skill);
      return;
    }
  }
  skills_.push_back(std::move(skill));
}

bool SkillBank::remove(const std::string& name) {
  auto found = std::find_if(skills_.begin(), skills_.end(), [&](const Skill& skill) { return skill.name == name; });
  if (found == skills_.end()) return false;
  skills_.erase(found);
  return true;
}

const Skill* SkillBank::find(const std::string& name) const {
  for (const Skill& skill : skills_) {
    if (skill.name == name) return &skill;
  }
  return nullptr;
}

std::vector<Skill> SkillBank::applicable(const Features& features) const {
  std::vector<Skill> holding;
  for (const Skill& skill : skills_) {
    if (skill.applies(features)) holding.push_back(skill);
  }
  return holding;
}

std::string SkillBank::to_json() const {
  detail::Json skills = detail::Json::array();
  for (const Skill& skill : skills_) {
    detail::Json examples = detail::Json::object();
    for (const auto& [language, code] : skill.examples) examples[language] = {{"code", code}};
    skills.push_back({{"name", skill.name},
                      {"title", skill.title},
                      {"when", skill.when.text()},
                      {"advice", skill.advice},
                      {"examples", examples}});
  }
  std::string version;
  for (const SkillFile& file : files_) {
    if (!file.version.empty()) version += (version.empty() ? "" : "+") + file.version;
  }
  detail::Json document = {{"schema", kSkillBankSchema}, {"version", version}, {"skills", skills}};
  return document.dump(2);
}

}  // namespace kernelsmith
