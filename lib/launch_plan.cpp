// The launch plan parser: `// @directive` (or, in Triton's Python, `# @directive`) comment lines of a
// candidate's source → LaunchPlan.
// The grammar is in docs/candidate-format.md; every message names the directive and what was expected,
// because the LLM that wrote the plan reads it back as feedback.
#include "kernelsmith/launch_plan.hpp"
#include "kernelsmith/device_attributes.hpp"
#include "kernelsmith/language.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <sstream>
#include <utility>

#include "detail/expression.hpp"
#include "detail/text.hpp"

namespace kernelsmith {
namespace {

const std::vector<std::string>& directive_names() {
  static const std::vector<std::string> names = {"launch", "workspace", "specialize", "tune", "require", "tensor_map"};
  return names;
}

using detail::trim;

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// One directive line under parse: its text after "@name" and where it is, for messages.
struct DirectiveLine {
  std::string name;
  std::string rest;
  int line = 0;

  [[noreturn]] void fail(const std::string& what) const {
    throw PlanError(fmt::format("line {}: @{}: {}", line, name, what), line);
  }

  // Syntax-checks an expression, re-raising its error with this line.
  void check_expression(const std::string& expression, const std::string& role) const {
    try {
      detail::Expression parsed(expression);
    } catch (const PlanError& error) {
      fail(fmt::format("{}: {}", role, error.what()));
    }
  }
};

// Splits at commas that are not inside parentheses, braces or brackets.
std::vector<std::string> split_top_level(const std::string& text) {
  std::vector<std::string> parts;
  int depth = 0;
  std::string current;
  for (char c : text) {
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    if (c == ',' && depth == 0) {
      parts.push_back(trim(current));
      current.clear();
    } else {
      current += c;
    }
  }
  parts.push_back(trim(current));
  return parts;
}

// Reads a leading C identifier from `text` at `position`; empty when there is none.
std::string read_identifier(const std::string& text, std::size_t& position) {
  std::size_t start = position;
  if (position < text.size() &&
      (std::isalpha(static_cast<unsigned char>(text[position])) || text[position] == '_')) {
    while (position < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[position])) || text[position] == '_')) {
      ++position;
    }
  }
  return text.substr(start, position - start);
}

void skip_spaces(const std::string& text, std::size_t& position) {
  while (position < text.size() && std::isspace(static_cast<unsigned char>(text[position]))) ++position;
}

// The name a declaration line starts with and the separator after it (`name:` for a workspace, `name =` for a
// tensor map); `position` ends past the separator. `shape` says what the line should look like.
std::string read_declared_name(const DirectiveLine& directive, std::size_t& position, char separator,
                               const char* shape) {
  const std::string& text = directive.rest;
  const std::string name = read_identifier(text, position);
  if (name.empty()) directive.fail(fmt::format("{}; the name is missing", shape));
  skip_spaces(text, position);
  if (position >= text.size() || text[position] != separator) {
    directive.fail(fmt::format("{}; no \"{}\" after the name {}", shape, separator, name));
  }
  ++position;
  return name;
}

// "dim3(x[, y[, z]])" or a single expression → three expressions.
std::array<std::string, 3> parse_dimensions(const DirectiveLine& directive, const std::string& text,
                                            const char* role) {
  std::array<std::string, 3> dims{"1", "1", "1"};
  std::size_t position = 0;
  const std::string word = read_identifier(text, position);
  skip_spaces(text, position);
  if (word == "dim3" && position < text.size() && text[position] == '(') {
    if (text.back() != ')') {
      directive.fail(fmt::format("{} \"{}\": expected dim3(x[, y[, z]]) with nothing after the \")\"", role, text));
    }
    // The closing parenthesis of dim3( must be the last character, not an inner one.
    int depth = 0;
    for (std::size_t i = position; i < text.size(); ++i) {
      if (text[i] == '(') ++depth;
      if (text[i] == ')' && --depth == 0 && i + 1 != text.size()) {
        directive.fail(fmt::format("{} \"{}\": expected dim3(x[, y[, z]]) with nothing after the \")\"", role, text));
      }
    }
    const auto parts = split_top_level(text.substr(position + 1, text.size() - position - 2));
    if (parts.size() > 3 || std::any_of(parts.begin(), parts.end(), [](const auto& p) { return p.empty(); })) {
      directive.fail(fmt::format("{} \"{}\": dim3 takes one to three non-empty expressions", role, text));
    }
    for (std::size_t i = 0; i < parts.size(); ++i) {
      directive.check_expression(parts[i], fmt::format("{} {}", role, "xyz"[i]));
      dims[i] = parts[i];
    }
    return dims;
  }
  directive.check_expression(text, role);
  dims[0] = text;
  return dims;
}

