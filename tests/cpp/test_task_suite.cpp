// The built-in task suite: every task loads and validates, has a float64 CPU reference, and its own
// kernels (the naive reference and the tunable seed, at its default parameters and at the extremes of
// each parameter) agree with that CPU reference on every check size, on PoCL (OpenCL) here and on a
// CUDA GPU where there is one, and through the MACA plugin and its stand-in runtime there. NVRTC compiles
// every CUDA source of the suite for an H100 (sm_90a) without a GPU, and every seed for an A100 (sm_80);
// MCRTC (the stand-in's) compiles every MACA source whose plan fits a 64-lane-wave MetaX C500.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "catch.hpp"
#include "backend_registry.hpp"
#include "cpu_reference.hpp"
#include "evaluate/compile_jobs.hpp"
#include "evaluate/harness.hpp"
#include "evaluate/plan_runner.hpp"
#include "evaluate/host_tensors.hpp"
#include "detail/random.hpp"
#include "maca_test_support.hpp"
#include "kernelsmith/backend.hpp"
#include "kernelsmith/config.hpp"
#include "kernelsmith/device_attributes.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/launch_plan.hpp"
#include "kernelsmith/param_mutator.hpp"
#include "kernelsmith/task.hpp"

using namespace kernelsmith;
using detail::Bytes;
using Values = testing::HostTensor;  // float64 values on the host (not the runner's kernelsmith::HostTensor)

namespace {

// The kernel kinds the suite demands of every task and language.
const std::vector<std::string>& required_languages() {
  static const std::vector<std::string> languages = {"cuda", "opencl", "maca"};
  return languages;
}

std::uint64_t name_seed(const std::string& text) {
  std::uint64_t hash = 1469598103934665603ULL;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ULL;
  return hash;
}

Values to_doubles(DType dtype, const Bytes& bytes, std::int64_t count) {
  Values values(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) values[static_cast<std::size_t>(i)] = detail::load_element(dtype, bytes.data(), i);
  return values;
}

// Compares a device output with the float64 reference by the harness's rule:
//   |actual - expected| <= atol * scale + rtol * |expected|, scale = RMS of the expected output (1 if 0).
// Returns an empty string when every element passes, else a description of the failures.
std::string compare(const TensorSpec& spec, const Tolerance& tolerance, const Values& expected,
                    const Values& actual) {
  if (expected.size() != actual.size()) {
    return fmt::format("{}: the CPU reference returned {} elements, the device {}", spec.name, expected.size(),
                       actual.size());
  }
  double sum_squares = 0.0;
  for (double value : expected) sum_squares += value * value;
  double scale = expected.empty() ? 0.0 : std::sqrt(sum_squares / static_cast<double>(expected.size()));
  if (!(scale > 0.0)) scale = 1.0;
  std::int64_t failures = 0;
  std::int64_t first = -1;
  double worst = 0.0;
  std::int64_t worst_index = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const double error = std::abs(actual[i] - expected[i]);
    const double allowed = tolerance.atol * scale + tolerance.rtol * std::abs(expected[i]);
    const bool ok = std::isfinite(actual[i]) && error <= allowed;
    if (!ok) {
      if (first < 0) first = static_cast<std::int64_t>(i);
      ++failures;
    }
    const double relative = std::isfinite(error) ? error / std::max(allowed, 1e-300) : INFINITY;
    if (relative > worst) {
      worst = relative;
      worst_index = static_cast<std::int64_t>(i);
    }
  }
  if (failures == 0) return {};
  const auto at = [&](std::int64_t i) { return static_cast<std::size_t>(i); };
  return fmt::format("{}: {} of {} elements off (atol {} x scale {:.4g}, rtol {}); first at {}: {} vs {}; worst at "
                     "{}: {} vs {}",
                     spec.name, failures, expected.size(), tolerance.atol, scale, tolerance.rtol, first,
                     actual[at(first)], expected[at(first)], worst_index, actual[at(worst_index)],
                     expected[at(worst_index)]);
}

