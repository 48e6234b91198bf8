// SHA-256 (FIPS 180-4), for content-addressed keys: candidate ids, compile caches.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kernelsmith::detail {

class Sha256 {
 public:
  Sha256();
  Sha256& update(const void* data, std::size_t size);
  Sha256& update(std::string_view text) { return update(text.data(), text.size()); }
  /// Adds a length-prefixed field, so that ("ab", "c") and ("a", "bc") hash differently.
  Sha256& field(std::string_view text);
  /// The digest; the object must not be updated afterwards.
  std::array<std::uint8_t, 32> digest();
  /// The digest as 64 lowercase hex digits.
  std::string hex();

 private:
  void compress(const std::uint8_t* block);

  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t total_bytes_ = 0;
};

/// 64 hex digits of the SHA-256 of `text`.
std::string sha256_hex(std::string_view text);

}  // namespace kernelsmith::detail