std::size_t keyword_equals(const std::string& text);

LaunchDecl parse_launch(const DirectiveLine& directive) {
  static const char* const kShape = "expected `kernel<<<grid, block[, shared_bytes]>>>(arg, ...)`";
  const std::string& text = directive.rest;
  LaunchDecl launch;
  launch.line = directive.line;
  std::size_t position = 0;
  launch.kernel = read_identifier(text, position);
  if (launch.kernel.empty()) directive.fail(fmt::format("{}; the kernel name is missing", kShape));
  skip_spaces(text, position);
  // Template arguments of a C++ kernel (CUDA): `scale_add<2><<<...>>>`. The name keeps them as written,
  // "scale_add<2>", which the CUDA backend resolves through NVRTC name expressions.
  if (position < text.size() && text[position] == '<' && text.compare(position, 3, "<<<") != 0) {
    const std::size_t open = position;
    int angles = 0;
    int parentheses = 0;
    std::size_t close = std::string::npos;
    for (std::size_t i = open; i < text.size(); ++i) {
      const char c = text[i];
      if (c == '(') ++parentheses;
      if (c == ')') --parentheses;
      if (parentheses != 0) continue;
      if (c == '<') ++angles;
      if (c == '>' && --angles == 0) {
        close = i;
        break;
      }
    }
    if (close == std::string::npos) {
      directive.fail(fmt::format("{}; the template arguments after the kernel name {} are not closed with \">\"",
                                 kShape, launch.kernel));
    }
    const std::string arguments = trim(text.substr(open + 1, close - open - 1));
    if (arguments.empty()) {
      directive.fail(fmt::format("{}; the template argument list of {} is empty", kShape, launch.kernel));
    }
    launch.kernel += "<" + arguments + ">";
    position = close + 1;
    skip_spaces(text, position);
  }
  if (text.compare(position, 3, "<<<") != 0) {
    directive.fail(fmt::format("{}; no \"<<<\" after the kernel name {}", kShape, launch.kernel));
  }
  position += 3;
  // The configuration ends at the first ">>>" outside parentheses.
  std::size_t close = std::string::npos;
  int depth = 0;
  for (std::size_t i = position; i < text.size(); ++i) {
    if (text[i] == '(') ++depth;
    if (text[i] == ')') --depth;
    if (depth == 0 && text.compare(i, 3, ">>>") == 0) {
      close = i;
      break;
    }
  }
  if (close == std::string::npos) directive.fail(fmt::format("{}; no closing \">>>\"", kShape));
  const auto config = split_top_level(text.substr(position, close - position));
  if (config.size() < 2 || config.size() > 3) {
    directive.fail(fmt::format("{}; got {} value(s) between <<< and >>>", kShape, config.size()));
  }
  for (const auto& part : config) {
    if (part.empty()) directive.fail(fmt::format("{}; an empty value between <<< and >>>", kShape));
  }
  launch.grid = parse_dimensions(directive, config[0], "grid");
  launch.block = parse_dimensions(directive, config[1], "block");
  if (config.size() == 3) {
    directive.check_expression(config[2], "shared_bytes");
    launch.shared_bytes = config[2];
  }

  position = close + 3;
  skip_spaces(text, position);
  if (position >= text.size() || text[position] != '(') {
    directive.fail(fmt::format("{}; the argument list \"(...)\" after \">>>\" is missing", kShape));
  }
  std::size_t args_open = position;
  std::size_t args_close = std::string::npos;
  depth = 0;
  for (std::size_t i = args_open; i < text.size(); ++i) {
    if (text[i] == '(') ++depth;
    if (text[i] == ')' && --depth == 0) {
      args_close = i;
      break;
    }
  }
  if (args_close == std::string::npos) directive.fail(fmt::format("{}; the argument list is not closed", kShape));
  std::string after = trim(text.substr(args_close + 1));
  if (!after.empty() && after.back() == ';') after = trim(after.substr(0, after.size() - 1));
  if (!after.empty()) {
    // The one launch option: a thread-block cluster shape, `cluster=dim3(2, 1, 1)` or `cluster=2`.
    const std::size_t equals = keyword_equals(after);
    if (equals == std::string::npos || trim(after.substr(0, equals)) != "cluster") {
      directive.fail(fmt::format("unexpected text \"{}\" after the argument list; the only launch option is a "
                                 "thread-block cluster, `cluster=dim3(x[, y[, z]])`",
                                 after));
    }
    const std::string shape = trim(after.substr(equals + 1));
    if (shape.empty()) directive.fail("cluster= has no value; write e.g. `cluster=dim3(2, 1, 1)`");
    launch.cluster = parse_dimensions(directive, shape, "cluster");
  }
  const std::string inner = trim(text.substr(args_open + 1, args_close - args_open - 1));
  if (!inner.empty()) {
    launch.args = split_top_level(inner);
    for (std::size_t i = 0; i < launch.args.size(); ++i) {
      if (launch.args[i].empty()) directive.fail(fmt::format("argument {} is empty", i + 1));
      directive.check_expression(launch.args[i], fmt::format("argument {}", i + 1));
    }
  }
  return launch;
}

