// The evaluation pipeline end to end on a CUDA GPU, with the cases of test_harness_opencl.cpp: the
// evaluator in-process and isolated in a worker, one candidate per way to fail, plus what only CUDA
// has (template kernels found by name, opt-in shared memory, a device fault that loses the context).
// Skipped with a warning where there is no CUDA device.
#include "kernelsmith/config.hpp"

#if KERNELSMITH_ENABLE_CUDA

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "catch.hpp"
#include "gpu_test_support.hpp"
#include "harness_test_support.hpp"
#include "kernelsmith/device.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/evaluator.hpp"
#include "kernelsmith/task.hpp"

using namespace kernelsmith;

namespace {

Task small_task() { return test::small_task(); }

Candidate cuda(const std::string& source) { return test::candidate_in("cuda", source); }

EvaluatorOptions fast_options(bool isolate) { return test::fast_options("cuda", isolate, 2); }

// Correct and different from the reference: a + a is exactly 2 * a, so the sum rounds the same way.
const char* kCorrect = R"(// @launch add2<<<ceil_div(N, 128), 128>>>(y, a, b, N)
extern "C" __global__ void add2(float* out, const float* x, const float* z, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] + x[i] + z[i];
}
)";

const char* kWrong = R"(// @launch add2<<<ceil_div(N, 128), 128>>>(y, a, b, N)
extern "C" __global__ void add2(float* out, const float* x, const float* z, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * x[i] - z[i];
}
)";

const char* kUnwritten = R"(// @launch add2<<<ceil_div(N, 128), 128>>>(y, a, b, N)
extern "C" __global__ void add2(float* out, const float* x, const float* z, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n - 1) out[i] = 2.0f * x[i] + z[i];
}
)";

const char* kMutatesInput = R"(// @launch add2<<<ceil_div(N, 128), 128>>>(y, a, b, N)
extern "C" __global__ void add2(float* out, float* x, const float* z, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = 2.0f * x[i] + z[i];
    x[i] = 0.0f;
  }
}
)";

const char* kCompileError = R"(// @launch add2<<<ceil_div(N, 128), 128>>>(y, a, b, N)
extern "C" __global__ void add2(float* out, const float* x, const float* z, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * x[i] + ;
}
)";

// A C++ template kernel: the plan names an instance, NVRTC resolves its mangled symbol.
const char* kTemplate = R"(// @launch scale_add<2><<<ceil_div(N, 256), 256>>>(a, b, y, N)
template <int Factor>
__global__ void scale_add(const float* a, const float* b, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = Factor * a[i] + b[i];
}
)";

// Stages a and b through 64 KiB of dynamic shared memory per block: more than the 48 KiB default.
const char* kLargeShared = R"(// @launch staged<<<ceil_div(N, 1024), 1024, 65536>>>(a, b, y, N)
extern "C" __global__ void staged(const float* a, const float* b, float* y, int n) {
  extern __shared__ float stage[];  // 16384 floats: a's tile, then b's tile, then unused
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  stage[threadIdx.x] = i < n ? a[i] : 0.0f;
  stage[1024 + threadIdx.x] = i < n ? b[i] : 0.0f;
  stage[16383 - threadIdx.x] = 0.0f;
  __syncthreads();
  if (i < n) y[i] = 2.0f * stage[threadIdx.x] + stage[1024 + threadIdx.x];
}
)";

std::string with_plan(const std::string& plan) {
  return "// " + plan + R"(
extern "C" __global__ void add2(float* out, const float* x, const float* z, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * x[i] + z[i];
}
)";
}

const char* kEndless = R"(// @launch spin<<<ceil_div(N, 64), 64>>>(a, b, y, N)
extern "C" __global__ void spin(const float* a, const float* b, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = 0.0f;
    // Random inputs are never NaN: this never ends, and its stores keep the compiler from removing it.
    while (a[i] == a[i]) {
      v += 1.0f;
      y[i] = v;
    }
  }
}
)";

const char* kIllegalAddress = R"(// @launch smash<<<ceil_div(N, 64), 64>>>(a, b, y, N)
extern "C" __global__ void smash(const float* a, const float* b, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  // 16 TB past y: inside the address space, outside any allocation; the context is lost.
  y[(long long)n * 1000000000LL + i] = a[i] + b[i];
}
)";

}  // namespace

