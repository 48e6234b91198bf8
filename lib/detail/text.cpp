#include "detail/text.hpp"

#include <fmt/format.h>

#include <cctype>

namespace kernelsmith::detail {

std::string trim(std::string_view text) {
  std::size_t begin = 0;
  std::size_t end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return std::string(text.substr(begin, end - begin));
}

std::string human_bytes(std::int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes);
  int index = 0;
  while (value >= 1024.0 && index < 6) {
    value /= 1024.0;
    ++index;
  }
  return index == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.4g} {}", value, units[index]);
}

namespace {

// The length of the UTF-8 sequence at `at`, or 0 when it is not a valid one (overlong forms,
// surrogates and code points past U+10FFFF included).
std::size_t utf8_sequence(std::string_view bytes, std::size_t at) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(bytes[i]); };
  const unsigned char lead = byte(at);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned char low = 0x80;
  unsigned char high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (at + length > bytes.size()) return 0;
  if (byte(at + 1) < low || byte(at + 1) > high) return 0;
  for (std::size_t i = 2; i < length; ++i) {
    if (byte(at + i) < 0x80 || byte(at + i) > 0xBF) return 0;
  }
  return length;
}

}  // namespace

std::optional<std::string> binary_content(std::string_view bytes) {
  std::size_t at = 0;
  while (at < bytes.size()) {
    if (bytes[at] == '\0') return fmt::format("a NUL byte at offset {}", at);
    const std::size_t length = utf8_sequence(bytes, at);
    if (length == 0) return fmt::format("bytes that are not UTF-8 at offset {}", at);
    at += length;
  }
  return std::nullopt;
}

}  // namespace kernelsmith::detail