// The position of the bracket that closes the one at `open` (same kind), or npos.
std::size_t matching_close(const std::string& text, std::size_t open) {
  int depth = 0;
  for (std::size_t i = open; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '(' || c == '[' || c == '{') ++depth;
    if ((c == ')' || c == ']' || c == '}') && --depth == 0) return i;
  }
  return std::string::npos;
}

// Where a keyword argument's name ends: `NAME = expr` (but not `==`), else npos.
std::size_t keyword_equals(const std::string& text) {
  std::size_t position = 0;
  if (read_identifier(text, position).empty()) return std::string::npos;
  skip_spaces(text, position);
  if (position < text.size() && text[position] == '=' && (position + 1 >= text.size() || text[position + 1] != '=')) {
    return position;
  }
  return std::string::npos;
}

// Triton: `kernel[grid_x, grid_y?, grid_z?](arg, ..., NAME=expr, ...) num_warps=W num_stages=S`.
LaunchDecl parse_triton_launch(const DirectiveLine& directive) {
  static const char* const kShape =
      "expected `kernel[grid_x, grid_y?, grid_z?](arg, ..., NAME=value, ...) num_warps=W num_stages=S`";
  const std::string& text = directive.rest;
  LaunchDecl launch;
  launch.line = directive.line;
  launch.num_warps = "4";
  launch.num_stages = "3";
  std::size_t position = 0;
  launch.kernel = read_identifier(text, position);
  if (launch.kernel.empty()) directive.fail(fmt::format("{}; the kernel name is missing", kShape));
  skip_spaces(text, position);
  if (text.compare(position, 3, "<<<") == 0) {
    directive.fail(fmt::format("{}; a Triton launch gives its grid in [...] after the name, not <<<...>>>", kShape));
  }
  if (position >= text.size() || text[position] != '[') {
    directive.fail(fmt::format("{}; no \"[grid]\" after the kernel name {}", kShape, launch.kernel));
  }
  const std::size_t grid_close = matching_close(text, position);
  if (grid_close == std::string::npos) directive.fail(fmt::format("{}; the grid \"[...\" is not closed", kShape));
  const auto grid = split_top_level(text.substr(position + 1, grid_close - position - 1));
  if (grid.size() > 3 || std::any_of(grid.begin(), grid.end(), [](const auto& part) { return part.empty(); })) {
    directive.fail(fmt::format("{}; the grid takes one to three non-empty expressions, got \"[{}]\"", kShape,
                               text.substr(position + 1, grid_close - position - 1)));
  }
  for (std::size_t i = 0; i < grid.size(); ++i) {
    directive.check_expression(grid[i], fmt::format("grid {}", "xyz"[i]));
    launch.grid[i] = grid[i];
  }

  position = grid_close + 1;
  skip_spaces(text, position);
  if (position >= text.size() || text[position] != '(') {
    directive.fail(fmt::format("{}; the argument list \"(...)\" after the grid is missing", kShape));
  }
  const std::size_t args_close = matching_close(text, position);
  if (args_close == std::string::npos) directive.fail(fmt::format("{}; the argument list is not closed", kShape));
  const std::string inner = trim(text.substr(position + 1, args_close - position - 1));
  if (!inner.empty()) {
    const auto args = split_top_level(inner);
    for (std::size_t i = 0; i < args.size(); ++i) {
      const std::string& arg = args[i];
      if (arg.empty()) directive.fail(fmt::format("argument {} is empty", i + 1));
      const std::size_t equals = keyword_equals(arg);
      if (equals == std::string::npos) {
        if (!launch.constexprs.empty()) {
          directive.fail(fmt::format("argument {} (\"{}\") comes after the keyword argument {}: positional "
                                     "arguments first, then the constexpr parameters as NAME=value",
                                     i + 1, arg, launch.constexprs.back().first));
        }
        directive.check_expression(arg, fmt::format("argument {}", i + 1));
        launch.args.push_back(arg);
        continue;
      }
      std::string name = trim(arg.substr(0, equals));
      std::string value = trim(arg.substr(equals + 1));
      if (value.empty()) directive.fail(fmt::format("the keyword argument {} has no value", name));
      for (const auto& [other, unused] : launch.constexprs) {
        if (other == name) directive.fail(fmt::format("the keyword argument {} is given twice", name));
      }
      directive.check_expression(value, fmt::format("keyword argument {}", name));
      launch.constexprs.emplace_back(std::move(name), std::move(value));
    }
  }

  // Launch options: `name=expr` pairs separated by spaces; a value ends where the next `name=` begins.
  std::string options = trim(text.substr(args_close + 1));
  std::vector<std::string> seen;
  while (!options.empty()) {
    const std::size_t equals = keyword_equals(options);
    if (equals == std::string::npos) {
      directive.fail(fmt::format("unexpected text \"{}\" after the argument list; expected num_warps=W and "
                                 "num_stages=S",
                                 options));
    }
    const std::string name = trim(options.substr(0, equals));
    std::size_t end = options.size();
    int depth = 0;
    for (std::size_t i = equals + 1; i < options.size(); ++i) {
      const char c = options[i];
      if (c == '(' || c == '[') ++depth;
      if (c == ')' || c == ']') --depth;
      if (depth == 0 && std::isspace(static_cast<unsigned char>(c)) &&
          keyword_equals(trim(options.substr(i))) != std::string::npos) {
        end = i;
        break;
      }
    }
    const std::string value = trim(options.substr(equals + 1, end - equals - 1));
    if (name != "num_warps" && name != "num_stages") {
      directive.fail(fmt::format("unknown launch option {}; the options are num_warps (default 4) and num_stages "
                                 "(default 3)",
                                 name));
    }
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
      directive.fail(fmt::format("the option {} is given twice", name));
    }
    seen.push_back(name);
    if (value.empty()) directive.fail(fmt::format("the option {} has no value", name));
    directive.check_expression(value, name);
    (name == "num_warps" ? launch.num_warps : launch.num_stages) = value;
    options = trim(options.substr(end));
  }
  // The block is what the compiled kernel requires (.reqntid): 32 threads per warp.
  launch.block = {"32 * (" + launch.num_warps + ")", "1", "1"};
  return launch;
}

