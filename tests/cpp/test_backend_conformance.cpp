// One conformance suite for every backend: the same kernel compiled, loaded, given memory, launched and
// timed, and the same mistakes refused with the same errors, through the Backend seam alone. Each backend
// is a row: OpenCL (PoCL here), CUDA, and MACA through its plugin and the stand-in runtime (on the CUDA
// GPU), once with each way of passing launch arguments. Rows whose device is missing skip, saying why.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "catch.hpp"
#include "gpu_test_support.hpp"
#include "maca_test_support.hpp"
#include "test_support.hpp"
#include "kernelsmith/backend.hpp"
#include "kernelsmith/error.hpp"

using namespace kernelsmith;

namespace {

struct Row {
  std::string backend;
  std::string source;         ///< defines scale(x, y, a, n) and wide(y, offset, n); see below
  std::string broken_source;  ///< a syntax error on line 2
  /// Environment for the row's scope (MACA: the stand-in runtime and the launch form).
  std::vector<std::pair<std::string, std::string>> environment;
};

// The C family: CUDA and MACA C++ share the source, as MACA follows CUDA's syntax.
const char* const kCudaLikeSource = R"(
extern "C" __global__ void scale(const float* x, float* y, int a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + SHIFT;
}
// A 64-bit argument after a 32-bit one: the packing must align it.
extern "C" __global__ void wide(long long* y, int n, long long offset) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = offset + i;
}
)";

const char* const kOpenClSource = R"(
__kernel void scale(__global const float* x, __global float* y, int a, int n) {
  const int i = get_global_id(0);
  if (i < n) y[i] = a * x[i] + SHIFT;
}
__kernel void wide(__global long* y, int n, long offset) {
  const int i = get_global_id(0);
  if (i < n) y[i] = offset + i;
}
)";

Row cuda_row() {
  return {"cuda", kCudaLikeSource, "extern \"C\" __global__ void f(float* y) {\n  y[0] = ;\n}\n", {}};
}

Row opencl_row() { return {"opencl", kOpenClSource, "__kernel void f(__global float* y) {\n  y[0] = ;\n}\n", {}}; }

Row maca_row(const std::string& launch_form, bool extra_only_runtime = false) {
  Row row = cuda_row();
  row.backend = "maca";
  row.environment = {{"KERNELSMITH_MACA_RUNTIME", test::maca_standin_runtime()}, {"KERNELSMITH_MACA_LAUNCH", launch_form}};
  if (extra_only_runtime) row.environment.emplace_back("KERNELSMITH_MCRUNTIME_EXTRA_ONLY", "1");
  return row;
}

KernelArg buffer(std::uint64_t handle) { return {KernelArg::Kind::buffer, handle, 0}; }
KernelArg int32(std::int64_t value) { return {KernelArg::Kind::int32, 0, value}; }
KernelArg int64(std::int64_t value) { return {KernelArg::Kind::int64, 0, value}; }

