// PromptBuilder: turns a MutationRequest into the chat messages an LLM sees (docs/llm.md).
//
// The user message is made of parts: the task, the reference, the hardware, the parent with its
// evaluation, the recent attempts on this parent, the skills whose predicates hold for the request
// (skill_bank.hpp), the experience the engine retrieved (experience.hpp), the inspirations and the
// instruction for the edit mode, which asks the model to name the skill it applied. The system message states the role and the candidate format's rules. Both come from
// templates with {placeholders}, which the caller may replace. A token budget drops the least useful
// parts first and records what it dropped.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <memory>

#include "kernelsmith/export.hpp"
#include "kernelsmith/mutator.hpp"
#include "kernelsmith/skill_bank.hpp"

namespace kernelsmith {

/// One message of a chat conversation ("system", "user" or "assistant").
struct ChatMessage {
  std::string role;
  std::string content;
};

/// The messages as a JSON array of {"role", "content"} objects: what is recorded with each step.
KERNELSMITH_API std::string messages_to_json(const std::vector<ChatMessage>& messages);
/// Reads such an array back. Throws ValidationError naming `origin` on malformed input.
KERNELSMITH_API std::vector<ChatMessage> messages_from_json(const std::string& json_text,
                                                            const std::string& origin = "<messages>");

/// What the LLM is asked to produce.
enum class EditMode {
  full,       ///< the whole revised file
  diff,       ///< SEARCH/REPLACE blocks against the parent's source
  crossover,  ///< one file combining two parents
};

KERNELSMITH_API std::string to_string(EditMode mode);
/// "full", "diff" or "crossover"; throws ValidationError otherwise.
KERNELSMITH_API EditMode parse_edit_mode(const std::string& name);

/// The templates. A placeholder is `{name}` (letters, digits, underscores); `{{` and `}}` are literal
/// braces; any other brace is literal too, so code in a template needs no escaping unless it looks
/// like `{identifier}`. An unknown placeholder is a ValidationError when the builder is made.
///
/// Placeholders of `system`: {language}, {language_name}, {format_rules}.
/// Placeholders of `user`: {task}, {reference}, {hardware}, {parent}, {attempts}, {skills}, {experience},
///   {inspirations}, {instruction}; each expands to a whole section with its heading, or to nothing when empty.
/// Placeholders of the section templates are listed next to each one below; every template may also
/// use {language}, {language_name}, {fence} (the markdown fence tag for the language) and {comment} (the
/// comment marker of its plan lines: "//", or "#" in Triton). The language is the one asked for
/// (MutationRequest::child_language); a program shown in a section is fenced in its own language.
struct KERNELSMITH_API PromptTemplates {
  std::string system;
  std::string user;
  /// {name}, {description}, {tensors}, {sizes}, {work}, {tolerance}, {pytorch}
  std::string task;
  /// {source}
  std::string reference;
  /// {device}
  std::string hardware;
  /// {source}, {evaluation}, {id}
  std::string parent;
  /// {attempts} (one line each, most recent first)
  std::string attempts;
  /// {top} and {diverse}: the rendered inspirations of each kind (empty when none)
  std::string inspirations;
  /// One inspiration: {index}, {id}, {reason}, {metrics}, {source}
  std::string inspiration;
  /// The second parent in crossover: {source}, {id}
  std::string second_parent;
  /// {skills}: the rendered skills that apply
  std::string skills;
  /// One skill: {name}, {title}, {when} (its predicate), {advice}, {example} (the fenced example in the
  /// language asked for, with its heading, or nothing)
  std::string skill;
  /// {items}: the retrieved experience, one line each
  std::string experience;
  std::string full_instruction;
  std::string diff_instruction;
  std::string crossover_instruction;
  /// Follows every instruction: asks the model to name the skill it applied in a <skill>name</skill> tag
  /// (parse_skill_tag). Empty: not asked (every proposal then records "unspecified").
  std::string skill_tag;

