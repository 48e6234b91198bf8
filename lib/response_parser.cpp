#include "kernelsmith/response_parser.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/format.h>

#include "detail/text.hpp"
#include "kernelsmith/language.hpp"

namespace kernelsmith {

namespace {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    if (end == text.size()) break;
    start = end + 1;
  }
  return lines;
}

std::string join_lines(const std::vector<std::string>& lines, std::size_t begin, std::size_t end) {
  std::string out;
  for (std::size_t i = begin; i < end; ++i) {
    out += lines[i];
    if (i + 1 < end) out += '\n';
  }
  return out;
}

using detail::trim;

std::string trim_right(const std::string& s) {
  std::size_t e = s.size();
  while (e > 0 && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(0, e);
}

std::string leading_whitespace(const std::string& s) {
  std::size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return s.substr(0, i);
}

bool is_blank(const std::string& s) { return trim(s).empty(); }

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Counts the run of `c` at the start of `s`.
std::size_t run_length(const std::string& s, char c) {
  std::size_t n = 0;
  while (n < s.size() && s[n] == c) ++n;
  return n;
}

// A program's text with trailing whitespace removed on each line and at the end: what "unchanged" means.
std::string normalised(const std::string& code) {
  auto lines = split_lines(code);
  std::string out;
  for (auto& line : lines) out += trim_right(line) + "\n";
  return trim(out);
}

std::string finish_source(std::string code) {
  code = trim_right(code);
  // Keep leading blank lines out, but not the indentation of the first real line.
  std::size_t first = 0;
  while (first < code.size() && (code[first] == '\n' || code[first] == '\r')) ++first;
  return code.substr(first) + "\n";
}

std::string clip(const std::string& s, std::size_t max_chars) {
  return s.size() <= max_chars ? s : s.substr(0, max_chars - 3) + "...";
}

// Untagged fences, and every language's own tag and aliases (language.hpp).
const std::set<std::string> kKernelFenceTags = [] {
  std::set<std::string> tags = {""};
  for (const auto& language : kernel_languages()) {
    tags.insert(language.name);
    tags.insert(language.fence_tag);
    tags.insert(language.fence_aliases.begin(), language.fence_aliases.end());
  }
  return tags;
}();

// The languages whose name, fence tag or aliases include `tag` ("cpp" is both CUDA's alias and MACA's tag).
std::vector<const KernelLanguage*> languages_of_fence(const std::string& tag) {
  std::vector<const KernelLanguage*> found;
  for (const auto& language : kernel_languages()) {
    const auto& aliases = language.fence_aliases;
    if (tag == language.name || tag == language.fence_tag ||
        std::find(aliases.begin(), aliases.end(), tag) != aliases.end()) {
      found.push_back(&language);
    }
  }
  return found;
}

// Python-like languages (Triton) comment with '#'; their kernels are decorated functions.
bool is_python_like(const std::string& language) {
  const KernelLanguage* row = find_kernel_language(language);
  return row != nullptr && row->plan_comment == "#";
}

// What declares a kernel, per family: the C family's qualifiers, Triton's decorator; both for "".
std::vector<std::string> kernel_markers(const std::string& language) {
  static const std::vector<std::string> c_family = {"__global__", "__kernel", "kernel void"};
  static const std::vector<std::string> python = {"@triton.jit"};
  static const std::vector<std::string> host_code = {"class ModelNew"};
  if (const KernelLanguage* row = find_kernel_language(language); row != nullptr && row->host_code) return host_code;
  if (language.empty() || find_kernel_language(language) == nullptr) {
    std::vector<std::string> all = c_family;
    all.insert(all.end(), python.begin(), python.end());
    return all;
  }
  return is_python_like(language) ? python : c_family;
}

std::string kernel_description(const std::string& language) {
  if (const KernelLanguage* row = find_kernel_language(language); row != nullptr && row->host_code) {
    return "a class ModelNew";
  }
  if (language.empty() || find_kernel_language(language) == nullptr) {
    return "a __global__, __kernel or @triton.jit function";
  }
  return is_python_like(language) ? "a @triton.jit function" : "a __global__ or __kernel function";
}

bool is_marker(const std::string& trimmed, char c, std::size_t min_run, const char* word) {
  std::size_t n = run_length(trimmed, c);
  if (n < min_run) return false;
  std::string rest = trim(trimmed.substr(n));
  if (word == nullptr) return rest.empty();
  return rest == word;
}

bool is_search_marker(const std::string& line) { return is_marker(trim(line), '<', 5, "SEARCH"); }
bool is_separator(const std::string& line) { return is_marker(trim(line), '=', 5, nullptr); }
bool is_replace_marker(const std::string& line) { return is_marker(trim(line), '>', 5, "REPLACE"); }

// Whether the text looks like it starts with code rather than prose (for answers without fences).
bool starts_like_code(const std::string& text) {
  for (const auto& line : split_lines(text)) {
    std::string t = trim(line);
    if (t.empty()) continue;
    static const char* openers[] = {"//",     "/*",     "#",         "__",    "extern",    "template", "typedef",
                                    "struct", "static", "constexpr", "using", "namespace", "kernel",   "inline",
                                    "const",  "float",  "int",       "void",  "unsigned",  "double",   "half",
                                    "import", "from ",  "@triton"};
    for (const char* opener : openers)
      if (t.rfind(opener, 0) == 0) return true;
    return false;
  }
  return false;
}

}  // namespace

