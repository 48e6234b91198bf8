// Devices: which backends exist here, their devices, and why a backend is unavailable.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernelsmith/export.hpp"

namespace kernelsmith {

/// What the launch plan and the speed-of-light model need to know of a device.
struct DeviceInfo {
  std::string backend;  ///< "cuda", "opencl", "maca"
  int index = 0;        ///< index within the backend
  std::string name;
  std::string vendor;
  std::string platform;      ///< OpenCL platform name; empty elsewhere
  std::string architecture;  ///< e.g. "sm_90"; OpenCL: the device version string
  std::string driver_version;  ///< keys caches of measured peaks; empty when unknown
  int compute_units = 0;     ///< SMs on CUDA, compute units on OpenCL
  int warp_size = 1;
  int max_threads_per_block = 0;
  std::int64_t shared_per_block = 0;
  std::int64_t shared_per_block_optin = 0;
  std::int64_t l2_bytes = 0;
  std::int64_t global_memory_bytes = 0;
  /// The largest single buffer the device allocates (OpenCL CL_DEVICE_MAX_MEM_ALLOC_SIZE; CUDA: the
  /// global memory); 0 when unknown.
  std::int64_t max_allocation_bytes = 0;
  int clock_mhz = 0;
  bool is_gpu = false;
};

struct BackendInfo {
  std::string name;
  /// Usable for evaluation: the runtime loaded and at least one device answered.
  bool available = false;
  /// Why not, when not available (e.g. "CUDA driver libcuda.so.1 not found: ...").
  std::string reason;
  /// Compiling works even when running does not (NVRTC with no GPU driver).
  bool can_compile = false;
  /// Which library files were loaded, or the compiler's version, for the record.
  std::vector<std::string> details;
  std::vector<DeviceInfo> devices;
};

/// Every backend this build knows, each with its devices or the reason it is unavailable.
/// Never throws for a missing driver; the answer is cached after the first call.
KERNELSMITH_API std::vector<BackendInfo> devices();

/// The backend an evolution should use when none is named: a GPU backend with a device first, then
/// OpenCL. Throws BackendUnavailableError listing each backend's reason when none works.
KERNELSMITH_API std::string best_backend();

KERNELSMITH_API std::string to_json(const std::vector<BackendInfo>& backends);

}  // namespace kernelsmith
