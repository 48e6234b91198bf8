// Evicting the device's last-level cache before a timed sample, so that every sample starts cold.
#pragma once

#include <cstddef>
#include <cstdint>

#include "device_guard.hpp"
#include "kernelsmith/backend.hpp"

namespace kernelsmith::detail {

/// Reads a buffer of l2_flush_bytes() (twice the L2) with a built-in kernel. Reading, not filling: a
/// fill (memset) evicts too, but leaves the cache full of dirty lines whose write-back then runs during
/// the timed kernel and is charged to it. Measured on an H200 (flush_probe, cupy): a kernel reading
/// 64 MiB took 26.0 us after a memset flush and 19.6 us after a read flush; a 64 MiB copy 38.5 us and
/// 34.6 us. The read pass leaves only clean lines behind, so a sample pays for its own traffic alone.
/// On CPUs (PoCL) the buffer is filled instead: a read pass there costs several times a fill and would
/// eat the sampling budget, and CPU timings are not speed-of-light figures. Where the built-in kernel
/// cannot be built (an unusual OpenCL device), the buffer is filled too.
class CacheFlusher {
 public:
  enum class Method { automatic, read, fill };  ///< automatic: read on GPUs, fill elsewhere
  explicit CacheFlusher(Backend& backend, Method method = Method::automatic);
  CacheFlusher(const CacheFlusher&) = delete;
  CacheFlusher& operator=(const CacheFlusher&) = delete;

  /// Enqueues the eviction on the backend's stream (no synchronisation).
  void flush();
  std::size_t bytes() const { return bytes_; }
  /// False when the fill fallback is in use.
  bool reads() const { return kernel_ != 0; }

 private:
  Backend& backend_;
  std::size_t bytes_ = 0;
  DeviceBuffer buffer_;
  DeviceBuffer sink_;
  DeviceModule module_;
  std::uint64_t kernel_ = 0;
  Dim3 grid_{1, 1, 1};
  Dim3 block_{1, 1, 1};
  std::uint8_t fill_byte_ = 0;
};

}  // namespace kernelsmith::detail
