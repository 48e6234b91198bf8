// KernelRunner and Task data cases: kernels run on the caller's arrays (PoCL here, CUDA device memory in
// place on a GPU), sizes inferred from shapes, and the evaluator's checks on the caller's own data.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
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

using namespace kernelsmith;

namespace {

std::string opencl_unavailable_reason() {
  for (const auto& backend : devices()) {
    if (backend.name != "opencl") continue;
    if (backend.available && !backend.devices.empty()) return {};
    return backend.reason.empty() ? "no OpenCL device" : backend.reason;
  }
  return "this build has no OpenCL backend";
}

#define REQUIRE_OPENCL()                                     \
  do {                                                       \
    const std::string reason_ = opencl_unavailable_reason(); \
    if (!reason_.empty()) {                                  \
      WARN("skipped: " << reason_);                          \
      return;                                                \
    }                                                        \
  } while (false)

std::vector<float> random_floats(std::size_t count, unsigned seed) {
  std::mt19937 generator(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> values(count);
  for (auto& value : values) value = normal(generator);
  return values;
}

TensorRef host_ref(std::vector<float>& values, std::vector<std::int64_t> shape) {
  TensorRef ref;
  ref.dtype = DType::float32;
  ref.shape = std::move(shape);
  ref.data = values.data();
  return ref;
}

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

// The message of the Error a call throws, or "no error".
template <typename Call>
std::string error_of(Call&& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

bool mentions(const std::string& message, const std::string& part) { return message.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("Task::infer_sizes reads sizes from shapes and names every mismatch", "[kernel_runner]") {
  const Task row_sum = Task::load("row_sum");
  CHECK(row_sum.infer_sizes({{"x", {3, 1023}}}) == SizeMap{{"M", 3}, {"K", 1023}});
  CHECK(row_sum.infer_sizes({{"x", {3, 5}}, {"y", {3}}}) == SizeMap{{"M", 3}, {"K", 5}});
  CHECK(row_sum.infer_sizes({{"y", {7}}}, {{"K", 2}}) == SizeMap{{"M", 7}, {"K", 2}});

  auto message_of = [&](const std::map<std::string, std::vector<std::int64_t>>& shapes, const SizeMap& given) {
    try {
      row_sum.infer_sizes(shapes, given);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string rank = message_of({{"x", {12}}}, {});
  CHECK(rank.find("tensor x has shape (12) (1 dimension)") != std::string::npos);
  CHECK(rank.find("[M, K]") != std::string::npos);
  const std::string inconsistent = message_of({{"x", {3, 5}}, {"y", {4}}}, {});
  CHECK(inconsistent.find("inconsistent size M") != std::string::npos);
  CHECK(inconsistent.find("says 3") != std::string::npos);
  CHECK(inconsistent.find("says 4") != std::string::npos);
  CHECK(message_of({{"y", {3}}}, {}).find("cannot infer the size K") != std::string::npos);
  CHECK(message_of({{"x", {3, 5}}}, {{"K", 6}}).find("inconsistent size K") != std::string::npos);
  CHECK(message_of({{"z", {3}}}, {}).find("no tensor \"z\"") != std::string::npos);
  CHECK(message_of({{"x", {3, 5}}}, {{"Q", 1}}).find("no size \"Q\"") != std::string::npos);
  CHECK(message_of({{"x", {0, 5}}}, {}).find("must be positive") != std::string::npos);
}

TEST_CASE("KernelRunner runs the reference and the seed on the caller's arrays (PoCL)", "[kernel_runner][opencl]") {
  REQUIRE_OPENCL();
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
    CHECK((mentions(message, "input x is float64") && mentions(message, "declares it float32")));
  }
    {
    const std::string message = error_of([&] { runner.run({}); });
    INFO(message);
    CHECK((mentions(message, "input x of task row_sum is missing")));
  }
    {
    const std::string message = error_of([&] { runner.run({{"x", host_ref(x, {3, 4})}, {"z", host_ref(x, {3})}}); });
    INFO(message);
    CHECK((mentions(message, "no tensor \"z\"")));
  }
    {
    const std::string message = error_of([&] { runner.run({{"x", host_ref(x, {12})}}); });
    INFO(message);
    CHECK((mentions(message, "1 dimension")));
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
    CHECK((mentions(message, "written in cuda")));
  }
  }
}

TEST_CASE("Task data cases: add_case, JSON round trip and validation", "[kernel_runner]") {
  Task task = Task::load("relu");
  const std::size_t configs_before = task.all_size_configs().size();
  std::vector<float> x = {1.0f, -2.0f, 1234.5f, 0.5f};
  std::vector<float> y = {1.0f, 0.0f, 1234.5f, 0.5f};
  const DataCase& first = task.add_case({{"x", host_ref(x, {4})}});
  CHECK(first.name == "user case 0");
  CHECK(first.sizes == "user case 0");  // N = 4 is no configuration of relu's: one is added
  CHECK(task.all_size_configs().size() == configs_before + 1);
  std::vector<float> x1023 = random_floats(1023, 4);
  const DataCase& second = task.add_case({{"x", host_ref(x1023, {1023})}});
  CHECK(second.sizes == "odd_1023");  // an existing configuration is reused
  const DataCase& third = task.add_case({{"x", host_ref(x, {4})}}, {{"y", host_ref(y, {4})}});
  CHECK(third.sizes == "user case 0");  // the configuration the first case added
  CHECK(task.all_size_configs().size() == configs_before + 1);

  const Task back = Task::from_json(task.to_json());
  REQUIRE(back.cases.size() == 3);
  CHECK(back.cases[2].name == "user case 2");
  CHECK(*back.cases[2].expected.at("y") == *task.cases[2].expected.at("y"));
  CHECK(*back.cases[1].inputs.at("x") == *task.cases[1].inputs.at("x"));
  CHECK(back.to_json() == task.to_json());

  {
    const std::string message = error_of([&] { task.add_case({}); });
    INFO(message);
    CHECK((mentions(message, "x is missing")));
  }
  {
    const std::string message = error_of([&] { task.add_case({{"y", host_ref(y, {4})}}); });
    INFO(message);
    CHECK((mentions(message, "y is an output")));
  }
  {
    const std::string message = error_of([&] { task.add_case({{"x", host_ref(x, {4})}}, {{"y", host_ref(y, {3})}}); });
    INFO(message);
    CHECK((mentions(message, "inconsistent size N")));
  }
  Task broken = task;
  broken.cases[0].inputs["x"] = std::make_shared<const std::vector<std::uint8_t>>(3, std::uint8_t(0));
  {
    const std::string message = error_of([&] { broken.validate(); });
    INFO(message);
    CHECK((mentions(message, "cases[0].inputs.x") && mentions(message, "holds 3 bytes")));
  }
  broken = task;
  broken.cases[1].sizes = "nowhere";
  {
    const std::string message = error_of([&] { broken.validate(); });
    INFO(message);
    CHECK((mentions(message, "no size configuration is named \"nowhere\"")));
  }
}

TEST_CASE("the evaluator checks candidates on the caller's data cases (PoCL)", "[kernel_runner][opencl][harness]") {
  REQUIRE_OPENCL();
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
    CHECK((mentions(message, "not CUDA device memory")));
  }
  owner->free(x_device);
  owner->free(y_device);
}