TEST_CASE("CUDA evaluator classifies candidates in-process", "[gpu][cuda][evaluator]") {
  KERNELSMITH_REQUIRE_CUDA_DEVICE();
  const Task task = small_task();
  auto evaluator = create_evaluator(fast_options(false));
  REQUIRE(evaluator->backend_name() == "cuda");

  SECTION("a correct candidate is timed against the reference") {
    const Evaluation evaluation = evaluator->evaluate(task, cuda(kCorrect));
    INFO(evaluation.message << "\n" << evaluation.compile.log);
    REQUIRE(evaluation.status == Status::ok);
    REQUIRE(evaluation.correctness.has_value());
    CHECK(evaluation.correctness->passed);
    CHECK(evaluation.correctness->trials > 2);
    REQUIRE(evaluation.timing.has_value());
    REQUIRE(evaluation.baseline_timing.has_value());
    CHECK(evaluation.timing->samples >= 3);
    CHECK(evaluation.timing->median_ms > 0.0);
    CHECK(evaluation.timing->host_ms > 0.0);
    CHECK(evaluation.timing->l2_flushed);
    REQUIRE(evaluation.timing->kernels.size() == 1);
    CHECK(evaluation.timing->kernels[0].name == "add2");
    CHECK(evaluation.speedup > 0.0);
    CHECK(evaluation.fitness == evaluation.speedup);
    REQUIRE(evaluation.sol.has_value());
    CHECK(evaluation.sol->bytes == 12.0 * 4096);
    CHECK(evaluation.sol->achieved_gbps > 0.0);
    CHECK(evaluation.sol->peak_gbps > 0.0);
    // NVRTC's ptxas report reaches the evaluation.
    REQUIRE_FALSE(evaluation.compile.kernels.empty());
    CHECK(evaluation.compile.kernels[0].name == "add2");
    CHECK(evaluation.compile.kernels[0].registers > 0);
    CHECK(evaluation.compile.kernels[0].spill_store_bytes == 0);
    CHECK(evaluation.compile.target.rfind("sm_", 0) == 0);
    CHECK(evaluation.integrity.deterministic);
  }
  SECTION("wrong results are incorrect, with the first mismatch") {
    const Evaluation evaluation = evaluator->evaluate(task, cuda(kWrong));
    INFO(evaluation.message);
    REQUIRE(evaluation.status == Status::incorrect);
    CHECK(evaluation.fitness == 0.0);
    REQUIRE(evaluation.correctness.has_value());
    const auto& check = evaluation.correctness->checks.back();
    REQUIRE(check.outputs.size() == 1);
    CHECK(check.outputs[0].mismatches > 0);
    CHECK(check.outputs[0].first_mismatch >= 0);
    CHECK_FALSE(evaluation.timing.has_value());
  }
  SECTION("an output element never written is found by the poison") {
    const Evaluation evaluation = evaluator->evaluate(task, cuda(kUnwritten));
    INFO(evaluation.message);
    REQUIRE(evaluation.status == Status::incorrect);
    const auto& check = evaluation.correctness->checks.back();
    CHECK(check.outputs[0].unwritten == 1);
    CHECK(evaluation.message.find("never written") != std::string::npos);
  }
  SECTION("writing into an input is incorrect and names the input") {
    const Evaluation evaluation = evaluator->evaluate(task, cuda(kMutatesInput));
    INFO(evaluation.message);
    REQUIRE(evaluation.status == Status::incorrect);
    const auto& check = evaluation.correctness->checks.back();
    REQUIRE(check.modified_inputs.size() == 1);
    CHECK(check.modified_inputs[0] == "a");
  }
  SECTION("a compile error carries NVRTC's log with the line") {
    const Evaluation evaluation = evaluator->evaluate(task, cuda(kCompileError));
    INFO(evaluation.message);
    REQUIRE(evaluation.status == Status::compile_error);
    CHECK_FALSE(evaluation.compile.ok);
    CHECK(evaluation.compile.log.find("candidate.cu(4): error") != std::string::npos);
    CHECK(evaluation.fitness == failure_fitness(Status::compile_error));
  }
  SECTION("a template kernel named by the plan is found and correct") {
    const Evaluation evaluation = evaluator->evaluate(task, cuda(kTemplate));
    INFO(evaluation.message << "\n" << evaluation.compile.log);
    CHECK(evaluation.status == Status::ok);
  }
  SECTION("dynamic shared memory above 48 KiB is granted") {
    const Evaluation evaluation = evaluator->evaluate(task, cuda(kLargeShared));
    INFO(evaluation.message << "\n" << evaluation.compile.log);
    CHECK(evaluation.status == Status::ok);
  }
  SECTION("invalid launches of every kind are reported, never run") {
    struct Case {
      std::string plan;
      std::string expected;  // part of the message
    };
    const std::vector<Case> cases = {
        {"@launch add3<<<ceil_div(N, 128), 128>>>(y, a, b, N)", "add3"},
        {"@launch add2<<<ceil_div(N, 128), 128>>>(y, a, b)", "takes 4 arguments"},
        {"@launch add2<<<ceil_div(N, BLOCKS), 128>>>(y, a, b, N)", "BLOCKS"},
        {"@launch add2<<<1, 100000>>>(y, a, b, N)", "at most"},
        {"@launch add2<<<ceil_div(N, 128), 128>>>(y, a, b, y)", "buffer"},
        {"@launch add2<<<ceil_div(N, 128), 128, 1000000000>>>(y, a, b, N)", "SMEM_PER_BLOCK_OPTIN"},
        {"@launch add2<<<ceil_div(N, 128), 128 (y, a, b, N)", "line 1"},
    };
    for (const auto& c : cases) {
      const Evaluation evaluation = evaluator->evaluate(task, cuda(with_plan(c.plan)));
      INFO(c.plan << " -> " << evaluation.message);
      CHECK(evaluation.status == Status::invalid_launch);
      CHECK(evaluation.message.find(c.expected) != std::string::npos);
      CHECK(evaluation.fitness == failure_fitness(Status::invalid_launch));
    }
    CHECK(evaluator->evaluate(task, cuda(kCorrect)).status == Status::ok);
  }
}