bool contains_kernel(const std::string& code, const std::string& language) {
  const std::vector<std::string> markers = kernel_markers(language);
  return std::any_of(markers.begin(), markers.end(),
                     [&](const std::string& marker) { return code.find(marker) != std::string::npos; });
}

bool contains_launch_line(const std::string& code) {
  for (const auto& line : split_lines(code)) {
    std::string t = trim(line);
    const std::size_t marker = t.rfind("//", 0) == 0 ? 2 : t.rfind("#", 0) == 0 ? 1 : 0;
    if (marker == 0) continue;
    if (trim(t.substr(marker)).rfind("@launch", 0) == 0) return true;
  }
  return false;
}

bool brackets_balanced(const std::string& code, const std::string& language) {
  const bool python = is_python_like(language);
  std::vector<char> stack;
  std::size_t i = 0;
  const std::size_t n = code.size();
  while (i < n) {
    char c = code[i];
    // In Python `//` is floor division; comments start with '#', and strings may be triple-quoted.
    const bool line_comment = python ? c == '#' : c == '/' && i + 1 < n && code[i + 1] == '/';
    if (line_comment) {
      while (i < n && code[i] != '\n') ++i;
      continue;
    }
    if (python && (c == '"' || c == '\'') && code.compare(i, 3, std::string(3, c)) == 0) {
      std::size_t end = code.find(std::string(3, c), i + 3);
      if (end == std::string::npos) return false;  // an unterminated docstring: the text was cut off
      i = end + 3;
      continue;
    }
    if (!python && c == '/' && i + 1 < n && code[i + 1] == '*') {
      std::size_t end = code.find("*/", i + 2);
      if (end == std::string::npos) return false;  // an unterminated comment: the text was cut off
      i = end + 2;
      continue;
    }
    if (c == '"' || c == '\'') {
      char quote = c;
      ++i;
      while (i < n && code[i] != quote && code[i] != '\n') {
        if (code[i] == '\\') ++i;
        ++i;
      }
      if (i >= n) return false;
      ++i;
      continue;
    }
    if (c == '(' || c == '[' || c == '{') stack.push_back(c);
    if (c == ')' || c == ']' || c == '}') {
      char open = c == ')' ? '(' : c == ']' ? '[' : '{';
      if (stack.empty() || stack.back() != open) return false;
      stack.pop_back();
    }
    ++i;
  }
  return stack.empty();
}

