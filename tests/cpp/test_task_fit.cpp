// A task too large for the device is found when the evaluator first sees it, in the manifest's words:
// the task file, the size configuration, the tensor or workspace, the bytes and the device's limits.
#include <chrono>
#include <string>

#include "catch.hpp"
#include "evaluate/task_fit.hpp"
#include "harness_test_support.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/evaluator.hpp"
#include "test_support.hpp"

using namespace kernelsmith;
using test::contains;
using test::error_of;

namespace {

DeviceInfo small_device() {
  DeviceInfo device;
  device.backend = "opencl";
  device.name = "cpu-pthread";
  device.global_memory_bytes = std::int64_t(16) << 30;
  device.max_allocation_bytes = std::int64_t(4) << 30;
  return device;
}

// C = A @ B over M x K and K x N, with a workspace in its reference.
Task matmul_task(std::int64_t m, std::int64_t n) {
  Task task = Task::from_json(R"json({
    "schema": "kernelsmith.task/1", "name": "mm",
    "sizes": {"M": 64, "N": 64, "K": 64},
    "check_sizes": [{"name": "odd", "sizes": {"M": 3, "N": 5, "K": 7}}],
    "tensors": [
      {"name": "A", "dtype": "float32", "shape": ["M", "K"], "role": "input"},
      {"name": "B", "dtype": "float32", "shape": ["K", "N"], "role": "input"},
      {"name": "C", "dtype": "float32", "shape": ["M", "N"], "role": "output"}
    ],
    "work": {"flops": "2 * M * N * K", "bytes": "4 * (M * K + K * N + M * N)"},
    "references": {"opencl": {"source":
      "// @workspace partial: float64[M * N * 4]\n// @launch mm<<<ceil_div(M * N, 64), 64>>>(A, B, C, partial, M, N, K)\n"}}
  })json");
  task.timing_sizes.sizes["M"] = m;
  task.timing_sizes.sizes["N"] = n;
  return task;
}

}  // namespace

TEST_CASE("a task that fits the device passes", "[task_fit]") {
  CHECK_NOTHROW(detail::check_task_fits_device(matmul_task(4096, 4096), small_device(), "opencl"));
  DeviceInfo unknown;  // a backend that does not report its memory: nothing to check against
  CHECK_NOTHROW(detail::check_task_fits_device(matmul_task(1 << 20, 1 << 20), unknown, "opencl"));
}

TEST_CASE("a tensor larger than the largest allocation names the tensor, the sizes and the limits", "[task_fit]") {
  const std::string message = error_of([] {
    detail::check_task_fits_device(matmul_task(131072, 131072), small_device(), "opencl");
  });
  CHECK(message ==
        "task \"mm\": tensors[2] (\"C\") under the sizes \"timing\" needs 64 GiB (M * N = 17179869184 float32 "
        "elements); the opencl device 0 (cpu-pthread) allows at most 4 GiB per allocation and has 16 GiB of memory: "
        "lower the sizes \"timing\" in the manifest");
}

TEST_CASE("a reference's workspace is checked with its line", "[task_fit]") {
  // C is 1 GiB, the workspace 8 GiB.
  const std::string message = error_of([] {
    detail::check_task_fits_device(matmul_task(16384, 16384), small_device(), "opencl");
  });
  CHECK(message ==
        "task \"mm\": references.opencl line 1: workspace partial under the sizes \"timing\" needs 8 GiB (M * N * 4 "
        "= 1073741824 float64 elements); the opencl device 0 (cpu-pthread) allows at most 4 GiB per allocation and "
        "has 16 GiB of memory: lower the sizes \"timing\" in the manifest");
}

TEST_CASE("buffers that fit one by one but not together are named with their sizes", "[task_fit]") {
  DeviceInfo device = small_device();
  device.max_allocation_bytes = device.global_memory_bytes;
  const std::string message = error_of([&] {
    detail::check_task_fits_device(matmul_task(32768, 16384), device, "opencl");
  });
  CHECK(contains(message, "task \"mm\": under the sizes \"timing\" the buffers need 18.01 GiB together "
                          "(tensors[0] (\"A\") 8 MiB, tensors[1] (\"B\") 4 MiB, tensors[2] (\"C\") 2 GiB, "
                          "references.opencl line 1: workspace partial 16 GiB)"));
  CHECK(contains(message, "has 16 GiB of memory: lower the sizes \"timing\" in the manifest"));
}

TEST_CASE("the evaluator refuses a task too large for its device before any kernel runs", "[task_fit][opencl]") {
  if (!test::opencl_available()) {
    WARN("skipped: no OpenCL device");
    return;
  }
  Task task = test::small_task();
  task.timing_sizes.sizes["N"] = std::int64_t(1) << 42;  // 16 TiB per tensor
  auto evaluator = create_evaluator(test::fast_options("opencl", false, 1));
  const auto started = std::chrono::steady_clock::now();
  std::string message;
  try {
    evaluator->evaluate(task, test::candidate_in("opencl", task.references.at("opencl").source));
    FAIL("a task larger than the device was evaluated");
  } catch (const TaskError& error) {
    message = error.what();
  }
  INFO(message);
  const std::string manifest = (task.folder / "task.json").string();
  CHECK(message.rfind(manifest + ": tensors[0] (\"a\") under the sizes \"timing\" needs 16 TiB (N = 4398046511104 "
                      "float32 elements); the opencl device 0 (", 0) == 0);
  CHECK(contains(message, "per allocation and has"));
  CHECK(contains(message, "lower the sizes \"timing\" in the manifest"));
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
}
