// The launch plan parser: `// @directive` comment lines of a candidate's source → LaunchPlan.
// The grammar is in docs/candidate-format.md; every message names the directive and what was expected,
// because the LLM that wrote the plan reads it back as feedback.
#include "kernelsmith/launch_plan.hpp"
#include "kernelsmith/device_attributes.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <sstream>
#include <utility>

#include "detail/expression.hpp"

namespace kernelsmith {
namespace {

const std::vector<std::string>& directive_names() {
  static const std::vector<std::string> names = {"launch", "workspace", "specialize", "tune", "require"};
  return names;
}

std::string trim(const std::string& text) {
  std::size_t begin = 0;
  std::size_t end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return text.substr(begin, end - begin);
}

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
  const std::string after = trim(text.substr(args_close + 1));
  if (!after.empty() && after != ";") {
    directive.fail(fmt::format("unexpected text \"{}\" after the argument list", after));
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

WorkspaceDecl parse_workspace(const DirectiveLine& directive, const LaunchPlan& plan) {
  static const char* const kShape = "expected `name: dtype[count]`, e.g. `partial: float32[ceil_div(N, 256)]`";
  const std::string& text = directive.rest;
  WorkspaceDecl workspace;
  workspace.line = directive.line;
  std::size_t position = 0;
  workspace.name = read_identifier(text, position);
  if (workspace.name.empty()) directive.fail(fmt::format("{}; the name is missing", kShape));
  skip_spaces(text, position);
  if (position >= text.size() || text[position] != ':') {
    directive.fail(fmt::format("{}; no \":\" after the name {}", kShape, workspace.name));
  }
  ++position;
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
  for (const auto& other : plan.workspaces) {
    if (other.name == workspace.name) {
      directive.fail(fmt::format("workspace {} is already declared on line {}", workspace.name, other.line));
    }
  }
  return workspace;
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

LaunchPlan LaunchPlan::parse(const std::string& source) {
  LaunchPlan plan;
  std::istringstream lines(source);
  std::string raw;
  int line_number = 0;
  while (std::getline(lines, raw)) {
    ++line_number;
    // A directive is a line comment of its own: optional spaces, "//", optional spaces, "@name".
    std::size_t position = 0;
    skip_spaces(raw, position);
    if (raw.compare(position, 2, "//") != 0) continue;
    while (position < raw.size() && raw[position] == '/') ++position;
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
                                      "@launch, @workspace, @specialize, @tune and @require",
                                      line_number, directive.name, name),
                          line_number);
        }
      }
      continue;
    }
    if (directive.name == "launch") {
      plan.launches.push_back(parse_launch(directive));
    } else if (directive.name == "workspace") {
      plan.workspaces.push_back(parse_workspace(directive, plan));
    } else if (directive.name == "specialize") {
      if (!directive.rest.empty()) directive.fail(fmt::format("takes no arguments; got \"{}\"", directive.rest));
      plan.specialize = true;
    } else if (directive.name == "tune") {
      plan.tunables.push_back(parse_tune(directive, plan));
    } else if (directive.name == "require") {
      if (directive.rest.empty()) directive.fail("expected an expression, e.g. `@require BLOCK <= MAX_THREADS_PER_BLOCK`");
      directive.check_expression(directive.rest, "expression");
      plan.requirements.push_back(directive.rest);
      plan.requirement_lines.push_back(directive.line);
    }
  }
  if (plan.launches.empty()) {
    throw PlanError(
        "the source declares no launch: add a line such as `// @launch my_kernel<<<ceil_div(N, 256), 256>>>(x, y, N)` "
        "(see docs/candidate-format.md)",
        0);
  }
  return plan;
}

std::int64_t evaluate_expression(const std::string& expression, const Bindings& bindings) {
  return detail::Expression(expression).evaluate(bindings);
}

}  // namespace kernelsmith