std::vector<CodeBlock> extract_code_blocks(const std::string& text) {
  std::vector<CodeBlock> blocks;
  auto lines = split_lines(text);
  std::size_t i = 0;
  while (i < lines.size()) {
    std::string t = trim(lines[i]);
    std::size_t ticks = run_length(t, '`');
    if (ticks < 3) {
      ++i;
      continue;
    }
    CodeBlock block;
    std::string info = trim(t.substr(ticks));
    std::size_t space = info.find_first_of(" \t{");
    block.language = lower(space == std::string::npos ? info : info.substr(0, space));
    block.line = static_cast<int>(i) + 1;
    std::size_t j = i + 1;
    block.closed = false;
    for (; j < lines.size(); ++j) {
      std::string u = trim(lines[j]);
      if (run_length(u, '`') >= ticks && u.find_first_not_of('`') == std::string::npos) {
        block.closed = true;
        break;
      }
    }
    block.code = join_lines(lines, i + 1, j);
    blocks.push_back(std::move(block));
    i = j + 1;
  }
  return blocks;
}

std::vector<DiffBlock> extract_diff_blocks(const std::string& text, int* incomplete_line) {
  std::vector<DiffBlock> blocks;
  if (incomplete_line) *incomplete_line = 0;
  auto lines = split_lines(text);
  enum { outside, in_search, in_replace } state = outside;
  DiffBlock current;
  std::vector<std::string> search, replace;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (state == outside) {
      if (is_search_marker(line)) {
        state = in_search;
        current = DiffBlock{};
        current.line = static_cast<int>(i) + 1;
        search.clear();
        replace.clear();
      }
    } else if (state == in_search) {
      if (is_separator(line)) {
        state = in_replace;
      } else if (is_replace_marker(line) || is_search_marker(line)) {
        // A block without its ======= separator is malformed; report it as incomplete.
        if (incomplete_line && *incomplete_line == 0) *incomplete_line = current.line;
        state = is_search_marker(line) ? in_search : outside;
        if (state == in_search) {
          current = DiffBlock{};
          current.line = static_cast<int>(i) + 1;
          search.clear();
        }
      } else {
        search.push_back(line);
      }
    } else {
      if (is_replace_marker(line)) {
        current.search = join_lines(search, 0, search.size());
        current.replace = join_lines(replace, 0, replace.size());
        blocks.push_back(current);
        state = outside;
      } else {
        replace.push_back(line);
      }
    }
  }
  if (state != outside && incomplete_line && *incomplete_line == 0) *incomplete_line = current.line;
  return blocks;
}

namespace {

// Where a block's fence puts it for an answer asked in `language`.
enum class FenceFit {
  usable,   ///< bare, or a language whose plans are written alike
  foreign,  ///< a kernel language whose plans are written otherwise (```cuda when Triton was asked for)
  other,    ///< not a kernel language (```text, ```json)
};

FenceFit fence_fit(const std::string& tag, const std::string& language) {
  if (language.empty()) return kKernelFenceTags.count(tag) ? FenceFit::usable : FenceFit::other;
  if (tag.empty()) return FenceFit::usable;
  const std::vector<const KernelLanguage*> rows = languages_of_fence(tag);
  if (rows.empty()) return FenceFit::other;
  const bool alike = std::any_of(rows.begin(), rows.end(),
                                 [&](const KernelLanguage* row) { return same_plan_syntax(row->name, language); });
  return alike ? FenceFit::usable : FenceFit::foreign;
}

std::string prompt_label(const std::string& language) {
  const KernelLanguage* row = find_kernel_language(language);
  return row != nullptr ? row->prompt_label : language;
}

// A launch plan where the language has one: a host-code file (ModelNew) has none to look for.
bool has_plan_if_needed(const std::string& code, const std::string& language) {
  const KernelLanguage* row = find_kernel_language(language);
  return (row != nullptr && row->host_code) || contains_launch_line(code);
}

// Why a block in another language is no program of `language`.
std::string foreign_block_failure(const CodeBlock& block, const std::string& language) {
  const KernelLanguage& asked = kernel_language(language);
  return fmt::format(
      "the answer's program is in {} (a ```{} block), but a {} program was asked for: give the whole {} file in a "
      "```{} block",
      languages_of_fence(block.language).front()->prompt_label, block.language, asked.prompt_label,
      asked.prompt_label, asked.fence_tag);
}

}  // namespace

