// The CUDA backend on a real device: memory round trips, launches, events, opt-in shared memory, launch
// errors that leave the context usable, and a device fault (in a child process, since it poisons the
// context for the rest of the process). Skipped with a warning where there is no CUDA device.
#include "kernelsmith/config.hpp"

#if KERNELSMITH_ENABLE_CUDA

#include <sys/wait.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "gpu_test_support.hpp"
#include "kernelsmith/backend.hpp"
#include "kernelsmith/device.hpp"
#include "kernelsmith/error.hpp"

namespace {

using namespace kernelsmith;

// Compiles and loads; the module stays loaded for the backend's lifetime.
std::uint64_t load_kernel(Backend& backend, const std::string& source, const std::string& name) {
  CompileOptions options;
  options.kernels = {name};
  const CompiledProgram program = backend.compile(source, options);
  INFO(program.report.log);
  REQUIRE(program.report.ok);
  const std::uint64_t module = backend.load(program);
  return backend.kernel(module, name);
}

KernelArg buffer_arg(std::uint64_t buffer) {
  KernelArg arg;
  arg.kind = KernelArg::Kind::buffer;
  arg.buffer = buffer;
  return arg;
}

KernelArg int32_arg(std::int64_t value) {
  KernelArg arg;
  arg.kind = KernelArg::Kind::int32;
  arg.value = value;
  return arg;
}

KernelArg int64_arg(std::int64_t value) {
  KernelArg arg;
  arg.kind = KernelArg::Kind::int64;
  arg.value = value;
  return arg;
}

std::uint32_t blocks_for(std::size_t n, std::uint32_t block) {
  return static_cast<std::uint32_t>((n + block - 1) / block);
}

const char* const kAxpy = R"(
extern "C" __global__ void axpy(const float* x, float* y, int a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
)";

}  // namespace

