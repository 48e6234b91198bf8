// Small helpers for text: trimming, byte counts people can read, and whether a file's bytes are text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kernelsmith::detail {

/// The text without the white space (std::isspace) at its ends.
std::string trim(std::string_view text);

/// "512 B", "1.5 KiB", "68.7 GiB": binary units, four significant digits.
std::string human_bytes(std::int64_t bytes);

/// Why `bytes` is not text (e.g. "a NUL byte at offset 12", "bytes that are not UTF-8 at offset 40"), or
/// nothing when it is UTF-8 without NUL bytes. Kernel sources and manifests must be text.
std::optional<std::string> binary_content(std::string_view bytes);

}  // namespace kernelsmith::detail
