// The evaluation pipeline on a CUDA GPU, beyond test_evaluator_cuda_gpu.cpp: the compile cache, the
// resources and measured peaks in the evaluation, a trap contained by the worker, and an in-process
// evaluator after a fault.
#include <iostream>
#include <string>

#include "catch.hpp"
#include "gpu_test_support.hpp"
#include "harness_test_support.hpp"
#include "kernelsmith/device.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/evaluator.hpp"
#include "kernelsmith/task.hpp"

using namespace kernelsmith;

namespace {

using test::small_task;

Candidate cuda(const std::string& source) { return test::candidate_in("cuda", source); }

EvaluatorOptions gpu_options(bool isolate) {
  EvaluatorOptions options;
  options.backend = "cuda";
  options.isolate = isolate;
  options.min_samples = 5;
  options.screen_budget_seconds = 0.1;
  options.deadline_seconds = 60.0;
  options.cache_dir = test::test_cache_dir();
  return options;
}

const char* kCorrect = R"(// @launch add2<<<ceil_div(N, 128), 128>>>(y, a, b, N)
extern "C" __global__ void add2(float* out, const float* x, const float* z, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] + x[i] + z[i];
}
)";

// 64 KB of dynamic shared memory: more than the 48 KB a kernel gets without opting in.
const char* kLargeShared = R"(// @launch add2<<<ceil_div(N, 128), 128, 65536>>>(y, a, b, N)
extern "C" __global__ void add2(float* out, const float* x, const float* z, int n) {
  extern __shared__ float scratch[];
  const int t = threadIdx.x;
  const int i = blockIdx.x * blockDim.x + t;
  scratch[t * 127] = i < n ? 2.0f * x[i] + z[i] : 0.0f;
  __syncthreads();
  if (i < n) out[i] = scratch[t * 127];
}
)";

const char* kFault = R"(// @launch smash<<<ceil_div(N, 128), 128>>>(y, a, b, N)
extern "C" __global__ void smash(float* out, const float* x, const float* z, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[(long long)n * 100000000000LL + i] = x[i] + z[i];
}
)";

const char* kTrap = R"(// @launch boom<<<ceil_div(N, 128), 128>>>(y, a, b, N)
extern "C" __global__ void boom(float* out, const float* x, const float* z, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 7) __trap();
  if (i < n) out[i] = 2.0f * x[i] + z[i];
}
)";

}  // namespace

TEST_CASE("CUDA: compile cache, resources, measured peaks, and a trap contained by the worker", "[gpu][harness]") {
  const std::string reason = test::cuda_unavailable_reason();
  if (!reason.empty()) {
    WARN("skipped: " << reason);
    return;
  }
  // What test_evaluator_cuda_gpu.cpp does not cover: the rest of the failure kinds are there.
  const Task task = small_task();
  auto evaluator = create_evaluator(gpu_options(true));

  const Evaluation ok = evaluator->evaluate(task, cuda(kCorrect));
  INFO(ok.message);
  REQUIRE(ok.status == Status::ok);
  CHECK(ok.compile.ok);
  REQUIRE_FALSE(ok.compile.kernels.empty());
  CHECK(ok.compile.kernels[0].registers > 0);
  CHECK(ok.timing->samples >= 5);
  REQUIRE(ok.sol.has_value());
  CHECK(ok.sol->peak_gbps > 100.0);
  CHECK(ok.sol->peak_gflops > 1000.0);

  // The same source again comes from the compile cache.
  const Evaluation again = evaluator->evaluate(task, cuda(kCorrect));
  CHECK(again.compile.cached);
  CHECK(again.status == Status::ok);

  const Evaluation shared = evaluator->evaluate(task, cuda(kLargeShared));
  INFO(shared.message);
  CHECK(shared.status == Status::ok);

  const Evaluation trap = evaluator->evaluate(task, cuda(kTrap));
  INFO(trap.message);
  CHECK(trap.status == Status::crashed);
  CHECK(evaluator->evaluate(task, cuda(kCorrect)).status == Status::ok);
}

// Runs in a child process started by the next test: the fault poisons the CUDA context for the rest
// of the process. Hidden ([.]): it runs only when asked for by its tag.
TEST_CASE("CUDA child: an in-process evaluator reports a lost context", "[.][cuda_lost_context_child]") {
  KERNELSMITH_REQUIRE_CUDA_DEVICE();
  const Task task = small_task();
  auto evaluator = create_evaluator(gpu_options(false));
  CHECK(evaluator->evaluate(task, cuda(kCorrect)).status == Status::ok);
  const Evaluation fault = evaluator->evaluate(task, cuda(kFault));
  INFO(fault.message);
  CHECK(fault.status == Status::crashed);
  CHECK(fault.message.find("context was lost") != std::string::npos);
  // The driver may keep the error for the life of the process: then the evaluator says so.
  try {
    const Evaluation after = evaluator->evaluate(task, cuda(kCorrect));
    CHECK(after.status == Status::ok);
  } catch (const DeviceError& e) {
    CHECK(std::string(e.what()).find("isolate=True") != std::string::npos);
  }
  std::cout << "cuda-lost-context-child: done" << std::endl;
}

TEST_CASE("CUDA: an in-process evaluator reports a lost context and never crashes the caller", "[gpu][harness]") {
  KERNELSMITH_REQUIRE_CUDA_DEVICE();
  const test::ChildRun child = test::run_tagged_in_child("[cuda_lost_context_child]");
  INFO(child.output);
  CHECK(child.exited_cleanly);
  CHECK(child.output.find("cuda-lost-context-child: done") != std::string::npos);
}
