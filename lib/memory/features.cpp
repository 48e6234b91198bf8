#include "kernelsmith/features.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "detail/json_util.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/language.hpp"
#include "kernelsmith/mutator.hpp"

namespace kernelsmith {

std::optional<double> Features::number(const std::string& name) const {
  auto found = numbers.find(name);
  if (found == numbers.end()) return std::nullopt;
  return found->second;
}

std::optional<std::string> Features::label(const std::string& name) const {
  auto found = labels.find(name);
  if (found == labels.end()) return std::nullopt;
  return found->second;
}

void Features::merge(const Features& other) {
  for (const auto& [name, value] : other.numbers) {
    labels.erase(name);
    numbers[name] = value;
  }
  for (const auto& [name, value] : other.labels) {
    numbers.erase(name);
    labels[name] = value;
  }
}

std::string Features::to_json() const {
  nlohmann::json object = nlohmann::json::object();
  for (const auto& [name, value] : numbers) object[name] = value;
  for (const auto& [name, value] : labels) object[name] = value;
  return object.dump();
}

Features Features::from_json(const std::string& json_text, const std::string& origin) {
  const nlohmann::json object = detail::parse_plain_json(json_text, origin);
  if (!object.is_object()) throw ValidationError(origin + ": features must be a JSON object of numbers and strings");
  Features features;
  for (const auto& [name, value] : object.items()) {
    if (value.is_number()) {
      features.numbers[name] = value.get<double>();
    } else if (value.is_string()) {
      features.labels[name] = value.get<std::string>();
    } else {
      throw ValidationError(
          fmt::format("{}: feature '{}' is {}; a feature is a number or a string", origin, name, value.dump()));
    }
  }
  return features;
}

std::string to_string(FeatureKind kind) { return kind == FeatureKind::number ? "number" : "label"; }

std::string to_string(FeatureScope scope) {
  switch (scope) {
    case FeatureScope::task: return "task";
    case FeatureScope::feedback: return "feedback";
    case FeatureScope::request: return "request";
  }
  return "feedback";
}

namespace {

std::vector<std::string> status_names() {
  return {"ok", "compile_error", "invalid_launch", "runtime_error", "incorrect", "timeout", "crashed"};
}

std::vector<std::string> language_names() {
  std::vector<std::string> names;
  for (const KernelLanguage& language : kernel_languages()) names.push_back(language.name);
  return names;
}

std::vector<FeatureInfo> make_catalog() {
  using K = FeatureKind;
  using S = FeatureScope;
  // name, kind, scope, description, logarithmic, scale, similarity, values
  return {
      {"task", K::label, S::task, "the task's name", false, 1.0, false, {}},
      {"task_dtype", K::label, S::task, "data type of the task's first output tensor (float32, float16, ...)", false,
       1.0, true, {}},
      {"task_flops", K::number, S::task, "floating-point operations at the timed sizes (the work model)", true, 1.0,
       true, {}},
      {"task_bytes", K::number, S::task, "fewest bytes any implementation moves at the timed sizes (the work model)",
       true, 1.0, true, {}},
      {"task_intensity", K::number, S::task, "arithmetic intensity, task_flops / task_bytes (FLOP per byte)", true,
       0.5, true, {}},
      {"task_elements", K::number, S::task, "elements of the largest output tensor at the timed sizes", true, 1.0,
       true, {}},
      {"task_reduction", K::number, S::task,
       "elements of the largest input over those of the largest output: 1 for element-wise work, large for "
       "reductions",
       true, 0.5, true, {}},
      {"task_inputs", K::number, S::task, "input tensors", false, 3.0, true, {}},
      {"task_outputs", K::number, S::task, "output tensors", false, 2.0, true, {}},
      {"task_rank", K::number, S::task, "the largest rank of the task's tensors", false, 2.0, true, {}},
      {"stage", K::label, S::feedback,
       "\"draft\" while the parent is not correct (make it correct), \"refine\" once it is (make it faster)", false,
       1.0, true, {"draft", "refine"}},
      {"status", K::label, S::feedback, "the parent's status", false, 1.0, true, status_names()},
      {"failure", K::label, S::feedback,
       "what went wrong: \"none\" for a correct parent, its status for the failures before correctness, and for an "
       "incorrect one the first failing check's kind",
       false, 1.0, true,
       {"none", "compile_error", "invalid_launch", "runtime_error", "timeout", "crashed", "mismatch", "unwritten",
        "non_finite", "modified_input", "nondeterministic", "other"}},
      {"compiled", K::number, S::feedback, "1 when the parent compiled, 0 else", false, 1.0, true, {}},
      {"correct", K::number, S::feedback, "1 when the parent is correct, 0 else", false, 1.0, true, {}},
      {"speedup", K::number, S::feedback, "the parent's speedup over the baseline (correct parents only)", true, 0.3,
       true, {}},
      {"bandwidth_fraction", K::number, S::feedback,
       "achieved memory bandwidth over the device's measured peak, 0 to 1 (correct, timed parents)", false, 0.25,
       true, {}},
      {"compute_fraction", K::number, S::feedback,
       "achieved FLOP rate over the device's measured peak, 0 to 1 (correct, timed parents)", false, 0.25, true, {}},
      {"sol_fraction", K::number, S::feedback,
       "the larger of the two: how close the parent is to the hardware's limit", false, 0.25, true, {}},
      {"registers", K::number, S::feedback, "registers per thread, the most of any kernel (where the compiler says)",
       true, 0.3, true, {}},
      {"spill_bytes", K::number, S::feedback, "register spill stores plus loads in bytes, the most of any kernel",
       true, 1.0, true, {}},
      {"shared_bytes", K::number, S::feedback, "static shared memory per block in bytes, the most of any kernel", true,
       1.0, true, {}},
      {"local_bytes", K::number, S::feedback, "local (thread-private) memory in bytes, the most of any kernel", true,
       1.0, true, {}},
      {"occupancy", K::number, S::feedback,
       "the occupancy the register count allows at most, 0 to 1 (65536 registers and 64 warps per multiprocessor, "
       "registers allocated in eights; block size and shared memory not counted)",
       false, 0.25, true, {}},
      {"kernels", K::number, S::feedback, "kernels in the parent's launch plan", false, 1.0, true, {}},
      {"dominant_kernel_share", K::number, S::feedback,
       "share of the timed time spent in the slowest kernel of the plan, 0 to 1", false, 0.25, true, {}},
      {"noise", K::number, S::feedback, "relative standard deviation of the parent's timing samples", false, 0.05,
       false, {}},
      {"error", K::number, S::feedback, "relative L2 error of the first failing output (incorrect parents)", true,
       0.5, true, {}},
      {"language", K::label, S::request, "the kernel language the child must be written in", false, 1.0, true,
       language_names()},
      {"device", K::label, S::request, "\"gpu\" or \"cpu\" (PoCL runs OpenCL on the CPU)", false, 1.0, true,
       {"gpu", "cpu"}},
  };
}

// The failure kind of an evaluation: its status before correctness, the first failing check's kind after.
std::string failure_kind(const Evaluation& evaluation) {
  switch (evaluation.status) {
    case Status::ok: return "none";
    case Status::incorrect: break;
    default: return to_string(evaluation.status);
  }
  if (!evaluation.integrity.deterministic) return "nondeterministic";
  if (!evaluation.correctness) return "other";
  for (const CorrectnessCheck& check : evaluation.correctness->checks) {
    if (check.passed) continue;
    if (!check.modified_inputs.empty()) return "modified_input";
    for (const OutputCheck& output : check.outputs) {
      if (output.passed) continue;
      if (output.unwritten > 0) return "unwritten";
      if (output.non_finite > 0) return "non_finite";
      if (output.mismatches > 0) return "mismatch";
    }
    return "other";
  }
  return "other";
}

std::optional<double> first_failing_error(const Evaluation& evaluation) {
  if (!evaluation.correctness) return std::nullopt;
  for (const CorrectnessCheck& check : evaluation.correctness->checks) {
    for (const OutputCheck& output : check.outputs) {
      if (!output.passed && std::isfinite(output.rel_l2_error)) return output.rel_l2_error;
    }
  }
  return std::nullopt;
}

// Warps resident per multiprocessor that the register file allows: registers are allocated per thread in
// multiples of 8 (NVIDIA since sm_50), 65536 per multiprocessor, 64 warps at most.
double register_occupancy(int registers) {
  const int allocated = (registers + 7) / 8 * 8;
  const double warps = std::floor(65536.0 / (allocated * 32.0));
  return std::min(64.0, warps) / 64.0;
}

}  // namespace

const std::vector<FeatureInfo>& feature_catalog() {
  static const std::vector<FeatureInfo> catalog = make_catalog();
  return catalog;
}

const FeatureInfo* find_feature(const std::string& name) {
  for (const FeatureInfo& info : feature_catalog()) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

Features task_features(const Task& task) {
  Features features;
  features.labels["task"] = task.name;
  const SizeMap& sizes = task.timing_sizes.sizes;
  try {
    const double flops = task.flops(sizes);
    const double bytes = task.min_bytes(sizes);
    features.numbers["task_flops"] = flops;
    features.numbers["task_bytes"] = bytes;
    if (bytes > 0) features.numbers["task_intensity"] = flops / bytes;
  } catch (const std::exception&) {
    // A work model that does not evaluate is Task::validate's to report; the features go without it.
  }
  double largest_input = 0, largest_output = 0;
  int inputs = 0, outputs = 0, rank = 0;
  for (const TensorSpec& tensor : task.tensors) {
    double elements = 0;
    try {
      elements = static_cast<double>(task.element_count(tensor, sizes));
    } catch (const std::exception&) {
    }
    rank = std::max(rank, static_cast<int>(tensor.shape.size()));
    if (tensor.role == TensorRole::input) {
      ++inputs;
      largest_input = std::max(largest_input, elements);
    } else {
      if (outputs == 0) features.labels["task_dtype"] = to_string(tensor.dtype);
      ++outputs;
      largest_output = std::max(largest_output, elements);
    }
  }
  features.numbers["task_inputs"] = inputs;
  features.numbers["task_outputs"] = outputs;
  features.numbers["task_rank"] = rank;
  if (largest_output > 0) {
    features.numbers["task_elements"] = largest_output;
    if (largest_input > 0) features.numbers["task_reduction"] = largest_input / largest_output;
  }
  return features;
}

Features feedback_features(const Evaluation& evaluation) {
  Features features;
  const bool correct = evaluation.status == Status::ok;
  features.labels["stage"] = correct ? "refine" : "draft";
  features.labels["status"] = to_string(evaluation.status);
  features.labels["failure"] = failure_kind(evaluation);
  features.numbers["compiled"] = evaluation.compile.ok ? 1.0 : 0.0;
  features.numbers["correct"] = correct ? 1.0 : 0.0;
  if (correct && evaluation.speedup > 0) features.numbers["speedup"] = evaluation.speedup;
  if (correct && evaluation.sol) {
    const SpeedOfLight& sol = *evaluation.sol;
    if (sol.peak_gbps > 0) features.numbers["bandwidth_fraction"] = sol.bandwidth_fraction;
    if (sol.peak_gflops > 0) features.numbers["compute_fraction"] = sol.compute_fraction;
    if (sol.peak_gbps > 0 || sol.peak_gflops > 0) features.numbers["sol_fraction"] = sol.fraction;
  }
  int registers = -1;
  std::int64_t spills = -1, shared = -1, local = -1;
  for (const KernelResources& kernel : evaluation.compile.kernels) {
    registers = std::max(registers, kernel.registers);
    if (kernel.spill_store_bytes >= 0 || kernel.spill_load_bytes >= 0) {
      spills = std::max(spills, std::max<std::int64_t>(kernel.spill_store_bytes, 0) +
                                    std::max<std::int64_t>(kernel.spill_load_bytes, 0));
    }
    shared = std::max(shared, kernel.shared_bytes);
    local = std::max(local, kernel.local_bytes);
  }
  if (registers > 0) {
    features.numbers["registers"] = registers;
    features.numbers["occupancy"] = register_occupancy(registers);
  }
  if (spills >= 0) features.numbers["spill_bytes"] = static_cast<double>(spills);
  if (shared >= 0) features.numbers["shared_bytes"] = static_cast<double>(shared);
  if (local >= 0) features.numbers["local_bytes"] = static_cast<double>(local);
  std::size_t kernels = evaluation.compile.kernels.size();
  if (evaluation.timing) {
    kernels = std::max(kernels, evaluation.timing->kernels.size());
    double dominant = 0.0;
    for (const KernelTime& kernel : evaluation.timing->kernels) dominant = std::max(dominant, kernel.share);
    if (!evaluation.timing->kernels.empty()) features.numbers["dominant_kernel_share"] = dominant;
    if (evaluation.timing->samples > 0) features.numbers["noise"] = evaluation.timing->noise;
  }
  if (kernels > 0) features.numbers["kernels"] = static_cast<double>(kernels);
  if (evaluation.status == Status::incorrect) {
    if (auto error = first_failing_error(evaluation)) features.numbers["error"] = *error;
  }
  return features;
}

Features request_feedback(const MutationRequest& request) {
  Features features;
  if (request.parent_evaluation) {
    features = feedback_features(*request.parent_evaluation);
  } else {
    features.labels["stage"] = "draft";
  }
  features.labels["language"] = request.child_language();
  if (!request.device.backend.empty()) features.labels["device"] = request.device.is_gpu ? "gpu" : "cpu";
  return features;
}

Features request_features(const MutationRequest& request) {
  Features features = task_features(request.task());
  features.merge(request_feedback(request));
  return features;
}

double feature_similarity(const Features& a, const Features& b) {
  double sum = 0.0;
  int compared = 0;
  for (const FeatureInfo& info : feature_catalog()) {
    if (!info.similarity) continue;
    const bool in_a = a.has(info.name), in_b = b.has(info.name);
    if (!in_a && !in_b) continue;
    ++compared;
    if (in_a != in_b) {
      sum += 1.0;
      continue;
    }
    if (info.kind == FeatureKind::label) {
      if (a.label(info.name) != b.label(info.name)) sum += 1.0;
      continue;
    }
    auto transform = [&](double value) {
      return info.logarithmic ? std::log10(1.0 + std::max(0.0, value)) : value;
    };
    const auto value_a = a.number(info.name), value_b = b.number(info.name);
    if (!value_a || !value_b) {  // a label where a number belongs (a hand-made set): a difference
      sum += 1.0;
      continue;
    }
    const double difference = (transform(*value_a) - transform(*value_b)) / info.scale;
    sum += difference * difference;
  }
  if (compared == 0) return 0.0;
  return std::exp(-std::sqrt(sum));
}

}  // namespace kernelsmith
