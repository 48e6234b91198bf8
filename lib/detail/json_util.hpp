// Reading JSON documents with messages that say where and what: every error names the document, the
// field path (`tensors[1].dtype`) and what was expected, e.g.
//   tasks/relu/task.json: tensors[1].dtype: expected one of float16, ...; got "flaot32"
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kernelsmith::detail {

/// Field order is kept, so written documents read in the order the schema documents them.
using Json = nlohmann::ordered_json;

/// The deepest nesting of arrays and objects in a document the library reads. Every document it writes is a
/// few levels deep; the bound is far above them and far below what the recursive readers of a parsed
/// document (copies, dump(), the schema readers) can take on a thread's stack.
constexpr std::size_t kMaxJsonDepth = 128;

/// Throws ValidationError "<origin>: line L, column C: JSON nested deeper than 128 levels ..." for text
/// whose arrays and objects nest deeper than kMaxJsonDepth. Text that is not JSON may pass: the parser
/// rejects it.
void check_json_depth(std::string_view text, const std::string& origin);

/// The one way the library reads JSON (files, stored rows, caches, replies of helpers and workers):
/// check_json_depth, then the parse. Throws ValidationError "<origin>: not valid JSON: ..." on a syntax
/// error (nlohmann's message carries the line and column).
Json parse_json(const std::string& text, const std::string& origin);
/// The same, for readers that want nlohmann::json (keys sorted) rather than Json (keys in document order).
nlohmann::json parse_plain_json(const std::string& text, const std::string& origin);

/// A short rendering of a value for messages (long values are cut).
std::string describe_json(const Json& value);

/// JSON has no NaN or infinity: those are written as the strings "nan", "inf" and "-inf".
Json json_number(double value);

/// `json[key]` as a T, or `fallback` when the key is missing or null (helper replies, where optional
/// fields are left out). Throws nlohmann::json::exception for a value of another type.
template <typename T>
T json_value_or(const Json& json, const char* key, T fallback) {
  const auto found = json.find(key);
  if (found == json.end() || found->is_null()) return fallback;
  return found->template get<T>();
}

/// A value inside a document, with the way to it.
class JsonField {
 public:
  JsonField(const Json& value, std::string origin, std::string path = {});

  const Json& json() const { return *value_; }
  const std::string& origin() const { return origin_; }
  const std::string& path() const { return path_; }

  /// Throws ValidationError "<origin>: <path>: expected <expected>; got <value>".
  [[noreturn]] void fail_expected(const std::string& expected) const;
  /// Throws ValidationError "<origin>: <path>: <message>".
  [[noreturn]] void fail(const std::string& message) const;

  /// Checks that this is an object whose keys are all among `allowed` (unknown fields are typos).
  void expect_object(std::initializer_list<std::string_view> allowed) const;
  /// A required field of an object.
  JsonField operator[](const std::string& key) const;
  /// An optional field; absent and null are both "not given".
  std::optional<JsonField> optional(const std::string& key) const;
  /// Elements of an array (throws unless this is an array).
  std::vector<JsonField> elements() const;
  /// Keys of an object in document order, each with its value.
  std::vector<std::pair<std::string, JsonField>> members() const;

  std::string string() const;
  bool boolean() const;
  std::int64_t integer() const;
  std::uint64_t unsigned_integer() const;
  int int32() const;
  /// A number, or one of the strings "nan", "inf", "-inf".
  double number() const;

 private:
  const Json* value_;
  std::string origin_;
  std::string path_;
};

}  // namespace kernelsmith::detail
