// Device sets (EvaluatorOptions::devices): how a set is resolved against a backend's devices, and the
// built-in evaluator over a set on the OpenCL backend (PoCL's CPU device, given twice so that two workers
// share it): every candidate is evaluated once, on a device of the set, each worker times the task's
// baseline once, and the results have the single-device evaluator's form.
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "catch.hpp"
#include "evaluate/device_set.hpp"
#include "harness_test_support.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/evaluator.hpp"

using namespace kernelsmith;
using kernelsmith::detail::resolve_device_set;

namespace {

BackendInfo backend_with(const std::vector<std::string>& architectures) {
  BackendInfo backend;
  backend.name = "cuda";
  backend.available = true;
  for (std::size_t i = 0; i < architectures.size(); ++i) {
    DeviceInfo device;
    device.backend = "cuda";
    device.index = static_cast<int>(i);
    device.name = "GPU " + std::to_string(i);
    device.architecture = architectures[i];
    backend.devices.push_back(device);
  }
  return backend;
}

EvaluatorOptions with_devices(const std::string& devices, int device = 0) {
  EvaluatorOptions options;
  options.device = device;
  options.devices = devices;
  return options;
}

std::string failure_of(const EvaluatorOptions& options, const BackendInfo& backend) {
  try {
    resolve_device_set(options, backend);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A correct candidate of the harness task (y = 2a + b), written differently from the reference.
Candidate correct_candidate(int variant) {
  return test::candidate_in("opencl", "// @launch twice_plus<<<ceil_div(N, 64), 64>>>(a, b, y, N)\n"
                                      "__kernel void twice_plus(__global const float* a, __global const float* b,\n"
                                      "                         __global float* y, int n) {\n"
                                      "  const int i = get_global_id(0);\n"
                                      "  if (i < n) y[i] = a[i] + a[i] + b[i] + " +
                                          std::to_string(variant) + " * 0.0f;\n"
                                      "}\n");
}

}  // namespace

TEST_CASE("a device set resolves to one worker per entry", "[device_set]") {
  const BackendInfo four = backend_with({"sm_90", "sm_90", "sm_90", "sm_90"});
  CHECK(resolve_device_set(with_devices("", 2), four) == std::vector<int>{2});
  CHECK(resolve_device_set(with_devices("all"), four) == std::vector<int>{0, 1, 2, 3});
  CHECK(resolve_device_set(with_devices(" all "), four) == std::vector<int>{0, 1, 2, 3});
  CHECK(resolve_device_set(with_devices("3, 1"), four) == std::vector<int>{3, 1});
  CHECK(resolve_device_set(with_devices("0,0"), four) == std::vector<int>{0, 0});  // two workers, one device
}

TEST_CASE("a bad device set is refused in the option's words", "[device_set]") {
  const BackendInfo two = backend_with({"sm_90", "sm_90"});
  CHECK(contains(failure_of(with_devices("0,x"), two), "has the entry \"x\""));
  CHECK(contains(failure_of(with_devices("0,,1"), two), "has the entry \"\""));
  CHECK(contains(failure_of(with_devices("-1"), two), "has the entry \"-1\""));
  CHECK(contains(failure_of(with_devices("0,5"), two), "cuda device 5 does not exist: there are 2 devices (0 to 1)"));
  CHECK(contains(failure_of(with_devices("", 2), two), "cuda device 2 does not exist"));
  CHECK(contains(failure_of(with_devices("all"), backend_with({})), "has no device"));
  const std::string mixed = failure_of(with_devices("all"), backend_with({"sm_90", "sm_80"}));
  CHECK(contains(mixed, "mixes architectures"));
  CHECK(contains(mixed, "device 1 is sm_80"));
}

TEST_CASE("an evaluator over a device set evaluates a batch on all its workers", "[device_set][opencl]") {
  if (!test::opencl_available()) {
    WARN("skipped: no OpenCL device available");
    return;
  }
  EvaluatorOptions options = test::fast_options("opencl", true, 2);
  options.devices = "0,0";
  // Each worker's own timing is what is checked: a baseline stored on disk by an earlier run (or by the other
  // worker first) would be read by both.
  options.use_disk_cache = false;
  const auto evaluator = create_evaluator(options);
  CHECK(evaluator->concurrency() == 2);
  CHECK(evaluator->device_name() == create_evaluator(test::fast_options("opencl", true, 1))->device_name());

  const Task task = test::small_task();
  std::vector<Candidate> candidates;
  for (int variant = 0; variant < 6; ++variant) candidates.push_back(correct_candidate(variant));
  candidates.push_back(test::candidate_in("opencl", "// @launch missing<<<1, 1>>>(a, b, y, N)\n__kernel void k() {}\n"));
  const std::vector<Evaluation> evaluations = evaluator->evaluate_batch(task, candidates);
  REQUIRE(evaluations.size() == candidates.size());
  // Each worker times the baseline once per task and mode, on its device: two baselines among the six.
  std::set<std::tuple<double, double, double>> baselines;
  for (std::size_t i = 0; i + 1 < evaluations.size(); ++i) {
    const Evaluation& evaluation = evaluations[i];
    INFO("candidate " << i << ": " << evaluation.message);
    CHECK(evaluation.status == Status::ok);
    CHECK(evaluation.candidate_id == candidates[i].id());  // in the order given, whichever worker ran it
    CHECK(evaluation.placement.device_index == 0);
    CHECK_FALSE(evaluation.placement.host.empty());
    CHECK(evaluation.placement.retries == 0);
    REQUIRE(evaluation.baseline_timing);
    CHECK(evaluation.speedup > 0.0);
    const TimingReport& baseline = *evaluation.baseline_timing;
    baselines.insert({baseline.median_ms, baseline.mean_ms, baseline.min_ms});
  }
  CHECK(baselines.size() == 2);
  CHECK(evaluations.back().status == Status::invalid_launch);

  // A second batch finds both workers prepared: their baselines are the ones timed before.
  const std::vector<Evaluation> again = evaluator->evaluate_batch(task, {candidates[0], candidates[1]});
  for (const Evaluation& evaluation : again) {
    CHECK(evaluation.status == Status::ok);
    REQUIRE(evaluation.baseline_timing);
    const TimingReport& baseline = *evaluation.baseline_timing;
    CHECK(baselines.count({baseline.median_ms, baseline.mean_ms, baseline.min_ms}) == 1);
  }
}

TEST_CASE("a device set needs worker processes", "[device_set][opencl]") {
  if (!test::opencl_available()) {
    WARN("skipped: no OpenCL device available");
    return;
  }
  EvaluatorOptions options = test::fast_options("opencl", false, 1);
  options.devices = "0,0";
  CHECK_THROWS_AS(create_evaluator(options), ValidationError);
  options.devices = "0";
  CHECK(create_evaluator(options)->concurrency() == 1);
}
