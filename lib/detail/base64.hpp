// Base64 (RFC 4648, with padding): binary payloads (compiled programs) inside JSON messages and files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kernelsmith::detail {

std::string base64_encode(const std::vector<std::uint8_t>& bytes);
/// Throws ValidationError on a character outside the alphabet or a bad length.
std::vector<std::uint8_t> base64_decode(const std::string& text);

}  // namespace kernelsmith::detail
