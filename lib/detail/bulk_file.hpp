// Writing and reading files of gigabytes (the PyTorch oracle's tensors, which travel through shared memory)
// with every thread of the shared pool: one write() into tmpfs copies page by page under the file's lock, a
// few seconds per gigabyte, which made the copies the largest cost of checking KernelBench's largest problems.
// Large files are mapped and copied in chunks in parallel; small ones go through one write() or read().
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace kernelsmith::detail {

/// Copies `size` bytes in chunks spread over the shared pool (one memcpy below the size where that pays).
void parallel_copy(std::uint8_t* to, const std::uint8_t* from, std::size_t size);

/// Writes `size` bytes to `path` (created or truncated). The space is reserved before the copy, so a full
/// file system is an error, not a fault while copying. Returns false, with the reason in `error`, on failure.
bool write_bulk_file(const std::string& path, const std::uint8_t* data, std::size_t size, std::string& error);

/// Reads the first `size` bytes of `path` into `data`. Returns false, with the reason in `error`, on failure
/// (a shorter file included).
bool read_bulk_file(const std::string& path, std::uint8_t* data, std::size_t size, std::string& error);

}  // namespace kernelsmith::detail
