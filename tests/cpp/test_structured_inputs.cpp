// Constant and structured input distributions end to end on an OpenCL device (PoCL on the CI machine):
// a candidate that relies on the structure (reads the upper triangle of a symmetric input, sums a whole
// lower-triangular row, does not normalise probability rows, hard-codes a constant) agrees with a
// reference that does not rely on it, under every input kind; without the structure the same candidate
// fails, so the checks can fail.
#include <set>
#include <string>

#include "catch.hpp"
#include "harness_test_support.hpp"
#include "kernelsmith/evaluator.hpp"
#include "kernelsmith/task.hpp"

using namespace kernelsmith;

namespace {

// y_sym = A x (A symmetric; the reference reads its lower triangle only), y_tri = L x (L lower
// triangular; the reference sums j <= i only), y_prob[i] = alpha * sum_j P[i][j] v[i][j] (P's rows are
// probabilities), alpha a constant 0.5.
constexpr const char* kManifest = R"json({
  "schema": "kernelsmith.task/1",
  "name": "structured_inputs",
  "sizes": {"N": 64},
  "check_sizes": [{"name": "odd", "sizes": {"N": 7}}, {"name": "one", "sizes": {"N": 1}}],
  "tensors": [
    {"name": "A", "dtype": "float32", "shape": ["N", "N"], "role": "input",
     "distribution": {"kind": "normal", "a": 0, "b": 1, "structure": "symmetric"}},
    {"name": "L", "dtype": "float32", "shape": ["N", "N"], "role": "input",
     "distribution": {"kind": "uniform", "a": -1, "b": 1, "structure": "lower_triangular"}},
    {"name": "P", "dtype": "float32", "shape": ["N", "N"], "role": "input",
     "distribution": {"kind": "normal", "a": 0, "b": 1, "structure": "probability_rows"}},
    {"name": "v", "dtype": "float32", "shape": ["N", "N"], "role": "input"},
    {"name": "x", "dtype": "float32", "shape": ["N"], "role": "input"},
    {"name": "alpha", "dtype": "float32", "shape": [], "role": "input", "distribution": {"kind": "constant", "a": 0.5}},
    {"name": "y_sym", "dtype": "float32", "shape": ["N"], "role": "output"},
    {"name": "y_tri", "dtype": "float32", "shape": ["N"], "role": "output"},
    {"name": "y_prob", "dtype": "float32", "shape": ["N"], "role": "output"}
  ],
  "work": {"flops": "8 * N * N", "bytes": "4 * (4 * N * N + 4 * N + 1)"},
  "references": {"opencl": {"source": "// @launch structured<<<ceil_div(N, 64), 64>>>(A, L, P, v, x, alpha, y_sym, y_tri, y_prob, N)\n__kernel void structured(__global const float* A, __global const float* L, __global const float* P,\n                         __global const float* v, __global const float* x, __global const float* alpha,\n                         __global float* y_sym, __global float* y_tri, __global float* y_prob, int n) {\n  const int i = get_global_id(0);\n  if (i >= n) return;\n  float s = 0.0f, t = 0.0f, e = 0.0f;\n  for (int j = 0; j < n; ++j) {\n    s += (j <= i ? A[i * n + j] : A[j * n + i]) * x[j];\n    if (j <= i) t += L[i * n + j] * x[j];\n    e += P[i * n + j] * v[i * n + j];\n  }\n  y_sym[i] = s;\n  y_tri[i] = t;\n  y_prob[i] = alpha[0] * e;\n}\n"}}
})json";

// Correct only for the structured inputs: the transposed read of A, the whole row of L, the row of P
// normalised by its sum, and 0.5 in place of alpha.
constexpr const char* kRelyingOnStructure = R"cl(// @launch structured<<<ceil_div(N, 64), 64>>>(A, L, P, v, x, alpha, y_sym, y_tri, y_prob, N)
__kernel void structured(__global const float* A, __global const float* L, __global const float* P,
                         __global const float* v, __global const float* x, __global const float* alpha,
                         __global float* y_sym, __global float* y_tri, __global float* y_prob, int n) {
  const int i = get_global_id(0);
  if (i >= n) return;
  float s = 0.0f, t = 0.0f, e = 0.0f, total = 0.0f;
  for (int j = 0; j < n; ++j) {
    s += A[j * n + i] * x[j];
    t += L[i * n + j] * x[j];
    e += P[i * n + j] * v[i * n + j];
    total += P[i * n + j];
  }
  y_sym[i] = s;
  y_tri[i] = t;
  y_prob[i] = 0.5f * (e / total);
}
)cl";

Candidate opencl(const std::string& source) { return test::candidate_in("opencl", source); }

TensorSpec& tensor_of(Task& task, const std::string& name) {
  for (auto& tensor : task.tensors) {
    if (tensor.name == name) return tensor;
  }
  FAIL("no tensor " << name);
  throw;
}

}  // namespace

TEST_CASE("structured and constant inputs hold under every input kind on the device", "[harness][opencl][structure]") {
  if (!test::opencl_available()) {
    WARN("skipped: no OpenCL device");
    return;
  }
  const Task task = Task::from_json(kManifest, "structured_inputs");
  auto evaluator = create_evaluator(test::fast_options("opencl", false, 1));
  const Evaluation evaluation = evaluator->evaluate(task, opencl(kRelyingOnStructure));
  INFO(evaluation.message);
  REQUIRE(evaluation.status == Status::ok);
  REQUIRE(evaluation.correctness.has_value());
  // Every adversarial kind ran on the check sizes and kept the structure.
  std::set<std::string> kinds;
  for (const auto& check : evaluation.correctness->checks) kinds.insert(check.inputs);
  CHECK(kinds == std::set<std::string>{"random", "large", "tiny", "mixed_scale", "constant"});

  // Without each structure (or with alpha drawn), the same candidate is wrong on the output that needs it.
  struct Control {
    const char* tensor;
    Distribution distribution;
    const char* output;
  };
  const Control controls[] = {
      {"A", {"normal", 0, 1, "none"}, "y_sym"},
      {"L", {"uniform", -1, 1, "none"}, "y_tri"},
      {"P", {"normal", 0, 1, "none"}, "y_prob"},
      {"alpha", {"uniform", 1, 2, "none"}, "y_prob"},
  };
  for (const auto& control : controls) {
    INFO("without the distribution of " << control.tensor);
    Task changed = task;
    tensor_of(changed, control.tensor).distribution = control.distribution;
    changed.validate("control");
    const Evaluation failed = evaluator->evaluate(changed, opencl(kRelyingOnStructure));
    INFO(failed.message);
    CHECK(failed.status == Status::incorrect);
    CHECK(failed.message.find(std::string(control.output) + ":") != std::string::npos);
  }
}
