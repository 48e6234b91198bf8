// Message helpers: readable byte counts, and telling text from binary files.
#include <string>

#include "catch.hpp"
#include "detail/text.hpp"

using kernelsmith::detail::binary_content;
using kernelsmith::detail::human_bytes;

TEST_CASE("byte counts in binary units", "[text]") {
  CHECK(human_bytes(512) == "512 B");
  CHECK(human_bytes(1536) == "1.5 KiB");
  CHECK(human_bytes(std::int64_t(16) << 30) == "16 GiB");
  CHECK(human_bytes(std::int64_t(68719476736) + (std::int64_t(1) << 29)) == "64.5 GiB");
}

TEST_CASE("text is UTF-8 without NUL bytes", "[text]") {
  CHECK_FALSE(binary_content("// @launch k<<<1, 1>>>()\n"));
  CHECK_FALSE(binary_content("// déjà vu, 𝜋 ≈ 3.14\n"));
  CHECK_FALSE(binary_content(""));
  CHECK(binary_content(std::string("ab\0c", 4)) == std::string("a NUL byte at offset 2"));
  CHECK(binary_content("caf\xe9") == std::string("bytes that are not UTF-8 at offset 3"));
  CHECK(binary_content("\xc0\xaf") == std::string("bytes that are not UTF-8 at offset 0"));       // overlong
  CHECK(binary_content("a\xed\xa0\x80") == std::string("bytes that are not UTF-8 at offset 1"));  // a surrogate
  CHECK(binary_content("ok \xe2\x82") == std::string("bytes that are not UTF-8 at offset 3"));    // cut short
}
