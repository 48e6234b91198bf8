// Races between blocks (work-groups) and the schedule check (docs/evaluation.md, "Races"): the second
// run of each correctness check runs a build of the candidate with its block indices reversed, so a
// block that reads what another block has not written yet meets that other block's absence. Each racy
// kernel below is evaluated several times (different seeds) without and with the check; the detection
// rates are reported, and with the check every evaluation must find the race. An honest kernel must pass.
#include <string>
#include <vector>

#include "catch.hpp"
#include "gpu_test_support.hpp"
#include "harness_test_support.hpp"
#include "race_kernels.hpp"
#include "kernelsmith/evaluator.hpp"

using namespace kernelsmith;

namespace {

struct Kernel {
  const char* name;
  const char* source;
};

const std::vector<Kernel> kOpenClRaces = {
    {"a block reads the previous block's last output", test::kOpenClChainedRace},
    {"every block reads a factor that block 0 writes", test::kOpenClSharedFactorRace},
};

const char* kOpenClHonest =
    "// @launch add2<<<ceil_div(N, 64), 64>>>(a, b, y, N)\n"
    "__kernel void add2(__global const float* a, __global const float* b, __global float* y, int N) {\n"
    "  const int i = get_global_id(0);\n"
    "  if (i < N) y[i] = 2.0f * a[i] + b[i];\n"
    "}\n";

const std::vector<Kernel> kCudaRaces = {
    {"a block reads the previous block's last output",
     "// @launch chained<<<ceil_div(N, 128), 128>>>(a, b, y, N)\n"
     "extern \"C\" __global__ void chained(const float* a, const float* b, float* y, int N) {\n"
     "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < N) y[i] = 2.0f * a[i] + b[i];\n"
     "  __syncthreads();\n"
     "  if (threadIdx.x == 0 && blockIdx.x > 0 && i < N) {\n"
     "    const float previous = *(volatile float*)&y[i - 1];\n"
     "    if (!(previous == 2.0f * a[i - 1] + b[i - 1])) y[i] = previous;\n"
     "  }\n"
     "}\n"},
    {"every block reads a factor that block 0 writes",
     "// @workspace factor: float32[1]\n"
     "// @launch shared_factor<<<ceil_div(N, 128), 128>>>(a, b, y, factor, N)\n"
     "extern \"C\" __global__ void shared_factor(const float* a, const float* b, float* y, float* factor, int N) {\n"
     "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i == 0) *(volatile float*)factor = 2.0f;\n"
     "  __syncthreads();\n"
     "  if (i < N) y[i] = *(volatile float*)factor * a[i] + b[i];\n"
     "}\n"},
};

const char* kCudaHonest =
    "// @launch add2<<<ceil_div(N, 128), 128>>>(a, b, y, N)\n"
    "extern \"C\" __global__ void add2(const float* a, const float* b, float* y, int N) {\n"
    "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < N) y[i] = 2.0f * a[i] + b[i];\n"
    "}\n";

constexpr int kEvaluations = 6;

// How many of kEvaluations evaluations (seeds 1..kEvaluations) find the kernel incorrect.
int detections(const std::string& backend, const std::string& language, const char* source, bool schedule_check) {
  int found = 0;
  for (int seed = 1; seed <= kEvaluations; ++seed) {
    EvaluatorOptions options = test::fast_options(backend, false, 1);
    options.seed = static_cast<std::uint64_t>(seed);
    options.screen_schedule_check = schedule_check;
    options.schedule_check = schedule_check;
    const Evaluation evaluation = create_evaluator(options)->evaluate(test::small_task(), test::candidate_in(language, source));
    if (evaluation.status == Status::incorrect) ++found;
  }
  return found;
}

void check_family(const std::string& backend, const std::string& language, const std::vector<Kernel>& races,
                  const char* honest) {
  for (const Kernel& kernel : races) {
    const int without = detections(backend, language, kernel.source, false);
    const int with = detections(backend, language, kernel.source, true);
    // Shown with -s (or when a check fails): the detection rate without and with the schedule check.
    INFO(language << " race: " << kernel.name << ": found in " << without << "/" << kEvaluations
                  << " evaluations without the schedule check, " << with << "/" << kEvaluations << " with it");
    CHECK(with == kEvaluations);
    CHECK(with >= without);
  }
  EvaluatorOptions options = test::fast_options(backend, false, 1);
  options.screen_schedule_check = true;
  const Evaluation evaluation = create_evaluator(options)->evaluate(test::small_task(), test::candidate_in(language, honest));
  INFO(evaluation.message);
  CHECK(evaluation.status == Status::ok);
  for (const auto& flag : evaluation.integrity.flags) {
    CHECK(flag != "race");
    CHECK(flag != "schedule_check_unavailable");
  }
}

}  // namespace

TEST_CASE("OpenCL: races between work-groups show under the reversed schedule", "[harness][opencl][integrity]") {
  KERNELSMITH_REQUIRE_OPENCL_DEVICE();
  check_family("opencl", "opencl", kOpenClRaces, kOpenClHonest);
}

TEST_CASE("CUDA: races between blocks show under the reversed schedule", "[gpu][harness][integrity]") {
  KERNELSMITH_REQUIRE_CUDA_DEVICE();
  check_family("cuda", "cuda", kCudaRaces, kCudaHonest);
}
