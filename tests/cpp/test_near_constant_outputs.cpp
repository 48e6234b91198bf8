// The near-constant output rule end to end on an OpenCL device (PoCL on the CI machine): a softmax's
// outputs are about 1/N, so an absolute tolerance lets zeros or a constant 1/N through (KernelBench's
// hole); the evaluator fails both, saying why, and passes a right kernel.
#include <string>

#include "catch.hpp"
#include "harness_test_support.hpp"
#include "kernelsmith/evaluator.hpp"
#include "kernelsmith/task.hpp"

using namespace kernelsmith;

namespace {

constexpr const char* kReference = R"cl(// @launch softmax<<<ceil_div(M, 64), 64>>>(x, y, M, N)
__kernel void softmax(__global const float* x, __global float* y, int M, int N) {
  const int row = get_global_id(0);
  if (row >= M) return;
  __global const float* r = x + row * N;
  float largest = r[0];
  for (int k = 1; k < N; ++k) largest = fmax(largest, r[k]);
  float sum = 0.0f;
  for (int k = 0; k < N; ++k) sum += exp(r[k] - largest);
  for (int k = 0; k < N; ++k) y[row * N + k] = exp(r[k] - largest) / sum;
}
)cl";

// Row-wise softmax over N columns; `x_distribution` and `tolerance` are JSON texts.
Task softmax_task(const std::string& x_distribution, const std::string& tolerance) {
  std::string manifest = R"json({
    "schema": "kernelsmith.task/1",
    "name": "softmax_rows",
    "sizes": {"M": 32, "N": 1024},
    "check_sizes": [{"name": "odd", "sizes": {"M": 3, "N": 513}}],
    "tensors": [
      {"name": "x", "dtype": "float32", "shape": ["M", "N"], "role": "input", "distribution": X_DISTRIBUTION},
      {"name": "y", "dtype": "float32", "shape": ["M", "N"], "role": "output"}
    ],
    TOLERANCE
    "work": {"flops": "5 * M * N", "bytes": "8 * M * N"},
    "references": {"opencl": {"source": REFERENCE}}
  })json";
  const auto replace = [&manifest](const std::string& key, const std::string& value) {
    manifest.replace(manifest.find(key), key.size(), value);
  };
  replace("X_DISTRIBUTION", x_distribution);
  replace("TOLERANCE", tolerance.empty() ? "" : "\"tolerance\": " + tolerance + ",");
  std::string escaped;
  for (const char c : std::string(kReference)) {
    if (c == '\n') {
      escaped += "\\n";
    } else {
      if (c == '"' || c == '\\') escaped += '\\';
      escaped += c;
    }
  }
  replace("REFERENCE", "\"" + escaped + "\"");
  return Task::from_json(manifest, "softmax_rows");
}

// The outputs a candidate writes in place of the softmax.
std::string writing(const std::string& value) {
  return "// @launch fill<<<ceil_div(M * N, 256), 256>>>(y, M, N)\n"
         "__kernel void fill(__global float* y, int M, int N) {\n"
         "  const int i = get_global_id(0);\n"
         "  if (i < M * N) y[i] = " + value + ";\n"
         "}\n";
}

// A right softmax computed another way: one pass for the maximum and the sum (online softmax).
constexpr const char* kOnlineSoftmax = R"cl(// @launch softmax<<<ceil_div(M, 32), 32>>>(x, y, M, N)
__kernel void softmax(__global const float* x, __global float* y, int M, int N) {
  const int row = get_global_id(0);
  if (row >= M) return;
  __global const float* r = x + row * N;
  float largest = -INFINITY;
  float sum = 0.0f;
  for (int k = 0; k < N; ++k) {
    const float next = fmax(largest, r[k]);
    sum = sum * exp(largest - next) + exp(r[k] - next);
    largest = next;
  }
  for (int k = 0; k < N; ++k) y[row * N + k] = exp(r[k] - largest) / sum;
}
)cl";

Candidate opencl(const std::string& source) { return test::candidate_in("opencl", source); }

}  // namespace

TEST_CASE("zeros and a constant 1/N fail a softmax as near-constant; a right kernel passes", "[harness][opencl][near_constant]") {
  if (!test::opencl_available()) {
    WARN("skipped: no OpenCL device");
    return;
  }
  auto evaluator = create_evaluator(test::fast_options("opencl", false, 1));
  SECTION("inputs that make the outputs vary widely, the default tolerance") {
    const Task task = softmax_task(R"({"kind": "normal", "a": 0, "b": 2})", "");
    const Evaluation right = evaluator->evaluate(task, opencl(kOnlineSoftmax));
    INFO(right.message);
    CHECK(right.status == Status::ok);
    for (const std::string value : {"0.0f", "1.0f / N"}) {
      INFO("writing " << value);
      const Evaluation wrong = evaluator->evaluate(task, opencl(writing(value)));
      INFO(wrong.message);
      CHECK(wrong.status == Status::incorrect);
      CHECK(wrong.message.find("y is near-constant (relative spread 0) where the expected output varies (spread ") !=
            std::string::npos);
    }
  }
  SECTION("inputs close together and a loose tolerance: only the spread tells a constant from the softmax") {
    // x in [0, 0.01): every output is 1/N within 1%, inside a 2% tolerance.
    const Task task = softmax_task(R"({"kind": "uniform", "a": 0, "b": 0.01})", R"({"atol": 0.01, "rtol": 0.01})");
    const Evaluation right = evaluator->evaluate(task, opencl(kOnlineSoftmax));
    INFO(right.message);
    CHECK(right.status == Status::ok);
    const Evaluation constant = evaluator->evaluate(task, opencl(writing("1.0f / N")));
    INFO(constant.message);
    CHECK(constant.status == Status::incorrect);
    CHECK(constant.message.find("y is near-constant (relative spread 0) where the expected output varies") !=
          std::string::npos);
    REQUIRE(constant.correctness.has_value());
    const CorrectnessCheck& failed = constant.correctness->checks.back();
    REQUIRE(failed.outputs.size() == 1);
    CHECK(failed.outputs[0].mismatches == 0);  // every element within the tolerance
    const Evaluation zeros = evaluator->evaluate(task, opencl(writing("0.0f")));
    INFO(zeros.message);
    CHECK(zeros.status == Status::incorrect);
    CHECK(zeros.message.find("y is near-constant") != std::string::npos);
  }
}
