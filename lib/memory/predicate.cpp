// Recursive-descent parser, type checker and three-valued evaluator of skill predicates. Types are fixed
// when the predicate is parsed (each feature's kind comes from the catalog), so evaluation cannot meet a
// type error; it can only meet a missing feature, which makes the result unknown.
#include "kernelsmith/predicate.hpp"

#include <algorithm>
#include <cctype>
#include <locale>
#include <sstream>

#include <fmt/format.h>

#include "detail/expression.hpp"
#include "kernelsmith/error.hpp"

namespace kernelsmith {

namespace {

enum class Type { number, text, condition };

const char* type_name(Type type) {
  switch (type) {
    case Type::number: return "a number";
    case Type::text: return "a label";
    case Type::condition: return "a condition";
  }
  return "a value";
}

struct Token {
  enum class Kind { number, text, name, op, end } kind = Kind::end;
  std::string text;
  double value = 0.0;
  int column = 0;  // 1-based
};

struct Node {
  enum class Kind { number, text, boolean, feature, negate, arithmetic, compare, logical_not, logical } kind =
      Kind::number;
  Type type = Type::number;
  std::string name;  // feature, operator ("+", "<", "and", ...) or string literal
  double value = 0.0;
  int column = 0;
  std::vector<int> children;
};

}  // namespace

struct Predicate::Impl {
  std::string text;
  std::vector<Node> nodes;
  int root = -1;
};

namespace {

[[noreturn]] void fail(const std::string& text, int column, const std::string& what) {
  throw ValidationError(fmt::format("predicate \"{}\": column {}: {}", detail::quote_for_message(text), column, what));
}

std::string describe(const Token& token) {
  if (token.kind == Token::Kind::end) return "the end";
  if (token.kind == Token::Kind::text) return fmt::format("the string '{}'", token.text);
  return fmt::format("\"{}\"", token.text);
}

double parse_number(const std::string& digits) {
  std::istringstream stream(digits);
  stream.imbue(std::locale::classic());
  double value = 0.0;
  stream >> value;
  return value;
}

std::vector<Token> tokenize(const std::string& text) {
  std::vector<Token> tokens;
  std::size_t i = 0;
  auto is_digit = [&](std::size_t at) { return at < text.size() && std::isdigit(static_cast<unsigned char>(text[at])); };
  while (i < text.size()) {
    const char c = text[i];
    const int column = static_cast<int>(i) + 1;
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (is_digit(i) || (c == '.' && is_digit(i + 1))) {
      const std::size_t start = i;
      while (is_digit(i)) ++i;
      if (i < text.size() && text[i] == '.') {
        ++i;
        while (is_digit(i)) ++i;
      }
      if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
        std::size_t exponent = i + 1;
        if (exponent < text.size() && (text[exponent] == '+' || text[exponent] == '-')) ++exponent;
        if (!is_digit(exponent)) fail(text, column, "a number's exponent has no digits");
        i = exponent;
        while (is_digit(i)) ++i;
      }
      if (i < text.size() && (std::isalpha(static_cast<unsigned char>(text[i])) || text[i] == '_')) {
        fail(text, column, fmt::format("\"{}\" is not a number", text.substr(start, i + 1 - start)));
      }
      const std::string digits = text.substr(start, i - start);
      tokens.push_back({Token::Kind::number, digits, parse_number(digits), column});
      continue;
    }
    if (c == '"' || c == '\'') {
      const std::size_t end = text.find(c, i + 1);
      if (end == std::string::npos) fail(text, column, fmt::format("the string opened here has no closing {}", c));
      tokens.push_back({Token::Kind::text, text.substr(i + 1, end - i - 1), 0.0, column});
      i = end + 1;
      continue;
    }
    if (const std::size_t end = detail::identifier_end(text, i); end > i) {
      tokens.push_back({Token::Kind::name, text.substr(i, end - i), 0.0, column});
      i = end;
      continue;
    }
    if (const char* op = detail::two_character_operator(text, i)) {
      tokens.push_back({Token::Kind::op, op, 0.0, column});
      i += 2;
      continue;
    }
    if (c == '=') fail(text, column, "'=' alone is no operator: compare with ==");
    if (std::string("()<>+-*/!").find(c) != std::string::npos) {
      tokens.push_back({Token::Kind::op, std::string(1, c), 0.0, column});
      ++i;
      continue;
    }
    fail(text, column, fmt::format("unexpected character '{}'", c));
  }
  tokens.push_back({Token::Kind::end, "", 0.0, static_cast<int>(text.size()) + 1});
  return tokens;
}

bool is_comparison(const std::string& op) {
  return op == "<" || op == "<=" || op == ">" || op == ">=" || op == "==" || op == "!=";
}

std::string feature_names() {
  std::string names;
  for (const FeatureInfo& info : feature_catalog()) names += (names.empty() ? "" : ", ") + info.name;
  return names;
}

class Parser {
 public:
  Parser(const std::string& text, std::vector<Node>& nodes) : text_(text), tokens_(tokenize(text)), nodes_(nodes) {}

