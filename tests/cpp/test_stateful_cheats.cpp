// State kept from one run of a plan to the next must not turn into a speedup or a passing check
// (docs/evaluation.md, "State between runs"). Each cheat below computes the task honestly on a slow path
// (a long loop per element, so that an honest measurement is far below the reference's speed) and
// takes a fast path when it believes an earlier run left it the answer: outputs still holding the
// result, a cache in a workspace or a device global keyed on a few input values, a launch counter that
// skips the work once the kernel has been run often enough to be "past the checks". The evaluator must
// report each one either as incorrect or at its honest (slow) speed, never as ok with a speedup.
#include <string>
#include <vector>

#include "catch.hpp"
#include "gpu_test_support.hpp"
#include "harness_test_support.hpp"
#include "kernelsmith/evaluator.hpp"

using namespace kernelsmith;

namespace {

struct Cheat {
  const char* name;
  const char* source;
};

// The honest path of every cheat: y = 2a + b after a loop that the compiler cannot drop (its result
// feeds the output; v - v is 0 for the finite values it produces, but not foldable under IEEE rules).
#define KS_SLOW_OPENCL                                                   \
  "float v = a[i];\n"                                                    \
  "for (int k = 0; k < 4000; ++k) v = v * 0.9999f + 0.0001f;\n"          \
  "y[i] = 2.0f * a[i] + b[i] + (v - v);\n"

const std::vector<Cheat> kOpenClCheats = {
    {"outputs left from the last run",
     "// @launch lazy<<<ceil_div(N, 64), 64>>>(a, b, y, N)\n"
     "__kernel void lazy(__global const float* a, __global const float* b, __global float* y, int N) {\n"
     "  const int i = get_global_id(0);\n"
     "  if (i >= N) return;\n"
     "  if (y[i] == 2.0f * a[i] + b[i]) return;  /* already there: skip the work */\n" KS_SLOW_OPENCL "}\n"},
    {"a cache in a workspace, keyed on four input values",
     "// @workspace memo: float32[N + 4]\n"
     "// @launch memo_add<<<ceil_div(N, 64), 64>>>(a, b, y, memo, N)\n"
     "// @launch memo_commit<<<1, 4>>>(a, memo, N)\n"
     "__kernel void memo_add(__global const float* a, __global const float* b, __global float* y,\n"
     "                       __global float* memo, int N) {\n"
     "  const int i = get_global_id(0);\n"
     "  if (i >= N) return;\n"
     "  const int n4 = N < 4 ? N : 4;\n"
     "  bool hit = true;\n"
     "  for (int k = 0; k < n4; ++k) hit = hit && memo[N + k] == a[k];\n"
     "  if (hit) { y[i] = memo[i]; return; }\n" KS_SLOW_OPENCL
     "  memo[i] = y[i];\n"
     "}\n"
     "/* The key is written after the whole grid ran, so the next run finds it complete. */\n"
     "__kernel void memo_commit(__global const float* a, __global float* memo, int N) {\n"
     "  const int k = get_global_id(0);\n"
     "  if (k < N && k < 4) memo[N + k] = a[k];\n"
     "}\n"},
    {"a launch counter in a workspace that skips the work after a few runs",
     "// @workspace runs: int32[1]\n"
     "// @launch counted<<<ceil_div(N, 64), 64>>>(a, b, y, runs, N)\n"
     "__kernel void counted(__global const float* a, __global const float* b, __global float* y,\n"
     "                      __global volatile int* runs, int N) {\n"
     "  const int i = get_global_id(0);\n"
     "  const int seen = runs[0];\n"
     "  if (seen > 2 && seen < 1000000) return;  /* the correctness checks poison workspaces; timing did not */\n"
     "  if (i >= N) return;\n" KS_SLOW_OPENCL
     "  if (i == 0) runs[0] = (seen >= 0 && seen < 1000000) ? seen + 1 : 1;\n"
     "}\n"},
};

// The same family in CUDA, where module globals (__device__ variables) live as long as the module.
#define KS_SLOW_CUDA                                                     \
  "float v = a[i];\n"                                                    \
  "for (int k = 0; k < 4000; ++k) v = v * 0.9999f + 0.0001f;\n"          \
  "y[i] = 2.0f * a[i] + b[i] + (v - v);\n"

const std::vector<Cheat> kCudaCheats = {
    {"outputs left from the last run",
     "// @launch lazy<<<ceil_div(N, 128), 128>>>(a, b, y, N)\n"
     "extern \"C\" __global__ void lazy(const float* a, const float* b, float* y, int N) {\n"
     "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i >= N) return;\n"
     "  if (y[i] == 2.0f * a[i] + b[i]) return;\n" KS_SLOW_CUDA "}\n"},
    {"a cache in a device global, keyed on four input values",
     "__device__ float memo[1 << 16];\n"
     "__device__ float memo_key[4];\n"
     "__device__ int memo_valid;\n"
     "// @launch memo_add<<<ceil_div(N, 128), 128>>>(a, b, y, N)\n"
     "// @launch memo_commit<<<1, 4>>>(a, N)\n"
     "extern \"C\" __global__ void memo_add(const float* a, const float* b, float* y, int N) {\n"
     "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i >= N) return;\n"
     "  const int n4 = N < 4 ? N : 4;\n"
     "  bool hit = memo_valid == N && N <= (1 << 16);\n"
     "  for (int k = 0; k < n4; ++k) hit = hit && memo_key[k] == a[k];\n"
     "  if (hit) { y[i] = memo[i]; return; }\n" KS_SLOW_CUDA
     "  if (N <= (1 << 16)) memo[i] = y[i];\n"
     "}\n"
     "extern \"C\" __global__ void memo_commit(const float* a, int N) {\n"
     "  const int k = threadIdx.x;\n"
     "  if (k < N && k < 4) memo_key[k] = a[k];\n"
     "  if (k == 0) memo_valid = N;\n"
     "}\n"},
    {"a launch counter in a device global that skips the work after a few runs",
     "__device__ unsigned int runs;\n"
     "// @launch counted<<<ceil_div(N, 128), 128>>>(a, b, y, N)\n"
     "extern \"C\" __global__ void counted(const float* a, const float* b, float* y, int N) {\n"
     "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (runs > 40) return;\n"
     "  if (i >= N) return;\n" KS_SLOW_CUDA
     "  if (i == 0) atomicAdd(&runs, 1u);\n"
     "}\n"},
    {"a launch counter that shortens every other timed run",
     "__device__ unsigned int runs;\n"
     "// @launch halves<<<ceil_div(N, 128), 128>>>(a, b, y, N)\n"
     "extern \"C\" __global__ void halves(const float* a, const float* b, float* y, int N) {\n"
     "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  const unsigned int seen = runs;\n"
     "  if (seen > 40 && (seen & 1u) && i >= N / 2) return;\n"
     "  if (i >= N) return;\n" KS_SLOW_CUDA
     "  __syncthreads();\n"
     "  if (i == 0) atomicAdd(&runs, 1u);\n"
     "}\n"},
};

// y = 2a + b with a reference that loops 1000 steps per element (tests/data/slow_reference_task): the
// cheats' slow path (4000 steps) is about a quarter of its speed, their fast path many times faster.
Task slow_task() { return Task::load(std::string(KERNELSMITH_TEST_DATA_DIR) + "/slow_reference_task"); }

// The evaluator's verdict on a cheat is acceptable when it is not "ok at a speedup": incorrect, or ok at
// the slow path's honest speed (far below the reference's), and never a fitness above 1.
void check_not_rewarded(Evaluator& evaluator, const Task& task, const std::string& language, const Cheat& cheat,
                        const std::string& mode) {
  const Evaluation evaluation = evaluator.evaluate(task, test::candidate_in(language, cheat.source));
  INFO(language << " cheat: " << cheat.name << " (" << mode << "): " << to_string(evaluation.status) << ": "
                << evaluation.message);
  CHECK((evaluation.status == Status::ok || evaluation.status == Status::incorrect));
  if (evaluation.status == Status::ok) CHECK(evaluation.speedup < 1.0);
  CHECK(evaluation.fitness <= 1.0);
}

}  // namespace

