// Adversarial cases that cannot judge a kernel, end to end on an OpenCL device (PoCL on the CI machine): a
// LayerNorm of constant rows divides each kernel's rounding of the mean by sqrt(eps), so the reference's
// answer there is rounding noise as much as the candidate's. Such a case is not held against a right
// kernel (it is reported as not judged, with the flag ill_conditioned_case); a well-conditioned case still
// fails a wrong one.
#include <algorithm>
#include <string>

#include "catch.hpp"
#include "harness_test_support.hpp"
#include "kernelsmith/evaluator.hpp"
#include "kernelsmith/task.hpp"

using namespace kernelsmith;

namespace {

// The mean as x[0] plus the mean of the differences from x[0]: exact for a constant row, so the reference
// writes the bias there exactly.
constexpr const char* kReference = R"cl(// @launch layernorm<<<M, 1>>>(x, w, b, y, N)
__kernel void layernorm(__global const float* x, __global const float* w, __global const float* b,
                        __global float* y, int N) {
  __global const float* r = x + get_global_id(0) * N;
  float shift = 0.0f;
  for (int k = 0; k < N; ++k) shift += r[k] - r[0];
  const float mean = r[0] + shift / N;
  float m2 = 0.0f;
  for (int k = 0; k < N; ++k) m2 += (r[k] - mean) * (r[k] - mean);
  const float rstd = 1.0f / sqrt(m2 / N + 1e-5f);
  for (int k = 0; k < N; ++k) y[get_global_id(0) * N + k] = (r[k] - mean) * rstd * w[k] + b[k];
}
)cl";

// The same LayerNorm with the plain mean, writing `output`: right as (r[k] - mean) * rstd * w[k] + b[k], but
// its rounding of the mean is not 0 on a constant row.
std::string candidate_source(const std::string& output) {
  std::string source = R"cl(// @launch layernorm<<<M, 1>>>(x, w, b, y, N)
__kernel void layernorm(__global const float* x, __global const float* w, __global const float* b,
                        __global float* y, int N) {
  __global const float* r = x + get_global_id(0) * N;
  float sum = 0.0f;
  for (int k = 0; k < N; ++k) sum += r[k];
  const float mean = sum / N;
  float m2 = 0.0f;
  for (int k = 0; k < N; ++k) m2 += (r[k] - mean) * (r[k] - mean);
  const float rstd = 1.0f / sqrt(m2 / N + 1e-5f);
  for (int k = 0; k < N; ++k) y[get_global_id(0) * N + k] = OUTPUT;
}
)cl";
  source.replace(source.find("OUTPUT"), 6, output);
  return source;
}

Task layernorm_task() {
  std::string escaped;
  for (const char c : std::string(kReference)) {
    if (c == '\n') {
      escaped += "\\n";
    } else {
      if (c == '"' || c == '\\') escaped += '\\';
      escaped += c;
    }
  }
  return Task::from_json(R"json({
    "schema": "kernelsmith.task/1",
    "name": "layernorm_rows",
    "sizes": {"M": 8, "N": 1000},
    "check_sizes": [{"name": "odd", "sizes": {"M": 3, "N": 777}}],
    "tensors": [
      {"name": "x", "dtype": "float32", "shape": ["M", "N"], "role": "input", "distribution": {"kind": "normal", "a": 3, "b": 1}},
      {"name": "w", "dtype": "float32", "shape": ["N"], "role": "input", "distribution": {"kind": "normal", "a": 1, "b": 0.1}},
      {"name": "b", "dtype": "float32", "shape": ["N"], "role": "input", "distribution": {"kind": "normal", "a": 0, "b": 0.1}},
      {"name": "y", "dtype": "float32", "shape": ["M", "N"], "role": "output"}
    ],
    "work": {"flops": "8 * M * N", "bytes": "8 * M * N"},
    "references": {"opencl": {"source": ")json" + escaped + R"json("}}
  })json",
                         "layernorm_rows");
}

}  // namespace

TEST_CASE("an ill-conditioned adversarial case is not held against a right kernel; a wrong one still fails",
          "[harness][opencl][ill_conditioned]") {
  if (!test::opencl_available()) {
    WARN("skipped: no OpenCL device");
    return;
  }
  auto evaluator = create_evaluator(test::fast_options("opencl", false, 1));
  const Task task = layernorm_task();

  const Evaluation right = evaluator->evaluate(task, test::candidate_in("opencl", candidate_source("(r[k] - mean) * rstd * w[k] + b[k]")));
  INFO(right.message);
  CHECK(right.status == Status::ok);
  REQUIRE(right.correctness.has_value());
  bool constant_case_not_judged = false;
  for (const CorrectnessCheck& check : right.correctness->checks) {
    if (check.inputs == "constant" && check.message.rfind("not judged: the case is ill-conditioned", 0) == 0) {
      constant_case_not_judged = check.passed;
    }
    if (check.inputs == "random") CHECK(check.message.empty());
  }
  CHECK(constant_case_not_judged);
  CHECK(std::find(right.integrity.flags.begin(), right.integrity.flags.end(), "ill_conditioned_case") !=
        right.integrity.flags.end());

  // Without the bias, wrong on every case: the random ones judge it.
  const Evaluation wrong = evaluator->evaluate(task, test::candidate_in("opencl", candidate_source("(r[k] - mean) * rstd * w[k]")));
  INFO(wrong.message);
  CHECK(wrong.status == Status::incorrect);
  CHECK(wrong.message.find("random inputs") != std::string::npos);

  // Wrong only where the inputs are large: a well-conditioned adversarial case, so it counts.
  const Evaluation clipped = evaluator->evaluate(
      task, test::candidate_in("opencl", candidate_source("fabs(r[k]) > 1000.0f ? 0.0f : (r[k] - mean) * rstd * w[k] + b[k]")));
  INFO(clipped.message);
  CHECK(clipped.status == Status::incorrect);
  CHECK(clipped.message.find("large inputs") != std::string::npos);
}
