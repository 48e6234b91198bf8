// A task must tell a right kernel from one that computes nothing (docs/evaluation.md, "Trivial programs"):
// when a task is prepared, a copy of an input, its negation, zeros and a constant are compared with the
// expected outputs; one that passes every case of the timing sizes, or of the check sizes together, makes
// the task refused. KernelBench's ReLU draws its input from [0, 1): there `y = x` passed every check.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "gpu_test_support.hpp"
#include "harness_test_support.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/evaluator.hpp"

using namespace kernelsmith;

namespace {

// The built-in task `name` with the distribution of its input `input` replaced.
Task with_distribution(const std::string& name, const std::string& input, const nlohmann::json& distribution) {
  nlohmann::json manifest = nlohmann::json::parse(Task::load(name).to_json());
  for (auto& tensor : manifest["tensors"]) {
    if (tensor["name"] == input) tensor["distribution"] = distribution;
  }
  return Task::from_json(manifest.dump(), name + " (narrowed)");
}

// Evaluates the task's OpenCL reference as a candidate and returns the TaskError's message, or "" when the
// evaluation went through.
std::string refusal_of(const Task& task, const std::string& mode) {
  EvaluatorOptions options = test::fast_options("opencl", false, 1);
  options.mode = mode;
  auto evaluator = create_evaluator(options);
  try {
    const Evaluation evaluation =
        evaluator->evaluate(task, test::candidate_in("opencl", task.references.at("opencl").source));
    INFO(to_string(evaluation.status) << ": " << evaluation.message);
    CHECK(evaluation.status == Status::ok);
    return "";
  } catch (const ValidationError& e) {  // a TaskError from the worker or the caller's process
    return e.what();
  }
}

// The task with its timing sizes shrunk to its largest check size (PoCL times the full sizes slowly).
Task small_timing(Task task) {
  task.timing_sizes.sizes = task.check_sizes.back().sizes;
  return task;
}

}  // namespace

TEST_CASE("a ReLU whose inputs are never negative is refused: a copy of the input passes it",
          "[harness][opencl][integrity][attack]") {
  KERNELSMITH_REQUIRE_OPENCL_DEVICE();
  const Task narrow = small_timing(with_distribution("relu", "x", {{"kind", "uniform"}, {"a", 0.0}, {"b", 1.0}}));
  const std::string message = refusal_of(narrow, "screen");
  INFO(message);
  CHECK(message.find("trivial program 'y = x (a copy of the input)'") != std::string::npos);
  CHECK(message.find("output y") != std::string::npos);
  CHECK(message.find("sizes") != std::string::npos);
  CHECK(message.find("widen the distribution of input x") != std::string::npos);
  // Never positive: all zeros would pass, and the near-constant check refuses the task first.
  const Task negative =
      small_timing(with_distribution("relu", "x", {{"kind", "uniform"}, {"a", -1.0}, {"b", -0.5}}));
  const std::string zeros = refusal_of(negative, "strict");
  INFO(zeros);
  CHECK(zeros.find("output y is near-constant") != std::string::npos);
  // The built-in ReLU draws from a normal distribution around zero: accepted.
  CHECK(refusal_of(small_timing(Task::load("relu")), "strict").empty());
}

TEST_CASE("every built-in task tells its reference from trivial programs", "[harness][opencl][task_suite]") {
  KERNELSMITH_REQUIRE_OPENCL_DEVICE();
  for (const auto& entry : std::filesystem::directory_iterator(std::string(KERNELSMITH_SOURCE_DIR) + "/tasks")) {
    if (!std::filesystem::exists(entry.path() / "task.json")) continue;
    const Task task = small_timing(Task::load(entry.path().string()));
    INFO("task " << task.name);
    CHECK(refusal_of(task, "strict") == "");
  }
}