ParsedResponse parse_full_response(const std::string& text, const std::string& parent_source,
                                   const std::string& language) {
  ParsedResponse result;
  result.kind = "full";
  if (!language.empty() && find_kernel_language(language) == nullptr) {
    result.failure = fmt::format("unknown kernel language '{}' asked for; expected one of {}", language,
                                 kernel_language_names());
    return result;
  }
  if (trim(text).empty()) {
    result.failure = "empty response";
    return result;
  }
  auto blocks = extract_code_blocks(text);
  std::string code;
  std::size_t explanation_end = 0;
  bool closed = true;
  int opened_line = 0;
  const CodeBlock* foreign = nullptr;  // the first block in a language other than the one asked for
  if (blocks.empty()) {
    if (contains_kernel(text, language) && has_plan_if_needed(text, language) && starts_like_code(text)) {
      code = text;
      result.notes.push_back("the answer has no code fences; took the whole answer as the program");
    } else {
      result.failure = contains_kernel(text, language)
                           ? "no code block in the response (a kernel appears in prose; put the program in a ``` "
                             "code block)"
                           : "no code in the response";
      return result;
    }
  } else {
    // Blocks in the language asked for, one written alike, or bare first; any non-kernel block when there is
    // none; never a block in a language whose plans are written otherwise.
    std::vector<std::size_t> eligible;
    std::vector<std::size_t> others;
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      switch (fence_fit(blocks[i].language, language)) {
        case FenceFit::usable: eligible.push_back(i); break;
        case FenceFit::other: others.push_back(i); break;
        case FenceFit::foreign:
          if (foreign == nullptr) foreign = &blocks[i];
          break;
      }
    }
    if (eligible.empty()) eligible = others;
    if (eligible.empty()) {
      result.failure = foreign_block_failure(*foreign, language);
      return result;
    }
    auto rank = [&](std::size_t i) {
      const auto& c = blocks[i].code;
      return contains_kernel(c, language) && has_plan_if_needed(c, language) ? 2 : contains_kernel(c, language) ? 1 : 0;
    };
    std::size_t best = eligible.front();
    for (std::size_t i : eligible) {
      int r = rank(i), rb = rank(best);
      // Higher rank wins, then size; on a tie the later block wins (answers show the final version last).
      if (r > rb || (r == rb && blocks[i].code.size() >= blocks[best].code.size())) best = i;
    }
    if (blocks.size() > 1) {
      int r = rank(best);
      result.notes.push_back(fmt::format("picked code block {} of {} ({})", best + 1, blocks.size(),
                                         r == 2   ? "it has a kernel and @launch lines"
                                         : r == 1 ? "it has a kernel"
                                                  : "the largest"));
    }
    code = blocks[best].code;
    closed = blocks[best].closed;
    opened_line = blocks[best].line;
    // The explanation is what precedes the first block.
    auto lines = split_lines(text);
    explanation_end = static_cast<std::size_t>(blocks.front().line - 1);
    result.explanation = clip(trim(join_lines(lines, 0, std::min(explanation_end, lines.size()))), 2000);
  }

  if (!contains_kernel(code, language)) {
    if (foreign != nullptr && contains_kernel(foreign->code)) {
      result.failure = foreign_block_failure(*foreign, language);
    } else if (!language.empty() && contains_kernel(code)) {
      result.failure = fmt::format("the program has no kernel of {} ({}) but kernels of another language: a {} "
                                   "program was asked for",
                                   prompt_label(language), kernel_description(language), prompt_label(language));
    } else {
      result.failure = fmt::format("no code block contains a kernel ({})", kernel_description(language));
    }
    return result;
  }
  if (!closed) {
    if (brackets_balanced(code, language) && has_plan_if_needed(code, language)) {
      result.notes.push_back("the closing fence is missing but the code is complete");
    } else {
      result.failure = fmt::format(
          "response truncated: the code block opened at line {} is not closed and its brackets do not balance "
          "(the answer was probably cut off by the token limit)",
          opened_line);
      return result;
    }
  }
  if (!parent_source.empty() && normalised(code) == normalised(parent_source)) {
    result.failure = "the answer repeats the current program unchanged";
    return result;
  }
  result.source = finish_source(code);
  result.ok = true;
  return result;
}

