// Recursive-descent parser and evaluator of plan expressions. int64 arithmetic with every overflow
// detected: a launch size that wrapped around would launch garbage instead of failing clearly.
#include "detail/expression.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <set>
#include <utility>

namespace kernelsmith::detail {
namespace {

constexpr std::int64_t kInt64Min = std::numeric_limits<std::int64_t>::min();

struct Token {
  enum class Kind { number, identifier, op, end } kind = Kind::end;
  std::string text;
  std::int64_t value = 0;
  int column = 0;  // 1-based
};

[[noreturn]] void fail(const std::string& expression, const std::string& what) {
  throw PlanError(fmt::format("expression \"{}\": {}", quote_for_message(expression), what), 0);
}

std::string describe(const Token& token) {
  return token.kind == Token::Kind::end ? std::string("the end") : fmt::format("\"{}\"", token.text);
}

std::vector<Token> tokenize(const std::string& text) {
  std::vector<Token> tokens;
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    const int column = static_cast<int>(i) + 1;
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      std::size_t start = i;
      int base = 10;
      if (c == '0' && i + 1 < text.size() && (text[i + 1] == 'x' || text[i + 1] == 'X')) {
        base = 16;
        i += 2;
      }
      std::int64_t value = 0;
      std::size_t digits = 0;
      while (i < text.size() && std::isxdigit(static_cast<unsigned char>(text[i]))) {
        const char d = text[i];
        int digit = 0;
        if (std::isdigit(static_cast<unsigned char>(d))) {
          digit = d - '0';
        } else if (base == 16) {
          digit = std::tolower(static_cast<unsigned char>(d)) - 'a' + 10;
        } else {
          break;
        }
        if (__builtin_mul_overflow(value, base, &value) || __builtin_add_overflow(value, digit, &value)) {
          fail(text, fmt::format("the number at column {} does not fit in int64", column));
        }
        ++digits;
        ++i;
      }
      if (digits == 0) fail(text, fmt::format("hexadecimal number without digits at column {}", column));
      if (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_')) {
        fail(text, fmt::format("syntax error at column {}: \"{}\" is not an integer (suffixes such as u, l "
                               "and f and floating-point numbers are not part of the expression language)",
                               column, text.substr(start, i + 1 - start)));
      }
      tokens.push_back({Token::Kind::number, text.substr(start, i - start), value, column});
      continue;
    }
    if (const std::size_t end = identifier_end(text, i); end > i) {
      tokens.push_back({Token::Kind::identifier, text.substr(i, end - i), 0, column});
      i = end;
      continue;
    }
    if (const char* op = two_character_operator(text, i)) {
      tokens.push_back({Token::Kind::op, op, 0, column});
      i += 2;
      continue;
    }
    if (std::string("+-*/%()<>!,").find(c) != std::string::npos) {
      tokens.push_back({Token::Kind::op, std::string(1, c), 0, column});
      ++i;
      continue;
    }
    fail(text, fmt::format("syntax error at column {}: unexpected character '{}'", column, c));
  }
  tokens.push_back({Token::Kind::end, "", 0, static_cast<int>(text.size()) + 1});
  return tokens;
}

// Precedence climbing over a fixed table, loosest first.
const std::vector<std::vector<std::string>>& binary_levels() {
  static const std::vector<std::vector<std::string>> levels = {
      {"||"}, {"&&"}, {"==", "!="}, {"<", "<=", ">", ">="}, {"+", "-"}, {"*", "/", "%"}};
  return levels;
}

struct Function {
  const char* name;
  std::size_t arity;
};
constexpr Function kFunctions[] = {{"ceil_div", 2}, {"round_up", 2}, {"min", 2}, {"max", 2}};

class Parser {
 public:
  Parser(const std::string& text, std::vector<Expression::Node>& nodes)
      : text_(text), tokens_(tokenize(text)), nodes_(nodes) {}

  int parse() {
    if (tokens_.front().kind == Token::Kind::end) fail(text_, "empty expression");
    const int root = parse_level(0);
    if (peek().kind != Token::Kind::end) {
      fail(text_, fmt::format("syntax error at column {}: expected an operator or the end; got {}",
                              peek().column, describe(peek())));
    }
    return root;
  }

 private:
  const Token& peek() const { return tokens_[position_]; }
  Token next() { return tokens_[position_++]; }
  bool peek_op(const char* op) const { return peek().kind == Token::Kind::op && peek().text == op; }

  void expect_op(const char* op, const char* context) {
    if (!peek_op(op)) {
      fail(text_, fmt::format("syntax error at column {}: expected \"{}\" {}; got {}", peek().column, op,
                              context, describe(peek())));
    }
    ++position_;
  }

  int add(Expression::Node node) {
    nesting_.add_node(node.children, node.column);
    nodes_.push_back(std::move(node));
    return static_cast<int>(nodes_.size()) - 1;
  }