// Workspaces and tensor maps share one set of names (a launch argument names either): `name`, declared as a
// `kind` ("workspace" or "tensor map"), must not be taken by an earlier declaration of either.
void check_name_unused(const DirectiveLine& directive, const LaunchPlan& plan, const std::string& name,
                       const std::string& kind) {
  const auto taken = [&](const std::string& other_kind, int line) {
    directive.fail(other_kind == kind ? fmt::format("{} {} is already declared on line {}", kind, name, line)
                                      : fmt::format("{} is already the name of the {} on line {}", name, other_kind, line));
  };
  for (const auto& workspace : plan.workspaces) {
    if (workspace.name == name) taken("workspace", workspace.line);
  }
  for (const auto& map : plan.tensor_maps) {
    if (map.name == name) taken("tensor map", map.line);
  }
}

WorkspaceDecl parse_workspace(const DirectiveLine& directive, const LaunchPlan& plan) {
  static const char* const kShape = "expected `name: dtype[count]`, e.g. `partial: float32[ceil_div(N, 256)]`";
  const std::string& text = directive.rest;
  WorkspaceDecl workspace;
  workspace.line = directive.line;
  std::size_t position = 0;
  workspace.name = read_declared_name(directive, position, ':', kShape);
  const std::size_t open = text.find('[', position);
  if (open == std::string::npos || text.back() != ']') {
    directive.fail(fmt::format("{}; the element count in [...] must end the line", kShape));
  }
  const std::string dtype_name = trim(text.substr(position, open - position));
  try {
    workspace.dtype = parse_dtype(dtype_name);
  } catch (const ValidationError& error) {
    directive.fail(error.what());
  }
  workspace.count = trim(text.substr(open + 1, text.size() - open - 2));
  if (workspace.count.empty()) directive.fail(fmt::format("{}; the element count is empty", kShape));
  directive.check_expression(workspace.count, "count");
  check_name_unused(directive, plan, workspace.name, "workspace");
  return workspace;
}