namespace {

// Finds `search` (lines) in `lines` from `from`, comparing with `equal`; returns [begin, end) or npos.
template <typename Equal>
std::pair<std::size_t, std::size_t> find_lines(const std::vector<std::string>& lines,
                                               const std::vector<std::string>& search, Equal equal,
                                               bool skip_blank_lines) {
  const std::size_t npos = std::string::npos;
  if (search.empty()) return {npos, npos};
  for (std::size_t start = 0; start < lines.size(); ++start) {
    if (skip_blank_lines && is_blank(lines[start])) continue;
    std::size_t i = start, k = 0;
    while (k < search.size() && i < lines.size()) {
      if (skip_blank_lines && is_blank(lines[i])) {
        ++i;
        continue;
      }
      if (skip_blank_lines && is_blank(search[k])) {
        ++k;
        continue;
      }
      if (!equal(lines[i], search[k])) break;
      ++i;
      ++k;
    }
    while (skip_blank_lines && k < search.size() && is_blank(search[k])) ++k;
    if (k == search.size()) return {start, i};
  }
  return {npos, npos};
}

}  // namespace

ParsedResponse apply_diff_response(const std::string& text, const std::string& parent_source) {
  ParsedResponse result;
  result.kind = "diff";
  int incomplete_line = 0;
  auto blocks = extract_diff_blocks(text, &incomplete_line);
  if (incomplete_line != 0) {
    result.failure = fmt::format(
        "response truncated: the diff block at line {} is not complete (it needs a ======= line and a >>>>>>> "
        "REPLACE line)",
        incomplete_line);
    return result;
  }
  if (blocks.empty()) {
    result.failure = "no SEARCH/REPLACE blocks in the response";
    return result;
  }
  {
    auto lines = split_lines(text);
    std::vector<std::string> before;
    for (int i = 0; i < blocks.front().line - 1 && i < static_cast<int>(lines.size()); ++i)
      if (run_length(trim(lines[i]), '`') < 3) before.push_back(lines[i]);
    result.explanation = clip(trim(join_lines(before, 0, before.size())), 2000);
  }

  std::string current = parent_source;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const DiffBlock& block = blocks[b];
    const std::size_t number = b + 1;
    auto search_lines = split_lines(block.search);
    // Blank lines around a SEARCH section carry no meaning.
    while (!search_lines.empty() && is_blank(search_lines.front())) search_lines.erase(search_lines.begin());
    while (!search_lines.empty() && is_blank(search_lines.back())) search_lines.pop_back();
    if (search_lines.empty()) {
      result.failure = fmt::format("diff block {} has an empty SEARCH section (it must quote the lines to replace)",
                                   number);
      return result;
    }
    const std::string search_text = join_lines(search_lines, 0, search_lines.size());
    std::size_t position = current.find(search_text);
    if (position != std::string::npos) {
      std::size_t again = current.find(search_text, position + 1);
      if (again != std::string::npos)
        result.notes.push_back(fmt::format("diff block {} matched several places; replaced the first", number));
      current.replace(position, search_text.size(), block.replace);
      continue;
    }
    // Tolerant matching: first ignoring trailing whitespace and indentation, then also blank lines.
    auto lines = split_lines(current);
    auto equal_trimmed = [](const std::string& a, const std::string& b) { return trim(a) == trim(b); };
    auto range = find_lines(lines, search_lines, equal_trimmed, false);
    const char* how = "after normalising whitespace";
    if (range.first == std::string::npos) {
      range = find_lines(lines, search_lines, equal_trimmed, true);
      how = "after normalising whitespace and blank lines";
    }
    if (range.first == std::string::npos) {
      std::string first_line;
      for (const auto& l : search_lines)
        if (!is_blank(l)) {
          first_line = trim(l);
          break;
        }
      result.failure = fmt::format("diff block {} matched nothing: {}", number, clip(first_line, 120));
      return result;
    }
    result.notes.push_back(fmt::format("diff block {} matched {}", number, how));
    // Re-indent the replacement by the difference between the quoted and the actual indentation.
    std::string quoted_indent = leading_whitespace(search_lines.front());
    std::string actual_indent = leading_whitespace(lines[range.first]);
    std::vector<std::string> replacement = split_lines(block.replace);
    if (block.replace.empty()) replacement.clear();
    if (quoted_indent != actual_indent) {
      for (auto& line : replacement)
        if (!is_blank(line) && line.rfind(quoted_indent, 0) == 0)
          line = actual_indent + line.substr(quoted_indent.size());
    }
    std::vector<std::string> updated(lines.begin(), lines.begin() + static_cast<std::ptrdiff_t>(range.first));
    updated.insert(updated.end(), replacement.begin(), replacement.end());
    updated.insert(updated.end(), lines.begin() + static_cast<std::ptrdiff_t>(range.second), lines.end());
    current = join_lines(updated, 0, updated.size());
  }
  if (normalised(current) == normalised(parent_source)) {
    result.failure = "the diff changes nothing";
    return result;
  }
  result.source = finish_source(current);
  result.ok = true;
  return result;
}

