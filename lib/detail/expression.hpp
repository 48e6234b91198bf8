// The integer expression language of launch plans, task shapes and work models
// (docs/candidate-format.md, "Expressions"). evaluate_expression() in launch_plan.hpp is the public
// entry point; the plan parser and the task validator also check syntax alone and list identifiers.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kernelsmith/error.hpp"

namespace kernelsmith::detail {

/// Values of the names an expression may use (the same type as kernelsmith::Bindings).
using Bindings = std::map<std::string, std::int64_t>;

/// A parsed expression, evaluable many times (e.g. once per size configuration).
class Expression {
 public:
  /// Throws PlanError (line 0) naming the column of a syntax error.
  explicit Expression(std::string text);

  /// Throws PlanError for an unknown identifier (listing the known ones), a division by zero or an
  /// int64 overflow.
  std::int64_t evaluate(const Bindings& bindings) const;

  /// The identifiers it refers to (function names excluded), each once, in order of appearance.
  std::vector<std::string> identifiers() const;

  const std::string& text() const { return text_; }

  struct Node {
    enum class Kind { number, identifier, unary, binary, call } kind = Kind::number;
    std::string name;  ///< identifier, operator or function
    std::int64_t value = 0;
    int column = 0;  ///< 1-based
    std::vector<int> children;
  };

 private:
  std::int64_t evaluate_node(int index, const Bindings& bindings) const;

  std::string text_;
  std::vector<Node> nodes_;
  int root_ = -1;
};

/// True for a C identifier: [A-Za-z_][A-Za-z0-9_]*.
bool is_identifier(const std::string& text);

/// Lexing shared with the skill predicates (lib/memory/predicate.cpp): where the identifier that starts at
/// `start` ends (`start` when none starts there), and the two-character operator ("<=", ">=", "==", "!=", "&&",
/// "||") at `position`, or null.
std::size_t identifier_end(const std::string& text, std::size_t start);
const char* two_character_operator(const std::string& text, std::size_t position);

}  // namespace kernelsmith::detail