// `NAME = buffer[d0, ...] box[b0, ...] [strides[...]] [element_strides[...]] [swizzle=...] [interleave=...]
// [l2_promotion=...] [oob_fill=...]`. What depends on the task (the buffer, the values) is checked when the
// plan is bound; here the shape of the line and the rules that need no value (docs/candidate-format.md).
TensorMapDecl parse_tensor_map(const DirectiveLine& directive, const LaunchPlan& plan) {
  static const char* const kShape =
      "expected `NAME = tensor[dims...] box[sizes...] [strides[...]] [element_strides[...]] [swizzle=128B] "
      "[interleave=none] [l2_promotion=128B] [oob_fill=zero] [when(condition)]`, e.g. `a_tiles = A[K, M] box[64, 128] swizzle=128B`";
  const std::string& text = directive.rest;
  TensorMapDecl map;
  map.line = directive.line;
  std::size_t position = 0;
  map.name = read_declared_name(directive, position, '=', kShape);
  skip_spaces(text, position);
  map.buffer = read_identifier(text, position);
  if (map.buffer.empty()) directive.fail(fmt::format("{}; the tensor or workspace it maps is missing", kShape));

  // A bracketed list of non-empty expressions starting at `position` (which must be at "["), each checked.
  const auto read_list = [&](const std::string& what) {
    if (position >= text.size() || text[position] != '[') {
      directive.fail(fmt::format("{}; expected \"[\" after {}", kShape, what));
    }
    const std::size_t close = matching_close(text, position);
    if (close == std::string::npos) directive.fail(fmt::format("{}; the list of {} is not closed with \"]\"", kShape, what));
    const auto items = split_top_level(text.substr(position + 1, close - position - 1));
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (items[i].empty()) directive.fail(fmt::format("{}: entry {} is empty", what, i + 1));
      directive.check_expression(items[i], fmt::format("{} entry {}", what, i + 1));
    }
    position = close + 1;
    return items;
  };
  map.dims = read_list(fmt::format("the dimensions of {}", map.buffer));
  const std::size_t rank = map.dims.size();
  if (rank > 5) directive.fail(fmt::format("{} dimensions; a tensor map has 1 to 5", rank));

  static const std::vector<std::pair<std::string, std::vector<std::string>>> choices = {
      {"swizzle", {"none", "32B", "64B", "128B"}},
      {"interleave", {"none", "16B", "32B"}},
      {"l2_promotion", {"none", "64B", "128B", "256B"}},
      {"oob_fill", {"zero", "nan"}}};
  std::vector<std::string> seen;
  bool has_box = false;
  for (skip_spaces(text, position); position < text.size(); skip_spaces(text, position)) {
    const std::size_t start = position;
    const std::string key = read_identifier(text, position);
    if (key.empty()) directive.fail(fmt::format("unexpected text \"{}\"; {}", text.substr(start), kShape));
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      directive.fail(fmt::format("{} is given twice", key));
    }
    seen.push_back(key);
    skip_spaces(text, position);
    if (key == "when") {
      if (position >= text.size() || text[position] != '(') directive.fail("expected `when(expression)`");
      const std::size_t close = matching_close(text, position);
      if (close == std::string::npos) directive.fail("the condition of when( is not closed with \")\"");
      map.condition = trim(text.substr(position + 1, close - position - 1));
      if (map.condition.empty()) directive.fail("when() has no condition, e.g. `when(K % 8 == 0)`");
      directive.check_expression(map.condition, "the condition");
      position = close + 1;
      continue;
    }
    if (key == "box" || key == "strides" || key == "element_strides") {
      auto items = read_list(key);
      const std::size_t expected = key == "strides" ? rank - 1 : rank;
      if (items.size() != expected) {
        directive.fail(fmt::format("{} has {} entr{}; a rank-{} map takes {} ({}innermost first)", key, items.size(),
                                   items.size() == 1 ? "y" : "ies", rank, expected,
                                   key == "strides" ? "one per dimension after the first, " : "one per dimension, "));
      }
      (key == "box" ? map.box : key == "strides" ? map.strides : map.element_strides) = std::move(items);
      has_box = has_box || key == "box";
      continue;
    }
    const auto choice = std::find_if(choices.begin(), choices.end(), [&](const auto& c) { return c.first == key; });
    if (choice == choices.end()) {
      directive.fail(fmt::format("unknown option {}; the options are box[...], strides[...], element_strides[...], "
                                 "swizzle=, interleave=, l2_promotion=, oob_fill= and when(...)",
                                 key));
    }
    if (position >= text.size() || text[position] != '=') directive.fail(fmt::format("expected \"=\" after {}", key));
    ++position;
    skip_spaces(text, position);
    const std::size_t value_start = position;
    while (position < text.size() && !std::isspace(static_cast<unsigned char>(text[position]))) ++position;
    std::string value = text.substr(value_start, position - value_start);
    // Byte sizes are written 128B; 128b is accepted as the same.
    if (!value.empty() && value.back() == 'b' && std::isdigit(static_cast<unsigned char>(value.front()))) value.back() = 'B';
    const auto& allowed = choice->second;
    if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
      directive.fail(fmt::format("{}={} is not one of {}", key, value, fmt::join(allowed, ", ")));
    }
    (key == "swizzle"       ? map.swizzle
     : key == "interleave"  ? map.interleave
     : key == "l2_promotion" ? map.l2_promotion
                             : map.oob_fill) = value;
  }
  if (!has_box) directive.fail(fmt::format("the box (the tile one copy moves) is missing; {}", kShape));
  if (map.interleave != "none" && rank < 3) {
    directive.fail(fmt::format("interleave={} needs a map of rank 3 or more; this one has {}", map.interleave, rank));
  }
  if (map.interleave == "32B" && map.swizzle != "32B") {
    directive.fail("interleave=32B needs swizzle=32B (cuTensorMapEncodeTiled's rule)");
  }
  check_name_unused(directive, plan, map.name, "tensor map");
  return map;
}