TEST_CASE("CUDA evaluator: the worker contains hangs and device faults", "[gpu][cuda][evaluator][worker]") {
  KERNELSMITH_REQUIRE_CUDA_DEVICE();
  const Task task = small_task();
  EvaluatorOptions options = fast_options(true);
  auto evaluator = create_evaluator(options);

  const Evaluation first = evaluator->evaluate(task, cuda(kCorrect));
  INFO(first.message);
  REQUIRE(first.status == Status::ok);

  EvaluatorOptions short_deadline = options;
  short_deadline.deadline_seconds = 5.0;
  auto hasty = create_evaluator(short_deadline);
  const auto started = std::chrono::steady_clock::now();
  const Evaluation endless = hasty->evaluate(task, cuda(kEndless));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  INFO(endless.message);
  CHECK(endless.status == Status::timeout);
  CHECK(endless.fitness == failure_fitness(Status::timeout));
  CHECK(seconds < 60.0);
  const Evaluation after_timeout = hasty->evaluate(task, cuda(kCorrect));
  INFO(after_timeout.message);
  CHECK(after_timeout.status == Status::ok);

  const Evaluation crash = evaluator->evaluate(task, cuda(kIllegalAddress));
  INFO(crash.message);
  CHECK(crash.status == Status::crashed);
  CHECK(crash.message.find("CUDA_ERROR_ILLEGAL_ADDRESS") != std::string::npos);
  const Evaluation after_crash = evaluator->evaluate(task, cuda(kCorrect));
  INFO(after_crash.message);
  CHECK(after_crash.status == Status::ok);

  CHECK(evaluator->evaluate(task, cuda(kWrong)).status == Status::incorrect);
  CHECK(evaluator->evaluate(task, cuda(kCompileError)).status == Status::compile_error);
  CHECK(evaluator->evaluate(task, cuda(kCorrect)).status == Status::ok);
}

TEST_CASE("CUDA evaluator: evaluate_batch returns one evaluation per candidate in order", "[gpu][cuda][evaluator][worker]") {
  KERNELSMITH_REQUIRE_CUDA_DEVICE();
  const Task task = small_task();
  auto evaluator = create_evaluator(fast_options(true));
  const auto evaluations =
      evaluator->evaluate_batch(task, {cuda(kCorrect), cuda(kCompileError), cuda(kWrong), cuda(kTemplate)});
  REQUIRE(evaluations.size() == 4);
  CHECK(evaluations[0].status == Status::ok);
  CHECK(evaluations[1].status == Status::compile_error);
  CHECK(evaluations[2].status == Status::incorrect);
  CHECK(evaluations[3].status == Status::ok);
  CHECK(evaluations[0].candidate_id == cuda(kCorrect).id());
}

#endif  // KERNELSMITH_ENABLE_CUDA
