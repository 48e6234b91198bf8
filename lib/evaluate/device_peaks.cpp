#include "evaluate/device_peaks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "detail/file_cache.hpp"
#include "detail/json_util.hpp"
#include "detail/sha256.hpp"
#include "device_guard.hpp"
#include "evaluate/timing.hpp"
#include "kernelsmith/error.hpp"

namespace kernelsmith::detail {
namespace {

constexpr const char* kPeaksSchema = "kernelsmith.device-peaks/1";
constexpr int kFmaChains = 8;

// Device code that mirrors the OpenCL version below line for line. The multiplier and addend come from
// an argument so the compiler cannot fold the chains.
constexpr const char* kCudaPeakKernels = R"(
extern "C" __global__ void ks_peak_copy(const float4* __restrict__ in, float4* __restrict__ out, long long n4) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) out[i] = in[i];
}

extern "C" __global__ void ks_peak_fma(float* out, int iterations, int seed) {
  const float m = 1.0f - 1e-7f * (float)seed;
  const float c = 1e-7f * (float)(seed + 1);
  const int id = blockIdx.x * blockDim.x + threadIdx.x;
  float a0 = id * 1e-9f, a1 = a0 + 0.1f, a2 = a0 + 0.2f, a3 = a0 + 0.3f;
  float a4 = a0 + 0.4f, a5 = a0 + 0.5f, a6 = a0 + 0.6f, a7 = a0 + 0.7f;
  #pragma unroll 4
  for (int i = 0; i < iterations; ++i) {
    a0 = fmaf(a0, m, c); a1 = fmaf(a1, m, c); a2 = fmaf(a2, m, c); a3 = fmaf(a3, m, c);
    a4 = fmaf(a4, m, c); a5 = fmaf(a5, m, c); a6 = fmaf(a6, m, c); a7 = fmaf(a7, m, c);
  }
  out[id] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}
)";

constexpr const char* kOpenClPeakKernels = R"(
__kernel void ks_peak_copy(__global const float4* restrict in, __global float4* restrict out, long n4) {
  const long i = get_global_id(0);
  if (i < n4) out[i] = in[i];
}

__kernel void ks_peak_fma(__global float* out, int iterations, int seed) {
  const float m = 1.0f - 1e-7f * (float)seed;
  const float c = 1e-7f * (float)(seed + 1);
  const int id = get_global_id(0);
  float a0 = id * 1e-9f, a1 = a0 + 0.1f, a2 = a0 + 0.2f, a3 = a0 + 0.3f;
  float a4 = a0 + 0.4f, a5 = a0 + 0.5f, a6 = a0 + 0.6f, a7 = a0 + 0.7f;
  for (int i = 0; i < iterations; ++i) {
    a0 = mad(a0, m, c); a1 = mad(a1, m, c); a2 = mad(a2, m, c); a3 = mad(a3, m, c);
    a4 = mad(a4, m, c); a5 = mad(a5, m, c); a6 = mad(a6, m, c); a7 = mad(a7, m, c);
  }
  out[id] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}
)";

std::string cache_key(const std::string& backend, const DeviceInfo& device) {
  return Sha256().field(backend).field(device.name).field(device.driver_version).field(device.architecture).hex();
}

std::uint32_t block_size(const DeviceInfo& device) {
  const int limit = device.max_threads_per_block > 0 ? device.max_threads_per_block : 256;
  return static_cast<std::uint32_t>(std::min(limit, 256));
}

}  // namespace

std::string peak_kernels_source(const std::string& language) {
  if (language == "opencl") return kOpenClPeakKernels;
  if (language == "cuda" || language == "maca") return kCudaPeakKernels;
  throw NotSupportedError(fmt::format("no built-in peak kernels for the kernel language '{}'", language));
}

std::string peaks_cache_path(const std::string& cache_dir, const std::string& backend, const DeviceInfo& device) {
  return (std::filesystem::path(cache_dir) / "peaks" /
          fmt::format("{}-{}.json", backend, cache_key(backend, device).substr(0, 16)))
      .string();
}

std::optional<DevicePeaks> load_cached_peaks(const std::string& cache_dir, const std::string& backend,
                                             const DeviceInfo& device) {
  const auto text = read_whole_file(peaks_cache_path(cache_dir, backend, device));
  if (!text) return std::nullopt;
  try {
    const auto json = detail::parse_plain_json(*text, "<device peaks cache>");
    if (json.value("schema", "") != kPeaksSchema || json.value("key", "") != cache_key(backend, device)) {
      return std::nullopt;
    }
    DevicePeaks peaks;
    peaks.gbps = json.at("peak_gbps").get<double>();
    peaks.gflops = json.at("peak_gflops").get<double>();
    if (!(peaks.gbps > 0.0) || !(peaks.gflops > 0.0)) return std::nullopt;
    return peaks;
  } catch (const std::exception&) {
    return std::nullopt;  // a damaged cache entry is measured again
  }
}