namespace {

ParsedResponse read_program(const std::string& text, EditMode mode, const std::string& parent_source,
                            const std::string& language) {
  if (trim(text).empty()) {
    ParsedResponse result;
    result.kind = mode == EditMode::diff ? "diff" : "full";
    result.failure = "empty response";
    return result;
  }
  int incomplete_line = 0;
  bool has_diff_markers = !extract_diff_blocks(text, &incomplete_line).empty() || incomplete_line != 0;
  if (mode == EditMode::diff) {
    if (has_diff_markers) return apply_diff_response(text, parent_source);
    ParsedResponse full = parse_full_response(text, parent_source, language);
    if (full.ok) {
      full.notes.insert(full.notes.begin(), "no SEARCH/REPLACE blocks; took the whole program in the answer");
      return full;
    }
    if (full.failure == "no code in the response") full.failure = "no SEARCH/REPLACE blocks and no code in the response";
    full.kind = "diff";
    return full;
  }
  // A whole file was asked for; an answer made of diff blocks only is applied to the parent.
  bool has_clean_program = false;
  for (const auto& block : extract_code_blocks(text)) {
    int incomplete = 0;
    if (contains_kernel(block.code, language) && extract_diff_blocks(block.code, &incomplete).empty() && incomplete == 0)
      has_clean_program = true;
  }
  if (has_diff_markers && !has_clean_program) {
    ParsedResponse diff = apply_diff_response(text, parent_source);
    if (diff.ok) diff.notes.insert(diff.notes.begin(), "a whole file was asked for; applied the answer's diff blocks");
    return diff;
  }
  return parse_full_response(text, parent_source, language);
}

}  // namespace

std::string parse_skill_tag(const std::string& text) {
  const std::string unspecified = "unspecified";
  std::string lower = text;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  // The last tag: an answer may quote the instruction's example before giving its own.
  const std::size_t open = lower.rfind("<skill>");
  if (open == std::string::npos) return unspecified;
  const std::size_t begin = open + 7;
  const std::size_t close = lower.find("</skill>", begin);
  if (close == std::string::npos || close - begin > 200) return unspecified;
  std::string name = trim(lower.substr(begin, close - begin));
  // Forgive the usual decorations: quotes and backticks around it, spaces or hyphens inside.
  while (!name.empty() && (name.front() == '`' || name.front() == '"' || name.front() == '\'')) name.erase(0, 1);
  while (!name.empty() && (name.back() == '`' || name.back() == '"' || name.back() == '\'')) name.pop_back();
  for (char& c : name) {
    if (c == ' ' || c == '-') c = '_';
  }
  if (name.empty() || name.size() > 64 || !std::islower(static_cast<unsigned char>(name[0]))) return unspecified;
  for (char c : name) {
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_')) {
      return unspecified;
    }
  }
  if (name == "none" || name == "n_a" || name == "name") return unspecified;
  return name;
}

ParsedResponse parse_response(const std::string& text, EditMode mode, const std::string& parent_source,
                              const std::string& language) {
  ParsedResponse result = read_program(text, mode, parent_source, language);
  result.skill = parse_skill_tag(text);
  return result;
}

}  // namespace kernelsmith
