// The integer expression language of launch plans, task shapes and work models
// (docs/candidate-format.md, "Expressions"). evaluate_expression() in launch_plan.hpp is the public
// entry point; the plan parser and the task validator also check syntax alone and list identifiers.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
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

/// How deep an expression (and a skill predicate) may nest: parentheses, calls and unary operators within each
/// other, and the length of a chain of binary operators (`a + b + c + ...` is a chain as deep as it is long).
/// Parsing and evaluating recurse once per level, so without a bound a long enough line (5,000 parentheses,
/// a million '-') overflows the stack. Written expressions stay under 20.
constexpr int kMaxExpressionDepth = 256;

/// Bounds a recursive-descent parser of expressions (and of predicates) by kMaxExpressionDepth, both ways it
/// can recurse: nest() counts the parser's own recursion on the way down, add_node() the height of the tree
/// it builds (which the evaluator walks recursively; a loop builds `a + b + c + ...` as deep as it is long).
/// Both throw TooDeep, which the parser turns into its own error with too_deep_message().
class NestingCounter {
 public:
  struct TooDeep {
    int column;  ///< 1-based, where the limit was passed
  };
  /// One level of recursion, left when it is destroyed.
  class Level {
   public:
    explicit Level(int& depth) : depth_(depth) {}
    Level(const Level&) = delete;
    Level& operator=(const Level&) = delete;
    ~Level() { --depth_; }

   private:
    int& depth_;
  };

  [[nodiscard]] Level nest(int column);
  /// Records the node appended next to the parser's node list (nodes are recorded in the order they are
  /// appended, so its index is the number recorded before it), with the indices of its children.
  void add_node(const std::vector<int>& children, int column);

 private:
  int depth_ = 0;
  std::vector<int> heights_;
};

/// "nested deeper than 256 levels (...)": what a TooDeep says, in both parsers' messages.
std::string too_deep_message();

/// `text` for an error message: a long expression is cut (the message gives the column).
std::string quote_for_message(const std::string& text);

/// The names of (column, name) pairs, each once, ordered by the column of its first appearance.
std::vector<std::string> names_in_order(std::vector<std::pair<int, std::string>> found);

/// True for a C identifier: [A-Za-z_][A-Za-z0-9_]*.
bool is_identifier(const std::string& text);

/// Lexing shared with the skill predicates (lib/memory/predicate.cpp): where the identifier that starts at
/// `start` ends (`start` when none starts there), and the two-character operator ("<=", ">=", "==", "!=", "&&",
/// "||") at `position`, or null.
std::size_t identifier_end(const std::string& text, std::size_t start);
const char* two_character_operator(const std::string& text, std::size_t position);

}  // namespace kernelsmith::detail
