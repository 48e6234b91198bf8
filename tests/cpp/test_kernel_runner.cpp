// KernelRunner: kernels run on the caller's arrays (PoCL here, CUDA device memory in place on a GPU), and
// the evaluator's checks on the caller's own data cases (the cases themselves: test_task_cases.cpp).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "catch.hpp"
#include "gpu_test_support.hpp"
#include "harness_test_support.hpp"
#include "kernelsmith/backend.hpp"
#include "kernelsmith/device.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/evaluator.hpp"
#include "kernelsmith/kernel_runner.hpp"
#include "kernelsmith/task.hpp"
#include "test_support.hpp"

using namespace kernelsmith;
using test::contains;
using test::error_of;
using test::host_ref;
using test::random_floats;

namespace {

std::vector<float> floats_of(const HostTensor& tensor) {
  std::vector<float> values(tensor.data.size() / sizeof(float));
  std::memcpy(values.data(), tensor.data.data(), tensor.data.size());
  return values;
}

Candidate seed_of(const Task& task, const std::string& language) {
  Candidate candidate;
  candidate.language = language;
  candidate.source = task.seeds.at(language).source;
  candidate.lineage.origin = "seed";
  return candidate;
}

// Correct ReLU everywhere except on the exact value 1234.5, which no generated input holds.
const char* kReluWrongOnOneValue = R"(
// @launch relu<<<ceil_div(N, 64), 64>>>(x, y, N)
__kernel void relu(__global const float* x, __global float* y, int N) {
  const int i = get_global_id(0);
  if (i < N) y[i] = x[i] == 1234.5f ? -1.0f : fmax(x[i], 0.0f);
}
)";

}  // namespace

TEST_CASE("KernelRunner runs the reference and the seed on the caller's arrays (PoCL)", "[kernel_runner][opencl]") {
  KERNELSMITH_REQUIRE_OPENCL_DEVICE();
  SECTION("relu at a size no configuration has") {
    const Task task = Task::load("relu");
    std::vector<float> x = random_floats(3001, 1);
    std::vector<float> expected(x.size());
    std::transform(x.begin(), x.end(), expected.begin(), [](float v) { return v > 0.0f ? v : 0.0f; });
    for (const bool use_reference : {true, false}) {
      KernelRunner runner = use_reference ? KernelRunner::reference(task, {"opencl", 0})
                                          : KernelRunner(task, seed_of(task, "opencl"), {"opencl", 0});
      CHECK(runner.backend_name() == "opencl");
      CHECK_FALSE(runner.supports_device_tensors());
      CHECK(runner.infer_sizes({{"x", host_ref(x, {3001})}}) == SizeMap{{"N", 3001}});
      const auto outputs = runner.run({{"x", host_ref(x, {3001})}});
      REQUIRE(outputs.size() == 1);
      const HostTensor& y = outputs.at("y");
      CHECK(y.dtype == DType::float32);
      CHECK(y.shape == std::vector<std::int64_t>{3001});
      CHECK(floats_of(y) == expected);
      CHECK(runner.compile_report().ok);
    }
  }
  SECTION("row_sum on a 3 x 1023 matrix, and into the caller's output array") {
    const Task task = Task::load("row_sum");
    std::vector<float> x = random_floats(3 * 1023, 2);
    std::vector<double> sums(3, 0.0);
    for (std::size_t m = 0; m < 3; ++m) {
      for (std::size_t k = 0; k < 1023; ++k) sums[m] += x[m * 1023 + k];
    }
    KernelRunner runner(task, seed_of(task, "opencl"));
    const auto outputs = runner.run({{"x", host_ref(x, {3, 1023})}});
    const std::vector<float> y = floats_of(outputs.at("y"));
    REQUIRE(y.size() == 3);
    for (std::size_t m = 0; m < 3; ++m) CHECK(y[m] == Approx(sums[m]).margin(1e-3));

    std::vector<float> into(3, -7.0f);
    const auto none_returned = runner.run({{"x", host_ref(x, {3, 1023})}, {"y", host_ref(into, {3})}});
    CHECK(none_returned.empty());
    CHECK(into == y);
  }
  SECTION("bad calls name the tensor and the problem") {
    const Task task = Task::load("row_sum");
    KernelRunner runner = KernelRunner::reference(task, {"opencl", 0});
    std::vector<float> x = random_floats(12, 3);
    std::vector<double> wide(12, 1.0);
    TensorRef as_double;
    as_double.dtype = DType::float64;
    as_double.shape = {3, 4};
    as_double.data = wide.data();
    {
    const std::string message = error_of([&] { runner.run({{"x", as_double}}); });
    INFO(message);
    CHECK((contains(message, "input x is float64") && contains(message, "declares it float32")));
  }
    {
    const std::string message = error_of([&] { runner.run({}); });
    INFO(message);
    CHECK((contains(message, "input x of task row_sum is missing")));
  }
    {
    const std::string message = error_of([&] { runner.run({{"x", host_ref(x, {3, 4})}, {"z", host_ref(x, {3})}}); });
    INFO(message);
    CHECK((contains(message, "no tensor \"z\"")));
  }
    {
    const std::string message = error_of([&] { runner.run({{"x", host_ref(x, {12})}}); });
    INFO(message);
    CHECK((contains(message, "1 dimension")));
  }
    TensorRef on_device = host_ref(x, {3, 4});
    on_device.on_device = true;
    REQUIRE_THROWS_AS(runner.run({{"x", on_device}}), ValidationError);
    Candidate cuda;
    cuda.language = "cuda";
    cuda.source = task.references.at("cuda").source;
    {
    const std::string message = error_of([&] { KernelRunner unused(task, cuda, {"opencl", 0}); });
    INFO(message);
    CHECK((contains(message, "written in cuda")));
  }
  }
}