TEST_CASE("CUDA backend: memory round trip and a launch", "[gpu][cuda]") {
  KERNELSMITH_REQUIRE_CUDA_DEVICE();
  auto backend = create_backend("cuda", 0);
  CHECK(backend->name() == "cuda");
  CHECK(backend->language() == "cuda");
  CHECK(backend->device().is_gpu);
  CHECK(backend->device().architecture.rfind("sm_", 0) == 0);

  CompileOptions options;
  options.kernels = {"axpy"};
  const CompiledProgram program = backend->compile(kAxpy, options);
  INFO(program.report.log);
  REQUIRE(program.report.ok);
  // Compiled for this device's architecture (sm_90a on sm_90).
  CHECK(program.target.rfind(backend->device().architecture, 0) == 0);
  const std::uint64_t module = backend->load(program);
  const std::uint64_t axpy = backend->kernel(module, "axpy");

  const auto params = backend->kernel_params(axpy);
  if (params.empty()) {
    WARN("the driver cannot report kernel parameters (cuFuncGetParamInfo needs CUDA 12.4)");
  } else {
    REQUIRE(params.size() == 4);
    CHECK(params[0].size == 8);
    CHECK(params[1].size == 8);
    CHECK(params[2].size == 4);
    CHECK(params[3].size == 4);
  }
  const KernelResources resources = backend->kernel_resources(axpy);
  CHECK(resources.name == "axpy");
  CHECK(resources.registers > 0);
  REQUIRE_FALSE(program.report.kernels.empty());
  CHECK(resources.registers == program.report.kernels.front().registers);

  // Integer-valued floats, so that a*x + y is exact with or without FMA.
  const std::size_t n = (1u << 20) + 3;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> values(-1000, 1000);
  std::vector<float> x(n), y(n), result(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(values(rng));
    y[i] = static_cast<float>(values(rng));
  }
  const std::uint64_t x_buffer = backend->allocate(n * sizeof(float));
  const std::uint64_t y_buffer = backend->allocate(n * sizeof(float));
  backend->write(x_buffer, x.data(), n * sizeof(float));
  backend->write(y_buffer, y.data(), n * sizeof(float));
  backend->launch(axpy, {blocks_for(n, 256), 1, 1}, {256, 1, 1}, 0,
                  {buffer_arg(x_buffer), buffer_arg(y_buffer), int32_arg(3), int32_arg(static_cast<std::int64_t>(n))});
  backend->synchronize();
  backend->read(y_buffer, result.data(), n * sizeof(float));
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < n; ++i) mismatches += result[i] != 3.0f * x[i] + y[i];
  CHECK(mismatches == 0);

  SECTION("fill writes the byte everywhere") {
    backend->fill(y_buffer, 0xAB, n * sizeof(float));
    std::vector<unsigned char> bytes(n * sizeof(float));
    backend->read(y_buffer, bytes.data(), bytes.size());
    std::size_t other = 0;
    for (unsigned char byte : bytes) other += byte != 0xAB;
    CHECK(other == 0);
  }
  SECTION("an unknown kernel name is NotFoundError naming it") {
    try {
      backend->kernel(module, "no_such_kernel");
      FAIL("an unknown kernel was found");
    } catch (const NotFoundError& error) {
      CHECK(std::string(error.what()).find("no_such_kernel") != std::string::npos);
    }
  }
  SECTION("a rejected launch is a LaunchError and the context stays usable") {
    try {
      backend->launch(axpy, {1, 1, 1}, {4096, 1, 1}, 0,
                      {buffer_arg(x_buffer), buffer_arg(y_buffer), int32_arg(1), int32_arg(16)});
      FAIL("a block of 4096 threads was accepted");
    } catch (const LaunchError& error) {
      CHECK(std::string(error.what()).find("CUDA_ERROR_INVALID_VALUE") != std::string::npos);
      CHECK(std::string(error.what()).find("axpy") != std::string::npos);
    }
    backend->launch(axpy, {blocks_for(n, 256), 1, 1}, {256, 1, 1}, 0,
                    {buffer_arg(x_buffer), buffer_arg(y_buffer), int32_arg(0), int32_arg(static_cast<std::int64_t>(n))});
    REQUIRE_NOTHROW(backend->synchronize());
  }
  SECTION("arguments that do not fit the kernel are refused before launching") {
    if (params.empty()) return;
    CHECK_THROWS_AS(backend->launch(axpy, {1, 1, 1}, {32, 1, 1}, 0, {buffer_arg(x_buffer), buffer_arg(y_buffer)}),
                    LaunchError);
    CHECK_THROWS_AS(backend->launch(axpy, {1, 1, 1}, {32, 1, 1}, 0,
                                    {buffer_arg(x_buffer), buffer_arg(y_buffer), buffer_arg(y_buffer), int32_arg(1)}),
                    LaunchError);
    CHECK_THROWS_AS(backend->launch(axpy, {1, 1, 1}, {32, 1, 1}, 0,
                                    {buffer_arg(x_buffer), buffer_arg(y_buffer), int64_arg(1ll << 40), int32_arg(1)}),
                    LaunchError);
  }
  SECTION("reads and writes past a buffer are refused") {
    std::vector<float> too_many(n + 1);
    CHECK_THROWS_AS(backend->write(x_buffer, too_many.data(), too_many.size() * sizeof(float)), ValidationError);
    CHECK_THROWS_AS(backend->read(x_buffer, too_many.data(), too_many.size() * sizeof(float)), ValidationError);
    CHECK_THROWS_AS(backend->free(x_buffer + 4), NotFoundError);
  }
  backend->free(x_buffer);
  backend->free(y_buffer);
  backend->unload(module);
  CHECK_THROWS_AS(backend->kernel_resources(axpy), NotFoundError);
}

TEST_CASE("CUDA backend: template kernels are launched by the plan's name", "[gpu][cuda]") {
  KERNELSMITH_REQUIRE_CUDA_DEVICE();
  auto backend = create_backend("cuda", 0);
  const char* source = R"(
template <int Factor>
__global__ void scale(int* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] *= Factor;
}
)";
  const std::uint64_t scale = load_kernel(*backend, source, "scale<3>");
  std::vector<int> values = {1, -2, 3, 40, 500};
  const std::uint64_t buffer = backend->allocate(values.size() * sizeof(int));
  backend->write(buffer, values.data(), values.size() * sizeof(int));
  backend->launch(scale, {1, 1, 1}, {32, 1, 1}, 0, {buffer_arg(buffer), int32_arg(5)});
  backend->read(buffer, values.data(), values.size() * sizeof(int));
  CHECK(values == std::vector<int>{3, -6, 9, 120, 1500});
}

