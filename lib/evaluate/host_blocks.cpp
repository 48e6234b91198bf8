#include "evaluate/host_blocks.hpp"

#include <unistd.h>

#include <algorithm>
#include <deque>
#include <mutex>
#include <new>
#include <utility>

namespace kernelsmith::detail {
namespace {

struct KeptBlocks {
  std::mutex mutex;
  std::deque<std::pair<void*, std::size_t>> blocks;  ///< oldest first
  std::size_t bytes = 0;
};

KeptBlocks& kept() {
  // Never destroyed: buffers freed while static objects are torn down still find it.
  static KeptBlocks* blocks = new KeptBlocks;
  return *blocks;
}

}  // namespace

std::size_t host_block_bound() {
  static const std::size_t bound = [] {
    constexpr std::size_t kGiB = std::size_t(1) << 30;
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page_size = sysconf(_SC_PAGE_SIZE);
    const std::size_t physical = pages > 0 && page_size > 0 ? std::size_t(pages) * std::size_t(page_size) : 8 * kGiB;
    return std::min(kGiB, physical / 16);
  }();
  return bound;
}

void* allocate_host_block(std::size_t bytes) {
  if (bytes >= kRecycledBlockBytes) {
    KeptBlocks& blocks = kept();
    std::lock_guard<std::mutex> lock(blocks.mutex);
    // The newest first: its pages are the likeliest to be resident still.
    for (auto it = blocks.blocks.rbegin(); it != blocks.blocks.rend(); ++it) {
      if (it->second != bytes) continue;
      void* block = it->first;
      blocks.bytes -= bytes;
      blocks.blocks.erase(std::next(it).base());
      return block;
    }
  }
  return ::operator new(bytes);
}

void free_host_block(void* block, std::size_t bytes) noexcept {
  if (block == nullptr) return;
  const std::size_t bound = host_block_bound();
  if (bytes >= kRecycledBlockBytes && bytes <= bound) {
    KeptBlocks& blocks = kept();
    std::lock_guard<std::mutex> lock(blocks.mutex);
    try {
      blocks.blocks.emplace_back(block, bytes);
      blocks.bytes += bytes;
    } catch (...) {
      ::operator delete(block);
      return;
    }
    while (blocks.bytes > bound) {
      const auto [oldest, size] = blocks.blocks.front();
      blocks.blocks.pop_front();
      blocks.bytes -= size;
      ::operator delete(oldest);
    }
    return;
  }
  ::operator delete(block);
}

std::size_t kept_host_block_bytes() {
  KeptBlocks& blocks = kept();
  std::lock_guard<std::mutex> lock(blocks.mutex);
  return blocks.bytes;
}

}  // namespace kernelsmith::detail
