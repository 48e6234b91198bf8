// The whole evaluator through the MACA plugin and the stand-in runtime, on the CUDA GPU the stand-in runs
// on, side by side with the CUDA backend: the same candidates (MACA C++ is CUDA's syntax) get the same
// statuses, and the same kernel times the same within 2%. Skipped, saying why, where there is no GPU or
// the plugin was not built against the stand-in.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "catch.hpp"
#include "harness_test_support.hpp"
#include "maca_test_support.hpp"
#include "kernelsmith/evaluator.hpp"
#include "kernelsmith/task.hpp"

using namespace kernelsmith;

namespace {

// y = 2a + b in one kernel, with one line (or the plan) changed per way to fail.
std::string add_kernel(const std::string& body, const std::string& plan = "@launch add2<<<ceil_div(N, 128), 128>>>") {
  return "// " + plan + "(y, a, b, N)\n"
         "extern \"C\" __global__ void add2(float* out, const float* x, const float* z, int n) {\n"
         "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n  " +
         body + "\n}\n";
}

struct Case {
  std::string label;
  std::string source;
  Status expected;
};

std::vector<Case> cases() {
  return {
      {"correct", add_kernel("if (i < n) out[i] = x[i] + x[i] + z[i];"), Status::ok},
      {"wrong result", add_kernel("if (i < n) out[i] = 2.0f * x[i] - z[i];"), Status::incorrect},
      {"an element never written", add_kernel("if (i < n - 1) out[i] = 2.0f * x[i] + z[i];"), Status::incorrect},
      {"a syntax error", add_kernel("if (i < n) out[i] = 2.0f * x[i] + ;"), Status::compile_error},
      {"a block too large", add_kernel("if (i < n) out[i] = 2.0f * x[i] + z[i];", "@launch add2<<<1, 4096>>>"),
       Status::invalid_launch},
      {"an illegal address",
       add_kernel("out[(long long)n * 1000000000LL + i] = x[i] + z[i];"), Status::crashed},
  };
}

Evaluation evaluate(const std::string& backend, const Task& task, const std::string& source) {
  // In a worker: the illegal address loses the context of the process that runs it.
  auto evaluator = create_evaluator(test::fast_options(backend, true, 1));
  return evaluator->evaluate(task, test::candidate_in(backend, source));
}

}  // namespace

TEST_CASE("MACA evaluator (the stand-in) classifies candidates as the CUDA evaluator does", "[gpu][maca][evaluator]") {
  KERNELSMITH_SKIP_WHEN(test::maca_device_missing_reason());
  test::UseMacaStandin standin;
  const Task task = test::small_task();
  for (const Case& candidate : cases()) {
    INFO(candidate.label);
    const Evaluation on_cuda = evaluate("cuda", task, candidate.source);
    const Evaluation on_maca = evaluate("maca", task, candidate.source);
    INFO("cuda: " << to_string(on_cuda.status) << ": " << on_cuda.message);
    INFO("maca: " << to_string(on_maca.status) << ": " << on_maca.message);
    CHECK(on_cuda.status == candidate.expected);
    CHECK(on_maca.status == on_cuda.status);
    CHECK(on_maca.backend == "maca");
  }
}

TEST_CASE("MACA (the stand-in) and CUDA time the same kernel within 2%", "[gpu][maca][evaluator][timing]") {
  KERNELSMITH_SKIP_WHEN(test::maca_device_missing_reason());
  test::UseMacaStandin standin;
  // Memory-bound kernels at the tasks' timing sizes (tens to hundreds of microseconds), evaluated in turn on
  // the two backends, three times each; the medians of the kernels' median times are compared.
  for (const char* name : {"relu", "softmax"}) {
    const Task task = Task::load(name);
    const std::string source = task.references.at("cuda").source;
    std::vector<double> cuda_ms, maca_ms;
    for (int round = 0; round < 3; ++round) {
      for (const std::string backend : {"cuda", "maca"}) {
        EvaluatorOptions options;
        options.backend = backend;
        options.cache_dir = test::test_cache_dir();
        const Evaluation evaluation = create_evaluator(options)->evaluate(task, test::candidate_in(backend, source));
        INFO(backend << ": " << evaluation.message);
        REQUIRE(evaluation.status == Status::ok);
        REQUIRE(evaluation.timing.has_value());
        (backend == "cuda" ? cuda_ms : maca_ms).push_back(evaluation.timing->median_ms);
      }
    }
    std::sort(cuda_ms.begin(), cuda_ms.end());
    std::sort(maca_ms.begin(), maca_ms.end());
    const double ratio = maca_ms[1] / cuda_ms[1];
    // The figure the issue asks for, in the test's output.
    std::cout << fmt::format("timing agreement {}: cuda {:.4f} ms, maca {:.4f} ms, maca/cuda {:.4f}\n", name,
                             cuda_ms[1], maca_ms[1], ratio);
    CHECK(ratio > 0.98);
    CHECK(ratio < 1.02);
  }
}