// Whether a variant's requirements and block sizes hold for every size configuration of the task.
bool plan_fits(const Task& task, const LaunchPlan& plan, const DeviceInfo& device) {
  for (const auto& config : task.all_size_configs()) {
    // The device attributes as the harness binds them (COMPUTE_CAPABILITY included).
    Bindings bindings = device_attribute_values(device);
    for (const auto& tunable : plan.tunables) bindings[tunable.name] = tunable.value;
    for (const auto& [name, value] : config.sizes) bindings[name] = value;
    for (const auto& requirement : plan.requirements) {
      if (evaluate_expression(requirement, bindings) == 0) return false;
    }
    for (const auto& launch : plan.launches) {
      std::int64_t threads = 1;
      for (const auto& extent : launch.block) threads *= evaluate_expression(extent, bindings);
      if (device.max_threads_per_block > 0 && threads > device.max_threads_per_block) return false;
    }
  }
  return true;
}

struct Variant {
  std::string label;
  std::string source;
};

// The source as given, then for each tunable its smallest and largest allowed value (the others at
// their defaults), where the variant fits the device and every size configuration.
std::vector<Variant> variants_of(const Task& task, const std::string& label, const std::string& source,
                                 const DeviceInfo& device) {
  std::vector<Variant> variants = {{label, source}};
  const LaunchPlan plan = LaunchPlan::parse(source);
  std::set<std::string> seen = {source};
  for (const auto& tunable : plan.tunables) {
    for (std::int64_t value : {*std::min_element(tunable.values.begin(), tunable.values.end()),
                               *std::max_element(tunable.values.begin(), tunable.values.end())}) {
      ParamValues values = ParamMutator::values_of(source);
      values[tunable.name] = value;
      const std::string rewritten = ParamMutator::rewrite(source, values);
      if (!seen.insert(rewritten).second) continue;
      if (!plan_fits(task, LaunchPlan::parse(rewritten), device)) continue;
      variants.push_back({fmt::format("{} with {} = {}", label, tunable.name, value), rewritten});
    }
  }
  return variants;
}

// Runs one source on every check size with random inputs and compares with the CPU reference.
// Returns the number of (configuration, output) pairs checked.
int check_source(Backend& backend, const Task& task, const std::string& label, const std::string& source,
                 const testing::CpuReference& cpu_reference) {
  INFO(fmt::format("task {}: {} on {} ({})", task.name, label, backend.device().name, backend.name()));
  std::unique_ptr<detail::PlanRunner> runner;
  try {
    runner = std::make_unique<detail::PlanRunner>(backend, task, source);
  } catch (const std::exception& error) {
    FAIL_CHECK(error.what());
    return 0;
  }
  int checked = 0;
  for (const auto& config : task.check_sizes) {
    INFO("sizes " << config.name);
    std::vector<Bytes> inputs;
    std::vector<Values> input_values;
    std::vector<const TensorSpec*> outputs;
    for (std::size_t i = 0; i < task.tensors.size(); ++i) {
      const TensorSpec& spec = task.tensors[i];
      const std::int64_t count = task.element_count(spec, config.sizes);
      if (spec.role == TensorRole::output) {
        outputs.push_back(&spec);
        continue;
      }
      const std::uint64_t seed = detail::mix_seed(name_seed(task.name + "/" + config.name), i);
      inputs.push_back(detail::generate_input(spec, task.extents(spec, config.sizes), detail::InputKind::random, seed));
      input_values.push_back(to_doubles(spec.dtype, inputs.back(), count));
    }
    std::vector<Bytes> results;
    try {
      results = runner->run(config.name, inputs);
    } catch (const std::exception& error) {
      FAIL_CHECK(error.what());
      continue;
    }
    const std::vector<Values> expected = cpu_reference(input_values, config.sizes);
    REQUIRE(expected.size() == outputs.size());
    REQUIRE(results.size() == outputs.size());
    for (std::size_t o = 0; o < outputs.size(); ++o) {
      const TensorSpec& spec = *outputs[o];
      const std::int64_t count = task.element_count(spec, config.sizes);
      const std::string problem = compare(spec, task.tolerance_for(spec.dtype), expected[o],
                                          to_doubles(spec.dtype, results[o], count));
      INFO(problem);
      CHECK(problem.empty());
      ++checked;
    }
  }
  return checked;
}

