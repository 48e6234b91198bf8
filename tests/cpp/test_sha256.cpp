// SHA-256 (lib/detail/sha256.cpp): the FIPS 180-4 test vectors, and the length-prefixed fields that
// content keys are built from.
#include <string>

#include "catch.hpp"
#include "detail/sha256.hpp"

using kernelsmith::detail::Sha256;
using kernelsmith::detail::sha256_hex;

TEST_CASE("SHA-256 matches the FIPS 180-4 test vectors", "[sha256]") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // One million 'a': many blocks, fed in uneven pieces.
  Sha256 hash;
  const std::string piece(997, 'a');
  std::size_t fed = 0;
  while (fed + piece.size() <= 1000000) {
    hash.update(piece);
    fed += piece.size();
  }
  hash.update(std::string(1000000 - fed, 'a'));
  CHECK(hash.hex() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("SHA-256 fields are length-prefixed, so that their boundaries count", "[sha256]") {
  CHECK(Sha256().field("ab").field("c").hex() != Sha256().field("a").field("bc").hex());
  CHECK(Sha256().update("ab").update("c").hex() == sha256_hex("abc"));  // plain updates just concatenate
  CHECK(Sha256().field("abc").hex() == Sha256().field("abc").hex());
  CHECK(Sha256().field("").hex() != sha256_hex(""));  // an empty field still adds its length
  const auto digest = Sha256().update("abc").digest();
  CHECK(digest[0] == 0xba);
  CHECK(digest[31] == 0xad);
}
