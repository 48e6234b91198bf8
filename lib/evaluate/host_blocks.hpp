// Large host blocks kept for reuse. An evaluation reads each output of a large task back from the device
// several times (two runs per correctness check, sampled and final checks of the timed runs), into a buffer
// of the same size each time. A fresh block of that size is a fresh mapping whose every page the kernel
// zeroes on first touch: on a 128 MB output that cost more than the copy itself. Blocks of at least
// kRecycledBlockBytes are therefore kept when freed, up to a bound, and handed out again for a request of
// exactly their size.
#pragma once

#include <cstddef>

namespace kernelsmith::detail {

inline constexpr std::size_t kRecycledBlockBytes = std::size_t(8) << 20;

/// A block of `bytes` (uninitialised): a kept block of exactly that size if there is one, else new memory.
/// Throws std::bad_alloc as operator new does.
void* allocate_host_block(std::size_t bytes);

/// Gives a block from allocate_host_block back: kept for reuse while the kept blocks stay within the bound
/// (the least recently kept go first), else freed.
void free_host_block(void* block, std::size_t bytes) noexcept;

/// Bytes held in kept blocks now, and the bound: min(1 GiB, a sixteenth of physical memory).
std::size_t kept_host_block_bytes();
std::size_t host_block_bound();

}  // namespace kernelsmith::detail