DevicePeaks measure_device_peaks(Backend& backend, const std::string& cache_dir) {
  const DeviceInfo& device = backend.device();
  CompileOptions options;
  options.kernels = {"ks_peak_copy", "ks_peak_fma"};
  const CompiledProgram program = backend.compile(peak_kernels_source(backend.language()), options);
  if (!program.report.ok) {
    throw Error(fmt::format("the built-in peak kernels did not compile for {}: {}", device.name, program.report.log));
  }
  const DeviceModule module = load_module(backend, program);
  const std::uint64_t copy = backend.kernel(module.get(), "ks_peak_copy");
  const std::uint64_t fma = backend.kernel(module.get(), "ks_peak_fma");
  const std::uint32_t block = block_size(device);

  TimingSettings settings;
  settings.mode = "peak";
  settings.noise_target = 0.02;
  settings.min_samples = 5;
  settings.max_samples = 50;
  settings.budget_seconds = 1.0;
  settings.warmups = 1;
  settings.host_repeats = 1;

  DevicePeaks peaks;
  {
    // Far larger than the L2, so the copy streams from memory without a flush.
    std::size_t bytes = std::clamp<std::size_t>(4 * l2_flush_bytes(device), std::size_t(64) << 20,
                                                std::size_t(1) << 30);
    if (device.global_memory_bytes > 0) {
      bytes = std::min(bytes, static_cast<std::size_t>(device.global_memory_bytes) / 4);
    }
    bytes -= bytes % 16;
    const auto n4 = static_cast<std::int64_t>(bytes / 16);
    const DeviceBuffer in_buffer = allocate_buffer(backend, bytes);
    const DeviceBuffer out_buffer = allocate_buffer(backend, bytes);
    const std::uint64_t in = in_buffer.get();
    const std::uint64_t out = out_buffer.get();
    backend.fill(in, 1, bytes);
    const Dim3 grid{static_cast<std::uint32_t>((n4 + block - 1) / block), 1, 1};
    LaunchSequence sequence;
    sequence.names = {"ks_peak_copy"};
    sequence.launch = [&](std::size_t) {
      backend.launch(copy, grid, {block, 1, 1}, 0,
                     {{KernelArg::Kind::buffer, in, 0}, {KernelArg::Kind::buffer, out, 0},
                      {KernelArg::Kind::int64, 0, n4}});
    };
    const TimingReport report = measure_sequence(backend, sequence, settings);
    if (report.median_ms > 0.0) peaks.gbps = 2.0 * static_cast<double>(bytes) / (report.median_ms * 1e-3) / 1e9;
  }
  {
    // Enough threads to fill every compute unit several times over; iterations grow until a run takes
    // long enough (2 ms) for launch overhead not to matter.
    const int units = std::max(device.compute_units, 1);
    const std::uint32_t blocks = static_cast<std::uint32_t>(units) * (device.is_gpu ? 8u : 4u);
    const std::size_t threads = static_cast<std::size_t>(blocks) * block;
    const DeviceBuffer out_buffer = allocate_buffer(backend, threads * sizeof(float));
    const std::uint64_t out = out_buffer.get();
    std::int64_t iterations = 64;
    TimingReport report;
    for (int attempt = 0; attempt < 16; ++attempt) {
      LaunchSequence sequence;
      sequence.names = {"ks_peak_fma"};
      sequence.launch = [&](std::size_t) {
        backend.launch(fma, {blocks, 1, 1}, {block, 1, 1}, 0,
                       {{KernelArg::Kind::buffer, out, 0}, {KernelArg::Kind::int32, 0, iterations},
                        {KernelArg::Kind::int32, 0, 1}});
      };
      TimingSettings quick = settings;
      quick.min_samples = 3;
      quick.max_samples = 3;
      report = measure_sequence(backend, sequence, quick);
      if (report.median_ms >= 2.0 || iterations >= (std::int64_t(1) << 24)) {
        report = measure_sequence(backend, sequence, settings);
        break;
      }
      iterations *= report.median_ms > 0.05 ? std::max<std::int64_t>(2, static_cast<std::int64_t>(2.0 / report.median_ms))
                                            : 16;
      iterations = std::min<std::int64_t>(iterations, std::int64_t(1) << 24);
    }
    const double flops = static_cast<double>(threads) * static_cast<double>(iterations) * kFmaChains * 2.0;
    if (report.median_ms > 0.0) peaks.gflops = flops / (report.median_ms * 1e-3) / 1e9;
  }

  nlohmann::json json = {{"schema", kPeaksSchema},
                         {"key", cache_key(backend.name(), device)},
                         {"backend", backend.name()},
                         {"device", device.name},
                         {"driver_version", device.driver_version},
                         {"architecture", device.architecture},
                         {"peak_gbps", peaks.gbps},
                         {"peak_gflops", peaks.gflops},
                         {"measured_at", static_cast<std::int64_t>(std::time(nullptr))}};
  write_cache_file(peaks_cache_path(cache_dir, backend.name(), device), json.dump(2));
  return peaks;
}

}  // namespace kernelsmith::detail