// Checks the reference and the seed (with its parameter extremes) of every task in `language`.
void check_suite_on(Backend& backend, const std::string& language) {
  const auto names = builtin_task_names();
  REQUIRE(names.size() >= 13);
  for (const auto& name : names) {
    const Task task = Task::load(name);
    INFO("task " << name);
    const testing::CpuReference* cpu_reference = testing::find_cpu_reference(name);
    REQUIRE(cpu_reference != nullptr);
    REQUIRE(task.references.count(language) == 1);
    int checked = check_source(backend, task, "reference", task.references.at(language).source, *cpu_reference);
    CHECK(checked >= static_cast<int>(task.check_sizes.size()));
    const auto seed = task.seeds.find(language);
    REQUIRE(seed != task.seeds.end());
    for (const auto& variant : variants_of(task, "seed", seed->second.source, backend.device())) {
      checked = check_source(backend, task, variant.label, variant.source, *cpu_reference);
      CHECK(checked >= static_cast<int>(task.check_sizes.size()));
    }
  }
}

}  // namespace

TEST_CASE("the task suite: every built-in task loads, validates and has a CPU reference", "[task_suite]") {
  const auto names = builtin_task_names();
  CHECK(names.size() >= 13);
  std::set<std::string> with_cpu_reference;
  for (const auto& name : testing::cpu_reference_names()) with_cpu_reference.insert(name);
  for (const auto& name : names) {
    INFO("task " << name);
    const Task task = Task::load(name);
    CHECK(task.name == name);
    CHECK(with_cpu_reference.count(name) == 1);
    for (const auto& language : required_languages()) {
      CHECK(task.references.count(language) == 1);
      CHECK(task.seeds.count(language) == 1);
    }
    CHECK_FALSE(task.description.empty());
    CHECK_FALSE(task.pytorch.empty());
    CHECK(task.check_sizes.size() >= 4);
    // The timing configuration is sized for a GPU: at least 64 MiB of traffic or 1 GFLOP of work.
    const double bytes = task.min_bytes(task.timing_sizes.sizes);
    const double flops = task.flops(task.timing_sizes.sizes);
    CHECK((bytes >= 64.0 * 1024 * 1024 || flops >= 1e9));
    // Every seed has parameters for the parameter mutator to vary.
    for (const auto& [language, seed] : task.seeds) {
      INFO(language << " seed");
      const LaunchPlan plan = LaunchPlan::parse(seed.source, language);
      CHECK_FALSE(plan.tunables.empty());
    }
  }
  // No CPU reference without its task.
  for (const auto& name : with_cpu_reference) {
    CHECK(std::find(names.begin(), names.end(), name) != names.end());
  }
}

TEST_CASE("the task suite: references and seeds match the float64 CPU references on PoCL", "[task_suite][opencl]") {
  std::unique_ptr<Backend> backend;
  try {
    backend = create_backend("opencl");
  } catch (const BackendUnavailableError& error) {
    WARN("skipped: no OpenCL device: " << error.what());
    return;
  }
  check_suite_on(*backend, "opencl");
}

TEST_CASE("the task suite: references and seeds match the float64 CPU references on CUDA", "[task_suite][gpu]") {
  std::unique_ptr<Backend> backend;
  try {
    backend = create_backend("cuda");
  } catch (const Error& error) {
    WARN("skipped: no CUDA device: " << error.what());
    return;
  }
  check_suite_on(*backend, "cuda");
}