TEST_CASE("OpenCL: state kept between runs earns no speedup", "[harness][opencl][integrity]") {
  KERNELSMITH_REQUIRE_OPENCL_DEVICE();
  const Task task = slow_task();
  for (const std::string mode : {"screen", "strict"}) {
    EvaluatorOptions options = test::fast_options("opencl", false, 1);
    options.mode = mode;
    auto evaluator = create_evaluator(options);
    for (const Cheat& cheat : kOpenClCheats) check_not_rewarded(*evaluator, task, "opencl", cheat, mode);
  }
}

TEST_CASE("CUDA: state kept between runs earns no speedup", "[gpu][harness][integrity]") {
  KERNELSMITH_REQUIRE_CUDA_DEVICE();
  // At N = 4096 the outputs (16 KiB) are compared after every timed run; at N = 2^20 (4 MiB) a spread
  // selection after random runs, and the whole after the last.
  Task large = slow_task();
  large.timing_sizes.sizes["N"] = 1 << 20;
  for (const Task& task : {slow_task(), large}) {
    for (const std::string mode : {"screen", "strict"}) {
      EvaluatorOptions options = test::fast_options("cuda", true, 2);
      options.mode = mode;
      auto evaluator = create_evaluator(options);
      for (const Cheat& cheat : kCudaCheats) check_not_rewarded(*evaluator, task, "cuda", cheat, mode);
    }
  }
}
