#include "detail/bulk_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "detail/thread_pool.hpp"

namespace kernelsmith::detail {
namespace {

/// Below this a file is copied by one call: mapping it and waking threads would cost more than they save.
constexpr std::size_t kParallelFrom = std::size_t(64) << 20;
/// Each thread copies 16 MiB at a time.
constexpr std::size_t kChunk = std::size_t(16) << 20;
constexpr int kMaxHelpers = 7;

std::string reason(const char* what, const std::string& path) {
  return std::string(what) + " " + path + ": " + std::strerror(errno);
}

/// Calls `body(begin, length)` for each kChunk-sized piece of [0, size), spread over the shared pool.
template <typename Body>
void for_each_chunk(std::size_t size, Body&& body) {
  const auto chunks = static_cast<std::int64_t>((size + kChunk - 1) / kChunk);
  ThreadPool::shared().parallel_for(chunks, kMaxHelpers, [&](std::int64_t chunk) {
    const std::size_t begin = static_cast<std::size_t>(chunk) * kChunk;
    body(begin, std::min(kChunk, size - begin));
  });
}

/// Closes a descriptor on every path out.
struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

void parallel_copy(std::uint8_t* to, const std::uint8_t* from, std::size_t size) {
  if (size < kParallelFrom) {
    if (size > 0) std::memcpy(to, from, size);
    return;
  }
  for_each_chunk(size, [&](std::size_t begin, std::size_t length) { std::memcpy(to + begin, from + begin, length); });
}

bool write_bulk_file(const std::string& path, const std::uint8_t* data, std::size_t size, std::string& error) {
  Descriptor file{::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)};
  if (file.fd < 0) {
    error = reason("cannot create", path);
    return false;
  }
  if (size < kParallelFrom) {
    std::size_t written = 0;
    while (written < size) {
      const ssize_t n = ::write(file.fd, data + written, size - written);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        error = reason("cannot write", path);
        return false;
      }
      written += static_cast<std::size_t>(n);
    }
    return true;
  }
  // Each chunk's space is reserved before it is copied, by the thread that copies it (reserving zeroes the
  // pages, in that thread): a mapping of a file whose file system runs out of space faults (SIGBUS) instead
  // of failing.
  if (::ftruncate(file.fd, static_cast<off_t>(size)) != 0) {
    error = reason("cannot size", path);
    return false;
  }
  void* mapped = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, file.fd, 0);
  if (mapped == MAP_FAILED) {
    error = reason("cannot map", path);
    return false;
  }
  auto* to = static_cast<std::uint8_t*>(mapped);
  std::atomic<int> reserve_failure{0};
  for_each_chunk(size, [&](std::size_t begin, std::size_t length) {
    if (const int failed = ::posix_fallocate(file.fd, static_cast<off_t>(begin), static_cast<off_t>(length))) {
      reserve_failure = failed;
      return;
    }
    std::memcpy(to + begin, data + begin, length);
  });
  ::munmap(mapped, size);
  if (const int failed = reserve_failure.load(); failed != 0) {
    errno = failed;
    error = reason("cannot reserve space for", path);
    return false;
  }
  return true;
}

bool read_bulk_file(const std::string& path, std::uint8_t* data, std::size_t size, std::string& error) {
  Descriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) {
    error = reason("cannot open", path);
    return false;
  }
  if (size < kParallelFrom) {
    std::size_t done = 0;
    while (done < size) {
      const ssize_t n = ::read(file.fd, data + done, size - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        if (n == 0) errno = ENODATA;
        error = reason("cannot read", path);
        return false;
      }
      done += static_cast<std::size_t>(n);
    }
    return true;
  }
  const off_t length = ::lseek(file.fd, 0, SEEK_END);
  if (length < 0 || static_cast<std::size_t>(length) < size) {
    errno = length < 0 ? errno : ENODATA;
    error = reason("cannot read (shorter than expected)", path);
    return false;
  }
  void* mapped = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, file.fd, 0);
  if (mapped == MAP_FAILED) {
    error = reason("cannot map", path);
    return false;
  }
  parallel_copy(data, static_cast<const std::uint8_t*>(mapped), size);
  ::munmap(mapped, size);
  return true;
}

}  // namespace kernelsmith::detail