  /// The built-in templates.
  static PromptTemplates defaults();
};

/// A concise statement of the candidate format's rules (docs/candidate-format.md) for the language: its
/// kernel rule, its plan comment marker and launch syntax, and an example `@launch` line (language.hpp).
KERNELSMITH_API std::string candidate_format_rules(const std::string& language);

struct PromptBuilderOptions {
  PromptTemplates templates = PromptTemplates::defaults();
  /// Budget for the whole prompt (all messages) in approximate tokens; 0 means no limit.
  std::int64_t max_prompt_tokens = 16000;
  /// Tokens are estimated as characters / chars_per_token.
  double chars_per_token = 4.0;
  /// Peaks of the device, shown to the model when known (GB/s and GFLOP/s).
  std::optional<double> peak_bandwidth_gbps;
  std::optional<double> peak_gflops;
  /// The parent's evaluation text is cut to this many characters before any budget is applied (head
  /// and tail kept); the budget may trim it down to min_evaluation_chars.
  std::size_t max_evaluation_chars = 6000;
  std::size_t min_evaluation_chars = 600;
  /// At most this many recent attempts and inspirations are shown.
  std::size_t max_attempts = 8;
  std::size_t max_inspirations = 6;
  /// The skill bank whose skills are shown when their predicates hold for the request; null: the built-in bank
  /// (SkillBank::builtin()); an empty bank shows none.
  std::shared_ptr<const SkillBank> skills;
  /// At most this many skills (the first that hold, in bank order) and experience items are shown.
  std::size_t max_skills = 3;
  std::size_t max_experience = 3;
  /// Whether a skill shows its example in the language asked for.
  bool skill_examples = true;
};

/// The built prompt and what the budget did to it.
struct BuiltPrompt {
  std::vector<ChatMessage> messages;
  EditMode mode = EditMode::full;
  /// Approximate tokens of all messages (characters / chars_per_token, rounded up).
  std::int64_t estimated_tokens = 0;
  /// What the budget removed or trimmed, in the order it did so, e.g. "diverse inspiration 3 (id …)",
  /// "experience item 2 (id 17)", "example of skill fuse_kernels", "reference source", "parent evaluation
  /// trimmed from 6000 to 1800 characters".
  std::vector<std::string> dropped;
  /// The skills whose predicates held and that the prompt shows, in order.
  std::vector<std::string> skills;
  /// The experience items the prompt shows, by id.
  std::vector<std::int64_t> experience;
  /// True when the prompt is still over budget after every removable part was removed.
  bool over_budget = false;

  std::string messages_json() const { return messages_to_json(messages); }
};

class KERNELSMITH_API PromptBuilder {
 public:
  /// Throws ValidationError when a template uses an unknown placeholder, and what SkillBank::builtin() throws
  /// when options.skills is null and the built-in bank cannot be read.
  explicit PromptBuilder(PromptBuilderOptions options = {});

  /// Builds the messages for one request. Crossover needs request.second_parent (ValidationError
  /// otherwise). Thread-safe (const).
  BuiltPrompt build(const MutationRequest& request, EditMode mode) const;

  const PromptBuilderOptions& options() const { return options_; }
  /// The bank it gates skills from: options.skills, or the built-in bank.
  const SkillBank& skills() const { return *skills_; }

 private:
  PromptBuilderOptions options_;
  std::shared_ptr<const SkillBank> skills_;
};

/// Replaces {placeholders} in `text` (see PromptTemplates). Throws ValidationError naming
/// `template_name` when a placeholder has no value.
KERNELSMITH_API std::string render_template(const std::string& text,
                                            const std::vector<std::pair<std::string, std::string>>& values,
                                            const std::string& template_name);

/// The markdown fence tag for a kernel language: "cuda", "opencl", "cpp" (maca).
KERNELSMITH_API std::string fence_tag(const std::string& language);

}  // namespace kernelsmith