  int parse() {
    if (peek().kind == Token::Kind::end) fail(text_, 1, "empty predicate (write true for one that always holds)");
    const int root = parse_or();
    if (peek().kind != Token::Kind::end) {
      if (peek().kind == Token::Kind::op && is_comparison(peek().text)) {
        fail(text_, peek().column, "comparisons do not chain: write `a < x and x < b`");
      }
      fail(text_, peek().column, fmt::format("expected and, or or the end; got {}", describe(peek())));
    }
    condition(root, "the predicate");
    return root;
  }

 private:
  const Token& peek() const { return tokens_[position_]; }
  Token next() { return tokens_[position_++]; }
  bool peek_op(const char* op) const { return peek().kind == Token::Kind::op && peek().text == op; }
  bool peek_word(const char* word) const { return peek().kind == Token::Kind::name && peek().text == word; }

  int add(Node node) {
    nesting_.add_node(node.children, node.column);
    nodes_.push_back(std::move(node));
    return static_cast<int>(nodes_.size()) - 1;
  }
  const Node& node(int index) const { return nodes_[static_cast<std::size_t>(index)]; }

  // A number stands for "is not zero" where a condition is expected (`correct and ...`); a label never does.
  void condition(int index, const std::string& role) const {
    if (node(index).type == Type::text) {
      fail(text_, node(index).column,
           fmt::format("{} must be a condition, not a label: compare it, e.g. {} == \"...\"", role,
                       node(index).kind == Node::Kind::feature ? node(index).name : std::string("label")));
    }
  }

  int logical(const char* word, const char* symbol, int (Parser::*operand)()) {
    int left = (this->*operand)();
    while (peek_word(word) || peek_op(symbol)) {
      const Token op = next();
      const int right = (this->*operand)();
      condition(left, fmt::format("the left side of '{}'", op.text));
      condition(right, fmt::format("the right side of '{}'", op.text));
      Node result{Node::Kind::logical, Type::condition, word, 0.0, op.column, {left, right}};
      left = add(std::move(result));
    }
    return left;
  }

  int parse_or() { return logical("or", "||", &Parser::parse_and); }
  int parse_and() { return logical("and", "&&", &Parser::parse_not); }

  int parse_not() {
    if (peek_word("not") || peek_op("!")) {
      const Token op = next();
      const auto level = nesting_.nest(op.column);
      const int operand = parse_not();
      condition(operand, fmt::format("the operand of '{}'", op.text));
      return add({Node::Kind::logical_not, Type::condition, "not", 0.0, op.column, {operand}});
    }
    return parse_comparison();
  }

  int parse_comparison() {
    const int left = parse_sum();
    if (!(peek().kind == Token::Kind::op && is_comparison(peek().text))) return left;
    const Token op = next();
    const int right = parse_sum();
    const Type a = node(left).type, b = node(right).type;
    if (a == Type::condition || b == Type::condition) {
      fail(text_, op.column, fmt::format("'{}' compares numbers or labels, not conditions", op.text));
    }
    if (a != b) {
      fail(text_, op.column,
           fmt::format("'{}' compares {} with {}; a label compares with a string (status == \"ok\"), a number "
                       "with a number",
                       op.text, type_name(a), type_name(b)));
    }
    if (a == Type::text) {
      if (op.text != "==" && op.text != "!=") {
        fail(text_, op.column, fmt::format("labels compare with == and != only, not '{}'", op.text));
      }
      check_label_value(left, right);
      check_label_value(right, left);
    }
    return add({Node::Kind::compare, Type::condition, op.text, 0.0, op.column, {left, right}});
  }

