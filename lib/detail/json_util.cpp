#include "detail/json_util.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernelsmith/error.hpp"

namespace kernelsmith::detail {

void check_json_depth(std::string_view text, const std::string& origin) {
  // A scan of its own rather than nlohmann's parser callback: it knows where the limit was passed (the line
  // and column for the message), and the parse that follows keeps the fast path without callbacks.
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // an escaped character, '"' included
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) {
        const std::size_t line_start = text.rfind('\n', i);
        const std::size_t line = 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + i, '\n'));
        const std::size_t column = line_start == std::string_view::npos ? i + 1 : i - line_start;
        throw ValidationError(fmt::format("{}: line {}, column {}: JSON nested deeper than {} levels (arrays and "
                                          "objects within each other); no document kernelsmith reads is nested "
                                          "that deep, so this one is damaged or hostile",
                                          origin, line, column, kMaxJsonDepth));
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
}

namespace {

template <typename Document>
Document parse_bounded(const std::string& text, const std::string& origin) {
  check_json_depth(text, origin);
  try {
    return Document::parse(text);
  } catch (const nlohmann::json::parse_error& error) {
    // nlohmann's message carries the line and column ("at line 3, column 7").
    std::string what = error.what();
    const auto colon = what.find("]: ");
    throw ValidationError(fmt::format("{}: not valid JSON: {}", origin,
                                      colon == std::string::npos ? what : what.substr(colon + 3)));
  }
}

}  // namespace

Json parse_json(const std::string& text, const std::string& origin) { return parse_bounded<Json>(text, origin); }

nlohmann::json parse_plain_json(const std::string& text, const std::string& origin) {
  return parse_bounded<nlohmann::json>(text, origin);
}

std::string describe_json(const Json& value) {
  std::string text = value.dump();
  constexpr std::size_t kLimit = 60;
  if (text.size() > kLimit) text = text.substr(0, kLimit) + "...";
  const char* kind = value.is_object()  ? "an object "
                     : value.is_array() ? "an array "
                                        : "";
  return kind + text;
}

Json json_number(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return value;
}

JsonField::JsonField(const Json& value, std::string origin, std::string path)
    : value_(&value), origin_(std::move(origin)), path_(std::move(path)) {}

void JsonField::fail(const std::string& message) const {
  if (path_.empty()) throw ValidationError(fmt::format("{}: {}", origin_, message));
  throw ValidationError(fmt::format("{}: {}: {}", origin_, path_, message));
}

void JsonField::fail_expected(const std::string& expected) const {
  fail(fmt::format("expected {}; got {}", expected, describe_json(*value_)));
}

void JsonField::expect_object(std::initializer_list<std::string_view> allowed) const {
  if (!value_->is_object()) fail_expected("an object");
  for (const auto& item : value_->items()) {
    if (std::find(allowed.begin(), allowed.end(), item.key()) == allowed.end()) {
      std::string names;
      for (auto name : allowed) names += fmt::format("{}{}", names.empty() ? "" : ", ", name);
      const std::string where = path_.empty() ? item.key() : path_ + "." + item.key();
      throw ValidationError(fmt::format("{}: {}: unknown field (a typo?); the fields here are: {}", origin_,
                                        where, names));
    }
  }
}

JsonField JsonField::operator[](const std::string& key) const {
  auto field = optional(key);
  if (!field) {
    if (path_.empty()) throw ValidationError(fmt::format("{}: missing field \"{}\"", origin_, key));
    throw ValidationError(fmt::format("{}: {}: missing field \"{}\"", origin_, path_, key));
  }
  return *field;
}

std::optional<JsonField> JsonField::optional(const std::string& key) const {
  if (!value_->is_object()) fail_expected("an object");
  auto found = value_->find(key);
  if (found == value_->end() || found->is_null()) return std::nullopt;
  return JsonField(*found, origin_, path_.empty() ? key : path_ + "." + key);
}

std::vector<JsonField> JsonField::elements() const {
  if (!value_->is_array()) fail_expected("an array");
  std::vector<JsonField> result;
  for (std::size_t i = 0; i < value_->size(); ++i) {
    result.emplace_back((*value_)[i], origin_, fmt::format("{}[{}]", path_, i));
  }
  return result;
}

std::vector<std::pair<std::string, JsonField>> JsonField::members() const {
  if (!value_->is_object()) fail_expected("an object");
  std::vector<std::pair<std::string, JsonField>> result;
  for (const auto& item : value_->items()) {
    result.emplace_back(item.key(),
                        JsonField(item.value(), origin_, path_.empty() ? item.key() : path_ + "." + item.key()));
  }
  return result;
}

std::string JsonField::string() const {
  if (!value_->is_string()) fail_expected("a string");
  return value_->get<std::string>();
}

bool JsonField::boolean() const {
  if (!value_->is_boolean()) fail_expected("true or false");
  return value_->get<bool>();
}

std::int64_t JsonField::integer() const {
  if (value_->is_number_integer()) {
    if (value_->is_number_unsigned() && value_->get<std::uint64_t>() > static_cast<std::uint64_t>(
                                                                           std::numeric_limits<std::int64_t>::max())) {
      fail_expected("an integer that fits in int64");
    }
    return value_->get<std::int64_t>();
  }
  // 4096.0 is an integer too (some writers emit every number as a float).
  if (value_->is_number_float()) {
    const double number = value_->get<double>();
    if (std::floor(number) == number && std::fabs(number) < 9.0e15) return static_cast<std::int64_t>(number);
  }
  fail_expected("an integer");
}

std::uint64_t JsonField::unsigned_integer() const {
  if (value_->is_number_unsigned()) return value_->get<std::uint64_t>();
  if (value_->is_number_integer() && value_->get<std::int64_t>() >= 0) {
    return static_cast<std::uint64_t>(value_->get<std::int64_t>());
  }
  fail_expected("a non-negative integer");
}

int JsonField::int32() const {
  const std::int64_t value = integer();
  if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max()) {
    fail_expected("an integer that fits in 32 bits");
  }
  return static_cast<int>(value);
}

double JsonField::number() const {
  if (value_->is_number()) return value_->get<double>();
  if (value_->is_string()) {
    const auto& text = value_->get_ref<const std::string&>();
    if (text == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (text == "inf") return std::numeric_limits<double>::infinity();
    if (text == "-inf") return -std::numeric_limits<double>::infinity();
  }
  fail_expected("a number (or \"nan\", \"inf\", \"-inf\")");
}

}  // namespace kernelsmith::detail