  int parse_level(std::size_t level) {
    if (level == binary_levels().size()) return parse_unary();
    int left = parse_level(level + 1);
    for (;;) {
      const auto& ops = binary_levels()[level];
      const Token& token = peek();
      if (token.kind != Token::Kind::op || std::find(ops.begin(), ops.end(), token.text) == ops.end()) {
        return left;
      }
      Token op = next();
      int right = parse_level(level + 1);
      Expression::Node node;
      node.kind = Expression::Node::Kind::binary;
      node.name = op.text;
      node.column = op.column;
      node.children = {left, right};
      left = add(std::move(node));
    }
  }

  int parse_unary() {
    if (peek_op("-") || peek_op("+") || peek_op("!")) {
      Token op = next();
      const auto level = nesting_.nest(op.column);
      int operand = parse_unary();
      Expression::Node node;
      node.kind = Expression::Node::Kind::unary;
      node.name = op.text;
      node.column = op.column;
      node.children = {operand};
      return add(std::move(node));
    }
    return parse_primary();
  }

  int parse_primary() {
    Token token = next();
    if (token.kind == Token::Kind::number) {
      Expression::Node node;
      node.kind = Expression::Node::Kind::number;
      node.value = token.value;
      node.column = token.column;
      return add(std::move(node));
    }
    if (token.kind == Token::Kind::identifier) {
      if (!peek_op("(")) {
        Expression::Node node;
        node.kind = Expression::Node::Kind::identifier;
        node.name = token.text;
        node.column = token.column;
        return add(std::move(node));
      }
      const Function* function = nullptr;
      for (const auto& candidate : kFunctions) {
        if (token.text == candidate.name) function = &candidate;
      }
      if (function == nullptr) {
        fail(text_, fmt::format("unknown function \"{}\" at column {}; the functions are ceil_div(a, b), "
                                "round_up(a, b), min(a, b) and max(a, b)",
                                token.text, token.column));
      }
      ++position_;  // "("
      const auto level = nesting_.nest(token.column);
      std::vector<int> arguments;
      if (!peek_op(")")) {
        arguments.push_back(parse_level(0));
        while (peek_op(",")) {
          ++position_;
          arguments.push_back(parse_level(0));
        }
      }
      expect_op(")", fmt::format("to close the call of {}", token.text).c_str());
      if (arguments.size() != function->arity) {
        fail(text_, fmt::format("{} at column {} takes {} arguments; got {}", token.text, token.column,
                                function->arity, arguments.size()));
      }
      Expression::Node node;
      node.kind = Expression::Node::Kind::call;
      node.name = token.text;
      node.column = token.column;
      node.children = std::move(arguments);
      return add(std::move(node));
    }
    if (token.kind == Token::Kind::op && token.text == "(") {
      const auto level = nesting_.nest(token.column);
      int inner = parse_level(0);
      expect_op(")", "to close the parenthesis");
      return inner;
    }
    fail(text_, fmt::format("syntax error at column {}: expected a number, an identifier or \"(\"; got {}",
                            token.column, describe(token)));
  }

  const std::string& text_;
  std::vector<Token> tokens_;
  std::size_t position_ = 0;
  std::vector<Expression::Node>& nodes_;
  NestingCounter nesting_;
};

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

std::int64_t floor_mod(std::int64_t a, std::int64_t b) {
  if (b == -1) return 0;  // INT64_MIN % -1 is undefined behaviour in C++
  std::int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

std::int64_t ceil_div_of(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) == (b < 0))) ++q;
  return q;
}

}  // namespace

Expression::Expression(std::string text) : text_(std::move(text)) {
  Parser parser(text_, nodes_);
  try {
    root_ = parser.parse();
  } catch (const NestingCounter::TooDeep& error) {
    fail(text_, fmt::format("at column {}: {}", error.column, too_deep_message()));
  }
}

std::vector<std::string> Expression::identifiers() const {
  std::vector<std::pair<int, std::string>> found;
  for (const auto& node : nodes_) {
    if (node.kind == Node::Kind::identifier) found.emplace_back(node.column, node.name);
  }
  return names_in_order(std::move(found));
}

std::int64_t Expression::evaluate(const Bindings& bindings) const { return evaluate_node(root_, bindings); }

