// Speed of light: the device's measured peak copy bandwidth and arithmetic throughput, from built-in
// kernels (CUDA C++ and OpenCL C) timed by the same protocol as candidates, once per device, cached
// on disk as JSON keyed by backend, device name and driver version.
#pragma once

#include <optional>
#include <string>

#include "kernelsmith/backend.hpp"

namespace kernelsmith::detail {

struct DevicePeaks {
  double gbps = 0.0;    ///< bytes read plus bytes written per second, / 1e9
  double gflops = 0.0;  ///< fp32 multiply-adds (2 flops each) per second, / 1e9
};

/// The built-in peak kernels in the backend's language: `ks_peak_copy(in, out, n4)` copies n4 float4,
/// `ks_peak_fma(out, iterations, seed)` runs 8 independent multiply-add chains per thread.
std::string peak_kernels_source(const std::string& language);

/// Where the peaks of a device are cached under `cache_dir`.
std::string peaks_cache_path(const std::string& cache_dir, const std::string& backend, const DeviceInfo& device);

std::optional<DevicePeaks> load_cached_peaks(const std::string& cache_dir, const std::string& backend,
                                             const DeviceInfo& device);

/// Measures both peaks on the backend's device (about a second or two) and caches them on disk.
/// Throws what the backend throws.
DevicePeaks measure_device_peaks(Backend& backend, const std::string& cache_dir);

}  // namespace kernelsmith::detail