void check_conformance(const Row& row) {
  std::vector<std::unique_ptr<test::ScopedEnvironment>> environment;
  for (const auto& [name, value] : row.environment) {
    environment.push_back(std::make_unique<test::ScopedEnvironment>(name, value));
  }
  auto backend = create_backend(row.backend, 0);
  REQUIRE(backend->name() == row.backend);
  const DeviceInfo& device = backend->device();
  CHECK(device.backend == row.backend);
  CHECK(device.warp_size >= 1);
  CHECK(device.max_threads_per_block >= 64);

  // Compile: defines reach the source; the plan's kernels are named.
  CompileOptions options;
  options.defines = {{"SHIFT", "0.5f"}};
  options.kernels = {"scale", "wide"};
  const CompiledProgram program = backend->compile(row.source, options);
  INFO(program.report.log);
  REQUIRE(program.report.ok);
  CHECK(program.language == backend->language());

  // A syntax error is rejected, by the compiler or (OpenCL) when the program is built at load.
  const CompiledProgram broken = backend->compile(row.broken_source, {});
  if (broken.report.ok) {
    CHECK_THROWS_AS(backend->load(broken), Error);
  } else {
    CHECK(broken.report.log.find("2") != std::string::npos);  // the line is named
  }

  // Load, kernels by name, an unknown one refused.
  const std::uint64_t module = backend->load(program);
  const std::uint64_t scale = backend->kernel(module, "scale");
  const std::uint64_t wide = backend->kernel(module, "wide");
  CHECK_THROWS_AS(backend->kernel(module, "missing"), NotFoundError);
  CHECK(backend->kernel_resources(scale).name == "scale");

  // Memory: round trip, fill, range checks.
  const int n = 5000;
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i) x[static_cast<std::size_t>(i)] = static_cast<float>(i % 97 - 48);
  const std::uint64_t x_buffer = backend->allocate(n * sizeof(float));
  const std::uint64_t y_buffer = backend->allocate(n * sizeof(float));
  const std::uint64_t wide_buffer = backend->allocate(n * sizeof(std::int64_t));
  backend->write(x_buffer, x.data(), n * sizeof(float));
  std::vector<float> back(n, 0.0f);
  backend->read(x_buffer, back.data(), n * sizeof(float));
  CHECK(back == x);
  backend->fill(y_buffer, 0xFF, n * sizeof(float));
  std::vector<std::uint8_t> bytes(n * sizeof(float), 0);
  backend->read(y_buffer, bytes.data(), bytes.size());
  CHECK(std::all_of(bytes.begin(), bytes.end(), [](std::uint8_t b) { return b == 0xFF; }));
  // (Backends differ in the type of error for an unknown handle; each is a kernelsmith::Error.)
  CHECK_THROWS_AS(backend->write(x_buffer, x.data(), (n + 1) * sizeof(float)), ValidationError);
  CHECK_THROWS_AS(backend->read(12345, back.data(), 4), Error);
  CHECK_THROWS_AS(backend->free(12345), Error);

  // Launch and time: y = 3x + 0.5 (exact in float32), then the 64-bit argument.
  const Dim3 grid{static_cast<std::uint32_t>((n + 127) / 128), 1, 1};
  const Dim3 block{128, 1, 1};
  backend->timer_start();
  backend->launch(scale, grid, block, 0, {buffer(x_buffer), buffer(y_buffer), int32(3), int32(n)});
  const double milliseconds = backend->timer_stop_ms();
  CHECK(milliseconds > 0.0);
  std::vector<float> y(n);
  backend->read(y_buffer, y.data(), n * sizeof(float));
  for (int i = 0; i < n; ++i) REQUIRE(y[static_cast<std::size_t>(i)] == 3.0f * x[static_cast<std::size_t>(i)] + 0.5f);
  const std::int64_t offset = (std::int64_t{1} << 40) + 7;
  backend->launch(wide, grid, block, 0, {buffer(wide_buffer), int32(n), int64(offset)});
  backend->synchronize();
  std::vector<std::int64_t> w(n);
  backend->read(wide_buffer, w.data(), n * sizeof(std::int64_t));
  for (int i = 0; i < n; ++i) REQUIRE(w[static_cast<std::size_t>(i)] == offset + i);

  // Launches the device refuses are LaunchErrors, and the backend stays usable.
  const auto too_many_threads = static_cast<std::uint32_t>(device.max_threads_per_block) * 2;
  CHECK_THROWS_AS(backend->launch(scale, grid, {too_many_threads, 1, 1}, 0,
                                  {buffer(x_buffer), buffer(y_buffer), int32(3), int32(n)}),
                  LaunchError);
  CHECK_THROWS_AS(backend->launch(scale, grid, block, 0, {buffer(12345), buffer(y_buffer), int32(3), int32(n)}),
                  Error);
  backend->launch(scale, grid, block, 0, {buffer(x_buffer), buffer(y_buffer), int32(2), int32(n)});
  backend->read(y_buffer, y.data(), n * sizeof(float));
  CHECK(y[10] == 2.0f * x[10] + 0.5f);

  backend->free(x_buffer);
  backend->free(y_buffer);
  backend->free(wide_buffer);
  backend->unload(module);
  CHECK_THROWS_AS(backend->unload(module), Error);
}

}  // namespace

TEST_CASE("backend conformance: OpenCL", "[conformance][opencl]") {
  KERNELSMITH_REQUIRE_OPENCL_DEVICE();
  check_conformance(opencl_row());
}

TEST_CASE("backend conformance: CUDA", "[conformance][gpu][cuda]") {
  KERNELSMITH_REQUIRE_CUDA_DEVICE();
  check_conformance(cuda_row());
}

TEST_CASE("backend conformance: MACA through the stand-in, arguments as a params array", "[conformance][gpu][maca]") {
  KERNELSMITH_SKIP_WHEN(test::maca_device_missing_reason());
  check_conformance(maca_row("params"));
}

TEST_CASE("backend conformance: MACA through the stand-in, arguments through `extra`", "[conformance][gpu][maca]") {
  KERNELSMITH_SKIP_WHEN(test::maca_device_missing_reason());
  check_conformance(maca_row("extra"));
}

TEST_CASE("backend conformance: MACA on a runtime that takes `extra` only, found by the automatic form",
          "[conformance][gpu][maca]") {
  KERNELSMITH_SKIP_WHEN(test::maca_device_missing_reason());
  check_conformance(maca_row("auto", true));
}