TEST_CASE("the task suite: NVRTC compiles every CUDA reference and seed for an H100 and an A100", "[task_suite][cuda][compile]") {
  if (!KERNELSMITH_ENABLE_CUDA) {
    WARN("skipped: this build has no CUDA backend");
    return;
  }
  // A device that stands for an H100 when the plan's requirements are checked without one.
  DeviceInfo h100;
  h100.backend = "cuda";
  h100.architecture = "sm_90";
  h100.name = "sm_90 (offline)";
  h100.compute_units = 132;
  h100.warp_size = 32;
  h100.max_threads_per_block = 1024;
  h100.shared_per_block = 48 * 1024;
  h100.shared_per_block_optin = 227 * 1024;
  h100.l2_bytes = 50 * 1024 * 1024;
  DeviceInfo a100 = h100;
  a100.architecture = "sm_80";
  a100.name = "sm_80 (offline)";
  a100.compute_units = 108;
  a100.shared_per_block_optin = 163 * 1024;
  a100.l2_bytes = 40 * 1024 * 1024;
  int compiled = 0;
  for (const auto& name : builtin_task_names()) {
    const Task task = Task::load(name);
    for (const auto* group : {&task.references, &task.seeds}) {
      const auto source = group->find("cuda");
      if (source == group->end()) continue;
      const std::string label = group == &task.references ? "reference" : "seed";
      const auto variants = variants_of(task, label, source->second.source, h100);
      for (std::size_t v = 0; v < variants.size(); ++v) {
        const Variant& variant = variants[v];
        INFO(fmt::format("task {}: {}", name, variant.label));
        Candidate candidate;
        candidate.language = "cuda";
        candidate.source = variant.source;
        // The plan binds at every size on an H100 (its tensor maps and clusters included).
        try {
          detail::bind_plan_to_all_sizes(task, LaunchPlan::parse(variant.source), h100);
        } catch (const detail::InvalidLaunch& error) {
          FAIL_CHECK(error.what());
        }
        // What the evaluator compiles for on an H100 (sm_90a: warpgroup MMA available).
        std::vector<OfflineProgram> programs;
        try {
          programs = compile_candidate_offline(task, candidate, "sm_90");
        } catch (const BackendUnavailableError& error) {
          WARN("skipped: NVRTC is not available: " << error.what());
          return;
        }
        for (const auto& program : programs) {
          INFO(program.report.log);
          CHECK(program.report.ok);
          // The sources as shipped do not spill registers (the extremes of the tunables may, a little:
          // that is for the search to weigh).
          if (v == 0) {
            for (const auto& kernel : program.report.kernels) {
              INFO("kernel " << kernel.name);
              CHECK(kernel.spill_store_bytes <= 0);
            }
          }
          ++compiled;
        }
        // Sources written for Hopper keep a path for the GPUs before it (matmul_fp16/bf16: mma.sync where
        // wgmma is not available, cp.async where there is no TMA): with each tunable at its extremes where
        // the A100 allows them they bind there (their tensor maps' when(...) false), and as shipped they
        // compile for an A100 too.
        if (plan_fits(task, LaunchPlan::parse(variant.source), a100)) {
          try {
            detail::bind_plan_to_all_sizes(task, LaunchPlan::parse(variant.source), a100);
          } catch (const detail::InvalidLaunch& error) {
            FAIL_CHECK("sm_80: " << error.what());
          }
          if (v == 0) {  // compiling every variant twice would double the test's time
            for (const auto& program : compile_candidate_offline(task, candidate, "sm_80")) {
              INFO("sm_80: " << program.report.log);
              CHECK(program.report.ok);
            }
          }
        }
      }
    }
  }
  CHECK(compiled >= 26);
}

TEST_CASE("the task suite: references and seeds match the float64 CPU references on MACA (the stand-in)",
          "[task_suite][gpu][maca]") {
  KERNELSMITH_SKIP_WHEN(test::maca_device_missing_reason());
  test::UseMacaStandin standin;
  auto backend = create_backend("maca");
  check_suite_on(*backend, "maca");
}

TEST_CASE("the task suite: MCRTC (the stand-in) compiles every MACA reference and seed whose plan fits a C500",
          "[task_suite][maca][compile]") {
  KERNELSMITH_SKIP_WHEN(test::maca_standin_missing_reason());
  test::UseMacaStandin standin;
  // The plans' requirements are checked for a 64-lane wave (a C500's published figures); the code is
  // compiled for the stand-in's target on an H100 (compute_90 → sm_90).
  const DeviceInfo c500 = test::published_c500();
  int compiled = 0;
  for (const auto& name : builtin_task_names()) {
    const Task task = Task::load(name);
    for (const auto* group : {&task.references, &task.seeds}) {
      const auto source = group->find("maca");
      REQUIRE(source != group->end());
      const std::string label = group == &task.references ? "reference" : "seed";
      REQUIRE(plan_fits(task, LaunchPlan::parse(source->second.source), c500));
      for (const Variant& variant : variants_of(task, label, source->second.source, c500)) {
        INFO(fmt::format("task {}: {}", name, variant.label));
        const LaunchPlan plan = LaunchPlan::parse(variant.source, "maca");
        for (const auto& job : detail::compile_jobs(task, plan, "compute_90", 120.0)) {
          const CompiledProgram program = compile_offline("maca", variant.source, job.options);
          INFO(program.report.log);
          CHECK(program.report.ok);
          // The sources as shipped compile cleanly: no truncated lane mask, no other warning.
          if (variant.label == label) CHECK(program.report.log.find("warning") == std::string::npos);
          ++compiled;
        }
      }
    }
  }
  CHECK(compiled >= 32);
}