TEST_CASE("the evaluator checks candidates on the caller's data cases (PoCL)", "[kernel_runner][opencl][harness]") {
  KERNELSMITH_REQUIRE_OPENCL_DEVICE();
  Task task = Task::load("relu");
  task.timing_sizes.sizes["N"] = 65536;  // quick on a CPU device
  std::vector<float> x = random_floats(512, 5);
  x[100] = 1234.5f;
  task.add_case({{"x", host_ref(x, {512})}});
  Candidate wrong;
  wrong.language = "opencl";
  wrong.source = kReluWrongOnOneValue;

  for (const bool isolate : {false, true}) {
    INFO("isolate = " << isolate);
    auto evaluator = create_evaluator(test::fast_options("opencl", isolate, 1));
    const Evaluation good = evaluator->evaluate(task, seed_of(task, "opencl"));
    INFO(good.message);
    REQUIRE(good.status == Status::ok);
    REQUIRE(good.correctness.has_value());
    const auto& last = good.correctness->checks.back();
    CHECK(last.inputs == "user case 0");
    CHECK(last.sizes == "user case 0");
    CHECK(last.passed);

    const Evaluation bad = evaluator->evaluate(task, wrong);
    INFO(bad.message);
    CHECK(bad.status == Status::incorrect);
    CHECK(bad.message.find("user case 0") != std::string::npos);
    CHECK(bad.message.find("index 100") != std::string::npos);
    REQUIRE(bad.correctness.has_value());
    CHECK(bad.correctness->checks.back().outputs.at(0).first_mismatch == 100);
    // Every built-in check passed before it.
    for (std::size_t i = 0; i + 1 < bad.correctness->checks.size(); ++i) CHECK(bad.correctness->checks[i].passed);
  }

  SECTION("expected outputs given by the caller are what the candidate is held to") {
    Task with_expected = Task::load("relu");
    with_expected.timing_sizes.sizes["N"] = 65536;
    std::vector<float> inputs = random_floats(256, 6);
    std::vector<float> claimed(inputs.size());
    std::transform(inputs.begin(), inputs.end(), claimed.begin(), [](float v) { return v > 0.0f ? v : 0.0f; });
    claimed[7] += 1.0f;  // the caller's expectation disagrees with ReLU at one element
    with_expected.add_case({{"x", host_ref(inputs, {256})}}, {{"y", host_ref(claimed, {256})}});
    auto evaluator = create_evaluator(test::fast_options("opencl", false, 1));
    const Evaluation evaluation = evaluator->evaluate(with_expected, seed_of(with_expected, "opencl"));
    INFO(evaluation.message);
    CHECK(evaluation.status == Status::incorrect);
    CHECK(evaluation.message.find("user case 0") != std::string::npos);
    CHECK(evaluation.message.find("index 7") != std::string::npos);
  }
}

TEST_CASE("KernelRunner uses CUDA device memory in place", "[kernel_runner][gpu]") {
  KERNELSMITH_REQUIRE_CUDA_DEVICE();
  const Task task = Task::load("row_sum");
  // Device memory the runner does not own: allocated by a second backend in the same primary context, as
  // PyTorch or CuPy would.
  auto owner = create_backend("cuda", 0);
  std::vector<float> x = random_floats(17 * 4097, 7);
  const std::size_t x_bytes = x.size() * sizeof(float);
  const std::uint64_t x_device = owner->allocate(x_bytes);
  const std::uint64_t y_device = owner->allocate(17 * sizeof(float));
  owner->write(x_device, x.data(), x_bytes);

  KernelRunner runner(task, seed_of(task, "cuda"), {"cuda", 0});
  REQUIRE(runner.supports_device_tensors());
  TensorRef x_ref;
  x_ref.shape = {17, 4097};
  x_ref.data = reinterpret_cast<void*>(x_device);
  x_ref.on_device = true;
  TensorRef y_ref = x_ref;
  y_ref.shape = {17};
  y_ref.data = reinterpret_cast<void*>(y_device);
  // Output written in place on the device.
  CHECK(runner.run({{"x", x_ref}, {"y", y_ref}}).empty());
  std::vector<float> y(17);
  owner->read(y_device, y.data(), y.size() * sizeof(float));
  // Device input, output back on the host: the same values.
  const std::vector<float> back = floats_of(runner.run({{"x", x_ref}}).at("y"));
  for (std::size_t m = 0; m < 17; ++m) {
    double sum = 0.0;
    for (std::size_t k = 0; k < 4097; ++k) sum += x[m * 4097 + k];
    CHECK(y[m] == Approx(sum).margin(1e-3));
    CHECK(back[m] == y[m]);
  }
  // The caller's memory stays the caller's: still readable after the runner is gone.
  { KernelRunner gone = std::move(runner); }
  std::vector<float> again(17);
  owner->read(y_device, again.data(), again.size() * sizeof(float));
  CHECK(again == y);
  // An address the driver does not know is refused with a message, not a crash.
  TensorRef bogus = x_ref;
  bogus.data = reinterpret_cast<void*>(std::uintptr_t(0x10));
  KernelRunner other(task, seed_of(task, "cuda"), {"cuda", 0});
  {
    const std::string message = error_of([&] { other.run({{"x", bogus}}); });
    INFO(message);
    CHECK((contains(message, "not CUDA device memory")));
  }
  owner->free(x_device);
  owner->free(y_device);
}
