// Response parser: the program in an LLM's answer (docs/llm.md, "Parser rules").
//
// Full answers: the code block holding a kernel and `@launch` lines (markdown fences ```cuda, ```c,
// ```opencl, ```cpp, ```python or bare; several blocks allowed). Given the language asked for, only blocks
// whose fence belongs to a language that writes its plan alike count (language.hpp, same_plan_syntax):
// a ```cuda block is no Triton program. Diff answers: SEARCH/REPLACE blocks applied to the
// parent's source, exact match first, then tolerant of whitespace. Every failure comes back as a reason.
#pragma once

#include <string>
#include <vector>

#include "kernelsmith/export.hpp"
#include "kernelsmith/prompt_builder.hpp"

namespace kernelsmith {

/// One fenced code block of a markdown answer.
struct CodeBlock {
  std::string language;  ///< the fence's info string, lower-cased ("" for a bare fence)
  std::string code;
  bool closed = true;    ///< false when the answer ended inside the block
  int line = 0;          ///< 1-based line of the opening fence
};

/// The fenced code blocks of a markdown text, in order.
KERNELSMITH_API std::vector<CodeBlock> extract_code_blocks(const std::string& text);

/// One SEARCH/REPLACE block of a diff answer.
struct DiffBlock {
  std::string search;
  std::string replace;
  int line = 0;  ///< 1-based line of its `<<<<<<< SEARCH` marker
};

/// The SEARCH/REPLACE blocks of a text. Throws nothing: an incomplete block is reported by
/// parse_response; here it is left out and `incomplete_line` names where it began (0 when none).
KERNELSMITH_API std::vector<DiffBlock> extract_diff_blocks(const std::string& text, int* incomplete_line = nullptr);

struct ParsedResponse {
  bool ok = false;
  /// The program: the chosen code block, or the parent's source with the diff applied.
  std::string source;
  /// Why there is no program, e.g. "no code in the response", "response truncated: ...",
  /// "diff block 2 matched nothing: <first line>".
  std::string failure;
  /// "full" (a whole file) or "diff" (blocks applied); in diff mode an answer holding a whole file
  /// instead of blocks is taken as "full".
  std::string kind;
  /// The text before the code, usually the model's explanation of its idea (at most 2000 characters).
  std::string explanation;
  /// How the answer was read, e.g. "picked block 2 of 3 (has a kernel and @launch lines)",
  /// "diff block 1 matched after normalising whitespace".
  std::vector<std::string> notes;
  /// The skill the answer names in its <skill>name</skill> tag (parse_skill_tag), also when it holds no
  /// program; "unspecified" when it names none (parse_response sets it).
  std::string skill = "unspecified";
};

/// Reads a whole-file answer. `parent_source`, when given, turns an unchanged copy into a failure.
/// `language`, when given, is the language asked for: blocks in a language whose plans are written
/// otherwise are refused, with a message naming both (a ```cuda block when Triton was asked for).
KERNELSMITH_API ParsedResponse parse_full_response(const std::string& text, const std::string& parent_source = "",
                                                   const std::string& language = "");

/// Applies the SEARCH/REPLACE blocks of `text` to `parent_source`, in order.
KERNELSMITH_API ParsedResponse apply_diff_response(const std::string& text, const std::string& parent_source);

/// The skill an answer names in its last <skill>name</skill> tag, lower-cased with spaces and hyphens made
/// underscores; "unspecified" when there is no tag, it is not closed, or what it holds is not a snake_case name
/// (or is "none").
KERNELSMITH_API std::string parse_skill_tag(const std::string& text);

/// Reads an answer given in `mode`: diff applies blocks (falling back to a whole file when the answer
/// has no blocks but a complete program); full and crossover read a whole file, in `language` when given
/// (see parse_full_response). Also reads the skill the answer names (ParsedResponse::skill).
KERNELSMITH_API ParsedResponse parse_response(const std::string& text, EditMode mode, const std::string& parent_source,
                                              const std::string& language = "");

/// True when the code declares a kernel of `language`: `__global__`, `__kernel` or `kernel void` in the C
/// family, `@triton.jit` in Triton; any of them when `language` is "".
KERNELSMITH_API bool contains_kernel(const std::string& code, const std::string& language = "");
/// True when the code has at least one `@launch` line (`// @launch` or `# @launch`).
KERNELSMITH_API bool contains_launch_line(const std::string& code);
/// True when (), [] and {} balance outside comments, strings and character literals; comments and strings
/// are those of `language` (`#` and triple quotes in Python; `//` and `/* */` else).
KERNELSMITH_API bool brackets_balanced(const std::string& code, const std::string& language = "");

}  // namespace kernelsmith