std::int64_t Expression::evaluate_node(int index, const Bindings& bindings) const {
  const Node& node = nodes_[static_cast<std::size_t>(index)];
  switch (node.kind) {
    case Node::Kind::number: return node.value;
    case Node::Kind::identifier: {
      auto found = bindings.find(node.name);
      if (found != bindings.end()) return found->second;
      std::string known;
      for (const auto& [name, value] : bindings) {
        known += known.empty() ? name : ", " + name;
      }
      fail(text_, fmt::format("unknown identifier \"{}\" at column {}; known identifiers: {}", node.name,
                              node.column, known.empty() ? "(none)" : known));
    }
    case Node::Kind::unary: {
      const std::int64_t operand = evaluate_node(node.children[0], bindings);
      if (node.name == "!") return operand == 0 ? 1 : 0;
      if (node.name == "+") return operand;
      if (operand == kInt64Min) fail(text_, fmt::format("int64 overflow in the negation at column {}", node.column));
      return -operand;
    }
    case Node::Kind::binary: {
      const std::int64_t left = evaluate_node(node.children[0], bindings);
      // && and || short-circuit, so that `K != 0 && N / K > 4` is safe.
      if (node.name == "&&") {
        return left != 0 && evaluate_node(node.children[1], bindings) != 0 ? 1 : 0;
      }
      if (node.name == "||") {
        return left != 0 || evaluate_node(node.children[1], bindings) != 0 ? 1 : 0;
      }
      const std::int64_t right = evaluate_node(node.children[1], bindings);
      std::int64_t result = 0;
      const auto overflow = [&] {
        fail(text_, fmt::format("int64 overflow in {} {} {} at column {}", left, node.name, right, node.column));
      };
      const auto check_divisor = [&] {
        if (right == 0) {
          fail(text_, fmt::format("division by zero in {} {} {} at column {}", left, node.name, right, node.column));
        }
      };
      if (node.name == "+") {
        if (__builtin_add_overflow(left, right, &result)) overflow();
        return result;
      }
      if (node.name == "-") {
        if (__builtin_sub_overflow(left, right, &result)) overflow();
        return result;
      }
      if (node.name == "*") {
        if (__builtin_mul_overflow(left, right, &result)) overflow();
        return result;
      }
      if (node.name == "/") {
        check_divisor();
        if (left == kInt64Min && right == -1) overflow();
        return floor_div(left, right);
      }
      if (node.name == "%") {
        check_divisor();
        return floor_mod(left, right);
      }
      if (node.name == "<") return left < right ? 1 : 0;
      if (node.name == "<=") return left <= right ? 1 : 0;
      if (node.name == ">") return left > right ? 1 : 0;
      if (node.name == ">=") return left >= right ? 1 : 0;
      if (node.name == "==") return left == right ? 1 : 0;
      if (node.name == "!=") return left != right ? 1 : 0;
      fail(text_, fmt::format("internal error: unknown operator {}", node.name));
    }
    case Node::Kind::call: {
      const std::int64_t a = evaluate_node(node.children[0], bindings);
      const std::int64_t b = evaluate_node(node.children[1], bindings);
      if (node.name == "min") return std::min(a, b);
      if (node.name == "max") return std::max(a, b);
      if (b == 0) {
        fail(text_, fmt::format("division by zero in {}({}, {}) at column {}", node.name, a, b, node.column));
      }
      if (a == kInt64Min && b == -1) {
        fail(text_, fmt::format("int64 overflow in {}({}, {}) at column {}", node.name, a, b, node.column));
      }
      const std::int64_t quotient = ceil_div_of(a, b);
      if (node.name == "ceil_div") return quotient;
      std::int64_t rounded = 0;
      if (__builtin_mul_overflow(quotient, b, &rounded)) {
        fail(text_, fmt::format("int64 overflow in {}({}, {}) at column {}", node.name, a, b, node.column));
      }
      return rounded;
    }
  }
  fail(text_, "internal error: bad expression node");
}

NestingCounter::Level NestingCounter::nest(int column) {
  if (depth_ >= kMaxExpressionDepth) throw TooDeep{column};
  ++depth_;
  return Level(depth_);
}

void NestingCounter::add_node(const std::vector<int>& children, int column) {
  int height = 1;
  for (const int child : children) height = std::max(height, heights_.at(static_cast<std::size_t>(child)) + 1);
  if (height > kMaxExpressionDepth) throw TooDeep{column};
  heights_.push_back(height);
}

std::string too_deep_message() {
  return fmt::format("nested deeper than {} levels (parentheses, calls and unary operators within each other, and "
                     "chains of binary operators, count as levels); write it with fewer levels",
                     kMaxExpressionDepth);
}

std::string quote_for_message(const std::string& text) {
  constexpr std::size_t kShown = 120;
  if (text.size() <= kShown) return text;
  return fmt::format("{}... ({} characters)", text.substr(0, kShown), text.size());
}

std::vector<std::string> names_in_order(std::vector<std::pair<int, std::string>> found) {
  std::sort(found.begin(), found.end());
  std::vector<std::string> names;
  // A set beside the list: a long expression may name many thousands of distinct identifiers.
  std::set<std::string> seen;
  for (auto& [column, name] : found) {
    if (seen.insert(name).second) names.push_back(std::move(name));
  }
  return names;
}

std::size_t identifier_end(const std::string& text, std::size_t start) {
  if (start >= text.size() || !(std::isalpha(static_cast<unsigned char>(text[start])) || text[start] == '_')) {
    return start;
  }
  std::size_t end = start + 1;
  while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_')) ++end;
  return end;
}

const char* two_character_operator(const std::string& text, std::size_t position) {
  static const char* const kOperators[] = {"<=", ">=", "==", "!=", "&&", "||"};
  for (const char* op : kOperators) {
    if (text.compare(position, 2, op) == 0) return op;
  }
  return nullptr;
}

bool is_identifier(const std::string& text) {
  if (text.empty() || !(std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_')) return false;
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

}  // namespace kernelsmith::detail