TEST_CASE("CUDA backend: events time the work between them", "[gpu][cuda]") {
  KERNELSMITH_REQUIRE_CUDA_DEVICE();
  auto backend = create_backend("cuda", 0);
  const char* source = R"(
extern "C" __global__ void spin(long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {
  }
}
)";
  const std::uint64_t spin = load_kernel(*backend, source, "spin");
  // About 2 ms at the device's reported clock; slower clocks only make it longer.
  const std::int64_t cycles = static_cast<std::int64_t>(backend->device().clock_mhz) * 1000 * 2;
  backend->timer_start();
  backend->launch(spin, {1, 1, 1}, {1, 1, 1}, 0, {int64_arg(cycles)});
  const double spin_ms = backend->timer_stop_ms();
  backend->timer_start();
  const double empty_ms = backend->timer_stop_ms();
  INFO("spin " << spin_ms << " ms, empty " << empty_ms << " ms");
  CHECK(spin_ms > 1.0);
  CHECK(spin_ms < 100.0);
  CHECK(empty_ms >= 0.0);
  CHECK(empty_ms < 0.5);
  CHECK_THROWS_AS(backend->timer_stop_ms(), ValidationError);
}

TEST_CASE("CUDA backend: dynamic shared memory above 48 KiB", "[gpu][cuda]") {
  KERNELSMITH_REQUIRE_CUDA_DEVICE();
  auto backend = create_backend("cuda", 0);
  const std::int64_t optin = backend->device().shared_per_block_optin;
  if (optin <= 64 * 1024) {
    WARN("skipped: the device allows only " << optin << " bytes of shared memory per block");
    return;
  }
  const char* source = R"(
extern "C" __global__ void reverse_in_shared(const int* x, int* y, int n) {
  extern __shared__ int staged[];
  for (int i = threadIdx.x; i < n; i += blockDim.x) staged[i] = x[i];
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) y[i] = staged[n - 1 - i];
}
)";
  const std::uint64_t reverse = load_kernel(*backend, source, "reverse_in_shared");
  const std::size_t n = static_cast<std::size_t>(optin) / sizeof(int);  // the whole opt-in amount
  std::vector<int> x(n), y(n, 0);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<int>(i * 7 + 1);
  const std::uint64_t x_buffer = backend->allocate(n * sizeof(int));
  const std::uint64_t y_buffer = backend->allocate(n * sizeof(int));
  backend->write(x_buffer, x.data(), n * sizeof(int));
  backend->launch(reverse, {1, 1, 1}, {1024, 1, 1}, n * sizeof(int),
                  {buffer_arg(x_buffer), buffer_arg(y_buffer), int32_arg(static_cast<std::int64_t>(n))});
  backend->synchronize();
  backend->read(y_buffer, y.data(), n * sizeof(int));
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += y[i] != x[n - 1 - i];
  CHECK(wrong == 0);

  // One byte more than the device allows is refused, and the context stays usable.
  CHECK_THROWS_AS(backend->launch(reverse, {1, 1, 1}, {1024, 1, 1}, static_cast<std::size_t>(optin) + 4,
                                  {buffer_arg(x_buffer), buffer_arg(y_buffer), int32_arg(1)}),
                  LaunchError);
  REQUIRE_NOTHROW(backend->synchronize());
}

// Runs in a child process started by the next test: an illegal address poisons the CUDA context for
// the rest of the process. Hidden ([.]): it runs only when asked for by its tag.
TEST_CASE("CUDA backend child: an illegal address is a DeviceFault", "[.][cuda_fault_child]") {
  KERNELSMITH_REQUIRE_CUDA_DEVICE();
  auto backend = create_backend("cuda", 0);
  const char* source = R"(
extern "C" __global__ void poke(float* p) { p[threadIdx.x] = 1.0f; }
)";
  const std::uint64_t poke = load_kernel(*backend, source, "poke");
  // An integer where the kernel expects a pointer: the address 0x10 is not mapped.
  backend->launch(poke, {1, 1, 1}, {32, 1, 1}, 0, {int64_arg(0x10)});
  try {
    backend->synchronize();
    FAIL("the illegal address went unnoticed");
  } catch (const DeviceFault& error) {
    std::cout << "cuda-fault-child: " << error.what() << std::endl;
    CHECK(std::string(error.what()).find("CUDA_ERROR_ILLEGAL_ADDRESS") != std::string::npos);
  }
  // Sticky: every later call fails the same way.
  CHECK_THROWS_AS(backend->allocate(1024), DeviceFault);
}

TEST_CASE("CUDA backend: an illegal address is a DeviceFault (in a child process)", "[gpu][cuda]") {
  KERNELSMITH_REQUIRE_CUDA_DEVICE();
  const test::ChildRun child = test::run_tagged_in_child("[cuda_fault_child]");
  INFO(child.output);
  CHECK(child.exited_cleanly);
  CHECK(child.output.find("cuda-fault-child:") != std::string::npos);
  CHECK(child.output.find("CUDA_ERROR_ILLEGAL_ADDRESS") != std::string::npos);
}

#endif  // KERNELSMITH_ENABLE_CUDA