// An optionally signed decimal integer, the whole of `text`.
bool parse_integer(const std::string& text, std::int64_t& value) {
  std::istringstream stream(text);
  stream >> value;
  return !stream.fail() && stream.eof() && !text.empty() &&
         (std::isdigit(static_cast<unsigned char>(text.back())) != 0);
}

TunableParam parse_tune(const DirectiveLine& directive, const LaunchPlan& plan) {
  static const char* const kShape = "expected `NAME = value in {v1, v2, ...}`, e.g. `BLOCK = 256 in {128, 256, 512}`";
  const std::string& text = directive.rest;
  TunableParam param;
  param.line = directive.line;
  std::size_t position = 0;
  param.name = read_identifier(text, position);
  if (param.name.empty()) directive.fail(fmt::format("{}; the name is missing", kShape));
  if (is_device_attribute(param.name)) {
    directive.fail(fmt::format("{} is a device attribute; choose another name", param.name));
  }
  skip_spaces(text, position);
  if (position >= text.size() || text[position] != '=') {
    directive.fail(fmt::format("{}; no \"=\" after {}", kShape, param.name));
  }
  ++position;
  const std::size_t in_keyword = text.find(" in ", position);
  const std::size_t brace = text.find('{', position);
  if (in_keyword == std::string::npos || brace == std::string::npos || brace < in_keyword ||
      trim(text.substr(in_keyword + 4, brace - in_keyword - 4)) != "" || text.back() != '}') {
    directive.fail(fmt::format("{}; the allowed values in {{...}} after \"in\" must end the line", kShape));
  }
  const std::string value_text = trim(text.substr(position, in_keyword - position));
  if (!parse_integer(value_text, param.value)) {
    directive.fail(fmt::format("{}; the value \"{}\" is not an integer", kShape, value_text));
  }
  const auto items = split_top_level(text.substr(brace + 1, text.size() - brace - 2));
  for (const auto& item : items) {
    std::int64_t value = 0;
    if (!parse_integer(item, value)) {
      directive.fail(fmt::format("{}; the allowed value \"{}\" is not an integer", kShape, item));
    }
    if (std::find(param.values.begin(), param.values.end(), value) != param.values.end()) {
      directive.fail(fmt::format("the allowed value {} is listed twice", value));
    }
    param.values.push_back(value);
  }
  if (std::find(param.values.begin(), param.values.end(), param.value) == param.values.end()) {
    directive.fail(fmt::format("the value {} of {} is not among its allowed values {{{}}}", param.value,
                               param.name, fmt::join(param.values, ", ")));
  }
  for (const auto& other : plan.tunables) {
    if (other.name == param.name) {
      directive.fail(fmt::format("{} is already declared on line {}", param.name, other.line));
    }
  }
  return param;
}

}  // namespace

