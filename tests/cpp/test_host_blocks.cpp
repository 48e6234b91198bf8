// Large host blocks kept for reuse (lib/evaluate/host_blocks.hpp): a freed block comes back for a request
// of its exact size, small blocks are not kept, and what is kept stays within the bound.
#include <cstdint>
#include <vector>

#include "catch.hpp"
#include "evaluate/host_blocks.hpp"
#include "evaluate/host_tensors.hpp"

using namespace kernelsmith::detail;

TEST_CASE("a freed large block serves the next request of its size", "[host_tensors]") {
  const std::size_t size = kRecycledBlockBytes + 4096;
  void* first = allocate_host_block(size);
  free_host_block(first, size);
  CHECK(kept_host_block_bytes() >= size);
  void* other_size = allocate_host_block(size + 1);
  CHECK(other_size != first);  // only an exact size is handed out again
  void* again = allocate_host_block(size);
  CHECK(again == first);
  free_host_block(other_size, size + 1);
  free_host_block(again, size);
}

TEST_CASE("small blocks are not kept", "[host_tensors]") {
  const std::size_t before = kept_host_block_bytes();
  void* small = allocate_host_block(4096);
  free_host_block(small, 4096);
  CHECK(kept_host_block_bytes() == before);
}

TEST_CASE("kept blocks stay within the bound, the oldest going first", "[host_tensors]") {
  const std::size_t bound = host_block_bound();
  REQUIRE(bound >= 2 * kRecycledBlockBytes);
  const std::size_t size = bound / 2 + 1;  // two of these exceed the bound
  void* older = allocate_host_block(size);
  void* newer = allocate_host_block(size);
  free_host_block(older, size);
  free_host_block(newer, size);
  CHECK(kept_host_block_bytes() <= bound);
  CHECK(allocate_host_block(size) == newer);  // the older one was freed to make room
  free_host_block(newer, size);
}

TEST_CASE("Bytes of a large tensor reuse the block of one freed before", "[host_tensors]") {
  const std::uint8_t* data = nullptr;
  {
    Bytes output(kRecycledBlockBytes * 2);
    output[0] = 1;
    data = output.data();
  }
  Bytes next(kRecycledBlockBytes * 2);
  CHECK(next.data() == data);
  Bytes copy = next;  // a copy needs a block of its own
  CHECK(copy.data() != next.data());
}
