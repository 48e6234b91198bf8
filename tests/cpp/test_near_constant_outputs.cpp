// The near-constant output rule end to end on an OpenCL device (PoCL on the CI machine): a softmax's
// outputs are about 1/N, so an absolute tolerance lets zeros or a constant 1/N through (KernelBench's
// hole); the evaluator fails both, saying why, and passes a right kernel.
#include <string>

#include "catch.hpp"
#include "harness_test_support.hpp"
#include "kernelsmith/error.hpp"
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
  SECTION("outputs that vary less than the tolerance: the task itself is refused") {
    // x in [0, 0.01): every output is 1/N within 1% (relative spread about 0.003), inside a 2% tolerance,
    // so 1/N plus a little noise would pass: no candidate's check can be trusted on this task.
    const Task task = softmax_task(R"({"kind": "uniform", "a": 0, "b": 0.01})", R"({"atol": 0.01, "rtol": 0.01})");
    std::string message;
    try {
      evaluator->evaluate(task, opencl(kOnlineSoftmax));
    } catch (const TaskError& error) {
      message = error.what();
    }
    INFO(message);
    CHECK(message.find("task softmax_rows: the reference output y is near-constant on random inputs (relative "
                       "spread 0.00") != std::string::npos);
    CHECK(message.find("below 0.02, the tolerance's atol + rtol") != std::string::npos);
  }
  SECTION("outputs that vary less than 1e-3 but more than the tolerance: a constant fails, a right kernel passes") {
    // x in [0, 0.002): relative spread about 6e-4, above float32's atol + rtol (2e-4).
    const Task task = softmax_task(R"({"kind": "uniform", "a": 0, "b": 0.002})", "");
    const Evaluation right = evaluator->evaluate(task, opencl(kOnlineSoftmax));
    INFO(right.message);
    CHECK(right.status == Status::ok);
    for (const std::string value : {"1.0f / N", "0.0f"}) {
      INFO("writing " << value);
      const Evaluation wrong = evaluator->evaluate(task, opencl(writing(value)));
      INFO(wrong.message);
      CHECK(wrong.status == Status::incorrect);
    }
  }
}

namespace {

// The mean of N values near 1: the same on every random draw to a few parts in a million.
Task mean_task() {
  const std::string manifest = std::string(R"json({
    "schema": "kernelsmith.task/1",
    "name": "mean_near_one",
    "sizes": {"N": 4096},
    "check_sizes": [{"name": "odd", "sizes": {"N": 1023}}],
    "tensors": [
      {"name": "x", "dtype": "float32", "shape": ["N"], "role": "input",
       "distribution": {"kind": "uniform", "a": 1, "b": 1.001}},
      {"name": "y", "dtype": "float32", "shape": [], "role": "output"}
    ],
    "work": {"flops": "N", "bytes": "4 * N"},
    "references": {"opencl": {"source": "// @launch mean<<<1, 1>>>(x, y, N)\n__kernel void mean(__global const float* x, __global float* y, int N) {\n  float sum = 0.0f;\n  for (int i = 0; i < N; ++i) sum += x[i];\n  y[0] = sum / N;\n}\n"}}
  })json");
  return Task::from_json(manifest, "mean_near_one");
}

}  // namespace

TEST_CASE("a single-value output is judged over every case a candidate is checked on", "[harness][opencl][near_constant]") {
  if (!test::opencl_available()) {
    WARN("skipped: no OpenCL device");
    return;
  }
  const Task task = mean_task();
  const std::string constant = "// @launch mean<<<1, 1>>>(y)\n__kernel void mean(__global float* y) { y[0] = 1.0005f; }\n";
  SECTION("the checked input kinds scale the data: the task is accepted and a constant fails") {
    auto evaluator = create_evaluator(test::fast_options("opencl", false, 1));
    const Evaluation right = evaluator->evaluate(task, opencl(task.references.at("opencl").source));
    INFO(right.message);
    CHECK(right.status == Status::ok);
    const Evaluation wrong = evaluator->evaluate(task, opencl(constant));
    INFO(wrong.message);
    CHECK(wrong.status == Status::incorrect);
    CHECK(wrong.message.find("sizes 'odd', large inputs") != std::string::npos);
  }
  SECTION("without the scaled input kinds every checked case expects about 1: the task is refused") {
    EvaluatorOptions options = test::fast_options("opencl", false, 1);
    options.adversarial_inputs = false;
    auto evaluator = create_evaluator(options);
    std::string message;
    try {
      evaluator->evaluate(task, opencl(constant));
    } catch (const TaskError& error) {
      message = error.what();
    }
    INFO(message);
    CHECK(message.find("output y is near-constant on random inputs") != std::string::npos);
    CHECK(message.find("cases of the sizes 'timing' and 'odd'") != std::string::npos);
  }
}