LaunchPlan LaunchPlan::parse(const std::string& source, const std::string& language_name) {
  const KernelLanguage& language = kernel_language(language_name);
  const std::string& comment = language.plan_comment;
  const bool triton_launch = language.launch_syntax == LaunchSyntax::subscript;
  LaunchPlan plan;
  std::istringstream lines(source);
  std::string raw;
  int line_number = 0;
  while (std::getline(lines, raw)) {
    ++line_number;
    // A directive is a line comment of its own: optional spaces, the comment marker ("//" or "#", which
    // may repeat), optional spaces, "@name".
    std::size_t position = 0;
    skip_spaces(raw, position);
    if (raw.compare(position, comment.size(), comment) != 0) continue;
    while (position < raw.size() && raw[position] == comment.front()) ++position;
    skip_spaces(raw, position);
    if (position >= raw.size() || raw[position] != '@') continue;
    ++position;
    DirectiveLine directive;
    directive.line = line_number;
    directive.name = read_identifier(raw, position);
    directive.rest = trim(raw.substr(position));
    const auto& known = directive_names();
    if (std::find(known.begin(), known.end(), directive.name) == known.end()) {
      // Doxygen tags (@brief, @param) are ignored; a near miss of a directive is a mistake.
      std::string lowered = directive.name;
      std::transform(lowered.begin(), lowered.end(), lowered.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      for (const auto& name : known) {
        if (edit_distance(lowered, name) <= 2) {
          throw PlanError(fmt::format("line {}: unknown directive @{}; did you mean @{}? The directives are "
                                      "@launch, @workspace, @specialize, @tune, @require and @tensor_map",
                                      line_number, directive.name, name),
                          line_number);
        }
      }
      continue;
    }
    if (directive.name == "launch") {
      plan.launches.push_back(triton_launch ? parse_triton_launch(directive) : parse_launch(directive));
    } else if (directive.name == "workspace") {
      plan.workspaces.push_back(parse_workspace(directive, plan));
    } else if (directive.name == "specialize") {
      if (!directive.rest.empty()) directive.fail(fmt::format("takes no arguments; got \"{}\"", directive.rest));
      if (triton_launch) {
        directive.fail("is not used in Triton: pass a size to a tl.constexpr parameter by keyword in the launch "
                       "(`N=N`) to compile a kernel for each size configuration");
      }
      plan.specialize = true;
    } else if (directive.name == "tune") {
      plan.tunables.push_back(parse_tune(directive, plan));
    } else if (directive.name == "tensor_map") {
      if (triton_launch) {
        directive.fail("is not used in Triton: build TMA descriptors inside the kernel with "
                       "tl.make_tensor_descriptor instead");
      }
      plan.tensor_maps.push_back(parse_tensor_map(directive, plan));
    } else if (directive.name == "require") {
      if (directive.rest.empty()) directive.fail("expected an expression, e.g. `@require BLOCK <= MAX_THREADS_PER_BLOCK`");
      directive.check_expression(directive.rest, "expression");
      plan.requirements.push_back(directive.rest);
      plan.requirement_lines.push_back(directive.line);
    }
  }
  if (plan.launches.empty()) {
    throw PlanError(fmt::format("the source declares no launch: add a line such as `{}` (see docs/candidate-format.md)",
                                language.launch_example),
                    0);
  }
  return plan;
}

std::int64_t evaluate_expression(const std::string& expression, const Bindings& bindings) {
  return detail::Expression(expression).evaluate(bindings);
}

}  // namespace kernelsmith
