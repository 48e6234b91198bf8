// Base64 (lib/detail/base64.cpp): the RFC 4648 test vectors, every byte value through a round trip, and
// the errors that name what is wrong and where.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "detail/base64.hpp"
#include "kernelsmith/error.hpp"
#include "test_support.hpp"

using kernelsmith::detail::base64_decode;
using kernelsmith::detail::base64_encode;
using kernelsmith::test::contains;
using kernelsmith::test::error_of;

namespace {

std::vector<std::uint8_t> bytes_of(const std::string& text) { return {text.begin(), text.end()}; }

}  // namespace

TEST_CASE("base64 matches the RFC 4648 test vectors, padding included", "[base64]") {
  const std::vector<std::pair<std::string, std::string>> vectors = {
      {"", ""},           {"f", "Zg=="},         {"fo", "Zm8="},          {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : vectors) {
    INFO(plain);
    CHECK(base64_encode(bytes_of(plain)) == encoded);
    CHECK(base64_decode(encoded) == bytes_of(plain));
  }
}

TEST_CASE("base64 carries every byte value, at every length modulo 3", "[base64]") {
  std::vector<std::uint8_t> all;
  for (int value = 0; value < 256; ++value) all.push_back(static_cast<std::uint8_t>(value));
  for (std::size_t length : {std::size_t(254), std::size_t(255), std::size_t(256)}) {
    const std::vector<std::uint8_t> bytes(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(length));
    const std::string encoded = base64_encode(bytes);
    CHECK(encoded.size() == (length + 2) / 3 * 4);
    CHECK(encoded.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") ==
          std::string::npos);
    CHECK(base64_decode(encoded) == bytes);
  }
}

TEST_CASE("base64 rejects malformed text, saying what and where", "[base64]") {
  CHECK(contains(error_of([] { base64_decode("Zm9"); }), "base64: length 3 is not a multiple of 4"));
  CHECK(contains(error_of([] { base64_decode("Zm9v Zg=="); }), "length 9"));
  CHECK(contains(error_of([] { base64_decode("Zm9vZ!=="); }), "base64: invalid character '!' at offset 5"));
  CHECK(contains(error_of([] { base64_decode("Zg==Zm9v"); }), "invalid character '=' at offset 2"));  // padding mid-text
  CHECK(contains(error_of([] { base64_decode("Zg=v"); }), "base64: data after padding"));
  CHECK_THROWS_AS(base64_decode("===="), kernelsmith::ValidationError);
}
