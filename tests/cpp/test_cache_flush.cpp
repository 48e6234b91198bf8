// The L2 eviction before timed samples: a read pass by a built-in kernel on every backend (PoCL in CI,
// the GPU on the GPU machine), enqueued on the backend's stream and reported by the timing protocol.
#include <string>
#include <vector>

#include "catch.hpp"
#include "evaluate/cache_flush.hpp"
#include "evaluate/timing.hpp"
#include "gpu_test_support.hpp"
#include "kernelsmith/backend.hpp"
#include "kernelsmith/device.hpp"

using namespace kernelsmith;

namespace {

bool available(const std::string& name) {
  for (const auto& backend : devices()) {
    if (backend.name == name && backend.available && !backend.devices.empty()) return true;
  }
  return false;
}

const char* const kCudaAddOne = R"(
extern "C" __global__ void add_one(int* x, long long n) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1;
}
)";

const char* const kOpenClAddOne = R"(
__kernel void add_one(__global int* x, long n) {
  const long i = get_global_id(0);
  if (i < n) x[i] += 1;
}
)";

// The flusher builds its read kernel, leaves other buffers alone, and a timed sequence that uses it
// says its samples were cold and still sees every launch it timed.
void check_flusher(Backend& backend, detail::CacheFlusher::Method method, bool reads) {
  detail::CacheFlusher flusher(backend, method);
  CHECK(flusher.reads() == reads);
  CHECK(flusher.bytes() % 16 == 0);
  CHECK(flusher.bytes() + 16 > detail::l2_flush_bytes(backend.device()));

  CompileOptions options;
  options.kernels = {"add_one"};
  const CompiledProgram program = backend.compile(backend.language() == "opencl" ? kOpenClAddOne : kCudaAddOne, options);
  REQUIRE(program.report.ok);
  const std::uint64_t module = backend.load(program);
  const std::uint64_t kernel = backend.kernel(module, "add_one");
  const std::int64_t n = 4096;
  const std::uint64_t data = backend.allocate(n * 4);
  backend.fill(data, 0, n * 4);

  detail::TimingSettings settings;
  settings.min_samples = 3;
  settings.max_samples = 5;
  settings.warmups = 1;
  settings.host_repeats = 1;
  settings.flusher = &flusher;
  // One sample at a time: below, each host launch call is one run on the device (a replayed batch runs
  // its recorded launches again; test_timing_batches.cpp covers that path).
  settings.batch_below_ms = 0.0;
  int launches = 0;
  detail::LaunchSequence sequence;
  sequence.names = {"add_one"};
  sequence.launch = [&](std::size_t) {
    ++launches;
    backend.launch(kernel, {static_cast<std::uint32_t>(n / 64), 1, 1}, {64, 1, 1}, 0,
                   {{KernelArg::Kind::buffer, data, 0}, {KernelArg::Kind::int64, 0, n}});
  };
  const TimingReport report = detail::measure_sequence(backend, sequence, settings);
  CHECK(report.l2_flushed);
  CHECK(report.samples >= 3);
  CHECK(report.median_ms > 0.0);
  std::vector<int> values(n);
  backend.read(data, values.data(), n * 4);
  for (std::int64_t i = 0; i < n; ++i) REQUIRE(values[i] == launches);
  backend.free(data);
  backend.unload(module);
}

}  // namespace

TEST_CASE("the cache flusher reads its buffer with a built-in kernel on OpenCL, and fills it on CPUs", "[timing][opencl]") {
  if (!available("opencl")) {
    WARN("skipped: no OpenCL device");
    return;
  }
  auto backend = create_backend("opencl", 0);
  // The read kernel builds and runs on OpenCL too; on a CPU device the automatic choice is the fill.
  check_flusher(*backend, detail::CacheFlusher::Method::read, true);
  check_flusher(*backend, detail::CacheFlusher::Method::automatic, backend->device().is_gpu);
}

TEST_CASE("the cache flusher reads its buffer with a built-in kernel on CUDA", "[timing][gpu][cuda]") {
  KERNELSMITH_REQUIRE_CUDA_DEVICE();
  auto backend = create_backend("cuda", 0);
  check_flusher(*backend, detail::CacheFlusher::Method::automatic, true);
}