  // `failure == "incorect"` can never hold: a string compared with a feature must be one of its values.
  void check_label_value(int feature, int literal) const {
    const Node& f = node(feature);
    const Node& l = node(literal);
    if (f.kind != Node::Kind::feature || l.kind != Node::Kind::text) return;
    const FeatureInfo* info = find_feature(f.name);
    if (info == nullptr || info->values.empty()) return;
    if (std::find(info->values.begin(), info->values.end(), l.name) != info->values.end()) return;
    std::string values;
    for (const std::string& value : info->values) values += (values.empty() ? "\"" : ", \"") + value + "\"";
    fail(text_, l.column, fmt::format("\"{}\" is not a value of {}; its values are {}", l.name, f.name, values));
  }

  int arithmetic(const char* first, const char* second, int (Parser::*operand)()) {
    int left = (this->*operand)();
    while (peek_op(first) || peek_op(second)) {
      const Token op = next();
      const int right = (this->*operand)();
      for (int side : {left, right}) {
        if (node(side).type != Type::number) {
          fail(text_, op.column, fmt::format("'{}' needs numbers; got {}", op.text, type_name(node(side).type)));
        }
      }
      left = add({Node::Kind::arithmetic, Type::number, op.text, 0.0, op.column, {left, right}});
    }
    return left;
  }

  int parse_sum() { return arithmetic("+", "-", &Parser::parse_product); }
  int parse_product() { return arithmetic("*", "/", &Parser::parse_unary); }

  int parse_unary() {
    if (peek_op("-")) {
      const Token op = next();
      const auto level = nesting_.nest(op.column);
      const int operand = parse_unary();
      if (node(operand).type != Type::number) {
        fail(text_, op.column, fmt::format("'-' needs a number; got {}", type_name(node(operand).type)));
      }
      return add({Node::Kind::negate, Type::number, "-", 0.0, op.column, {operand}});
    }
    return parse_primary();
  }

  int parse_primary() {
    const Token token = next();
    switch (token.kind) {
      case Token::Kind::number: return add({Node::Kind::number, Type::number, token.text, token.value, token.column, {}});
      case Token::Kind::text: return add({Node::Kind::text, Type::text, token.text, 0.0, token.column, {}});
      case Token::Kind::name: {
        if (token.text == "true" || token.text == "false") {
          return add({Node::Kind::boolean, Type::condition, token.text, token.text == "true" ? 1.0 : 0.0,
                      token.column, {}});
        }
        if (token.text == "and" || token.text == "or" || token.text == "not") {
          fail(text_, token.column, fmt::format("expected a feature, a number or a string before '{}'", token.text));
        }
        const FeatureInfo* info = find_feature(token.text);
        if (info == nullptr) {
          fail(text_, token.column,
               fmt::format("unknown feature '{}'; the features are {} (docs/memory.md)", token.text, feature_names()));
        }
        const Type type = info->kind == FeatureKind::number ? Type::number : Type::text;
        return add({Node::Kind::feature, type, token.text, 0.0, token.column, {}});
      }
      case Token::Kind::op:
        if (token.text == "(") {
          const auto level = nesting_.nest(token.column);
          const int inner = parse_or();
          if (!peek_op(")")) {
            fail(text_, peek().column,
                 fmt::format("expected ')' to close the '(' at column {}; got {}", token.column, describe(peek())));
          }
          ++position_;
          return inner;
        }
        break;
      case Token::Kind::end: break;
    }
    fail(text_, token.column, fmt::format("expected a feature, a number, a string or '('; got {}", describe(token)));
  }

  const std::string& text_;
  std::vector<Token> tokens_;
  std::size_t position_ = 0;
  std::vector<Node>& nodes_;
  detail::NestingCounter nesting_;
};

// A value during evaluation; `known` false when a feature it needs is missing.
struct Value {
  bool known = false;
  double number = 0.0;  // numbers, and conditions as 0 or 1
  std::string text;
};

Value evaluate_node(const std::vector<Node>& nodes, int index, const Features& features) {
  const Node& node = nodes[static_cast<std::size_t>(index)];
  auto child = [&](std::size_t which) { return evaluate_node(nodes, node.children[which], features); };
  auto known_number = [](double number) { return Value{true, number, {}}; };
  switch (node.kind) {
    case Node::Kind::number:
    case Node::Kind::boolean: return known_number(node.value);
    case Node::Kind::text: return Value{true, 0.0, node.name};
    case Node::Kind::feature: {
      if (node.type == Type::number) {
        if (auto value = features.number(node.name)) return known_number(*value);
      } else if (auto value = features.label(node.name)) {
        return Value{true, 0.0, *value};
      }
      return Value{};
    }
    case Node::Kind::negate: {
      Value operand = child(0);
      operand.number = -operand.number;
      return operand;
    }
    case Node::Kind::arithmetic: {
      const Value a = child(0), b = child(1);
      if (!a.known || !b.known) return Value{};
      if (node.name == "+") return known_number(a.number + b.number);
      if (node.name == "-") return known_number(a.number - b.number);
      if (node.name == "*") return known_number(a.number * b.number);
      if (b.number == 0.0) return Value{};  // a division by zero says nothing
      return known_number(a.number / b.number);
    }
    case Node::Kind::compare: {
      const Value a = child(0), b = child(1);
      if (!a.known || !b.known) return Value{};
      const bool text = nodes[static_cast<std::size_t>(node.children[0])].type == Type::text;
      const int order = text ? a.text.compare(b.text) : (a.number < b.number ? -1 : a.number > b.number ? 1 : 0);
      bool result = false;
      if (node.name == "==") result = order == 0;
      if (node.name == "!=") result = order != 0;
      if (node.name == "<") result = order < 0;
      if (node.name == "<=") result = order <= 0;
      if (node.name == ">") result = order > 0;
      if (node.name == ">=") result = order >= 0;
      return known_number(result ? 1.0 : 0.0);
    }
    case Node::Kind::logical_not: {
      const Value operand = child(0);
      if (!operand.known) return Value{};
      return known_number(operand.number != 0.0 ? 0.0 : 1.0);
    }
    case Node::Kind::logical: {
      // Kleene's logic: a false side decides `and`, a true side decides `or`, whatever the other side is.
      const bool decisive = node.name != "and";  // the value of a side that decides: false for and, true for or
      const Value a = child(0), b = child(1);
      auto decides = [&](const Value& side) { return side.known && (side.number != 0.0) == decisive; };
      if (decides(a) || decides(b)) return known_number(decisive ? 1.0 : 0.0);
      if (!a.known || !b.known) return Value{};
      return known_number(decisive ? 0.0 : 1.0);
    }
  }
  return Value{};
}

}  // namespace

Predicate::Predicate() : Predicate("true") {}

Predicate::Predicate(std::string text) {
  auto impl = std::make_shared<Impl>();
  impl->text = std::move(text);
  Parser parser(impl->text, impl->nodes);
  try {
    impl->root = parser.parse();
  } catch (const detail::NestingCounter::TooDeep& error) {
    fail(impl->text, error.column, detail::too_deep_message());
  }
  impl_ = std::move(impl);
}

std::optional<bool> Predicate::evaluate(const Features& features) const {
  const Value value = evaluate_node(impl_->nodes, impl_->root, features);
  if (!value.known) return std::nullopt;
  return value.number != 0.0;
}

bool Predicate::holds(const Features& features) const { return evaluate(features).value_or(false); }

std::vector<std::string> Predicate::features() const {
  std::vector<std::pair<int, std::string>> found;
  for (const Node& node : impl_->nodes) {
    if (node.kind == Node::Kind::feature) found.emplace_back(node.column, node.name);
  }
  return detail::names_in_order(std::move(found));
}

const std::string& Predicate::text() const { return impl_->text; }

}  // namespace kernelsmith
