// The evaluation protocol's side of a task with a PyTorch oracle (docs/kernelbench.md, "PyTorch oracle
// and baselines"): expected outputs come from the task's module, run by the oracle helper on the
// evaluator's inputs, cached in memory (the case cache) and on disk (oracle_cache.hpp); the baselines
// are PyTorch eager and torch.compile, timed by the helper under the harness's timing protocol.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "detail/sha256.hpp"
#include "evaluate/protocol.hpp"
#include "evaluate/task_key.hpp"
#include "json_codec.hpp"
#include "kernelsmith/launch_plan.hpp"

namespace kernelsmith::detail {
namespace {

/// The problem as the helper takes it (pytorch_oracle.py): the module with this configuration's values
/// for its constants.
Json problem_json(const Task& task, const SizeConfig& config) {
  const PytorchOracle& oracle = *task.oracle;
  Json constants = Json::object();
  for (const auto& [constant, size] : oracle.constants) constants[constant] = config.sizes.at(size);
  const std::string file =
      oracle.module.path.empty() ? std::string("problem.py") : std::filesystem::path(oracle.module.path).filename().string();
  return {{"source", oracle.module.source}, {"path", file},          {"constants", constants},
          {"forward", oracle.forward},      {"parameters", oracle.parameters}, {"outputs", oracle.outputs},
          {"casts", oracle.casts},          {"seed", oracle.seed},   {"training", oracle.training}};
}

/// Each timing case's input buffers, in task order.
std::vector<std::vector<const Bytes*>> input_sets_of(const TimingCases& cases) {
  std::vector<std::vector<const Bytes*>> sets;
  for (const auto& data : cases) {
    std::vector<const Bytes*> set;
    for (const Bytes& bytes : data->inputs) set.push_back(&bytes);
    sets.push_back(std::move(set));
  }
  return sets;
}

/// The problem with a ModelNew candidate in it, as the runner takes it.
Json problem_with_candidate(const Task& task, const SizeConfig& config, const Candidate& candidate) {
  Json problem = problem_json(task, config);
  problem["candidate"] = {{"source", candidate.source}, {"path", "candidate.py"}};
  return problem;
}

/// The status a runner's failure gives the candidate, by the stage that failed (pytorch_oracle.py).
CandidateFailure model_new_failure(const OracleFailure& failure, const std::string& sizes) {
  const std::string& stage = failure.stage();
  if (stage == "candidate" || stage == "candidate_build" || stage == "parameters") {
    return {Status::compile_error, fmt::format("ModelNew could not be built: {}", failure.what())};
  }
  if (stage == "outputs" || stage == "input_changed" || stage == "input_returned" || stage == "output_type" ||
      stage == "output_aliased") {
    return {Status::incorrect, fmt::format("sizes '{}': {}", sizes, failure.what())};
  }
  if (stage == "tampering" || stage == "background_work") {  // the integrity checks (_host_code_guard.py)
    return {Status::runtime_error, fmt::format("refused ({}): {}", stage, failure.what())};
  }
  const std::string what = failure.what();
  if (stage == "helper" && what.find("did not finish") != std::string::npos) {
    return {Status::timeout, what};
  }
  return {Status::runtime_error, stage == "helper" ? what : fmt::format("sizes '{}': {}", sizes, what)};
}

/// The runner's flags and notes of one reply, added to the evaluation's.
void take_runner_flags(const Json& reply, HostCodeReport& host, IntegrityReport& integrity) {
  if (const auto flags = reply.find("flags"); flags != reply.end() && flags->is_array()) {
    for (const Json& flag : *flags) {
      if (flag.is_string()) add_flag(integrity, flag.get<std::string>());
    }
  }
  if (const auto notes = reply.find("notes"); notes != reply.end() && notes->is_array()) {
    for (const Json& note : *notes) {
      if (note.is_string() && std::find(host.notes.begin(), host.notes.end(), note.get<std::string>()) == host.notes.end()) {
        host.notes.push_back(note.get<std::string>());
      }
    }
  }
}

/// The baselines an oracle task times: eager always (speedup is against it), then the ones it lists.
std::vector<std::string> baseline_names(const PytorchOracle& oracle) {
  std::vector<std::string> names{"eager"};
  for (const auto& name : pytorch_oracle_baselines()) {
    if (name != "eager" && std::find(oracle.baselines.begin(), oracle.baselines.end(), name) != oracle.baselines.end()) {
      names.push_back(name);
    }
  }
  return names;
}

}  // namespace

std::string EvaluationRun::oracle_device() const {
  // Candidates on CUDA device N are checked against PyTorch on the same device; elsewhere on the CPU.
  return backend_.name() == "cuda" ? fmt::format("cuda:{}", backend_.device().index) : std::string("cpu");
}

PytorchOracleClient& EvaluationRun::oracle() {
  if (!state_.oracle) {
    state_.oracle = std::make_unique<PytorchOracleClient>(oracle_device(), options_.oracle_timeout_seconds);
  }
  state_.oracle->set_timeout(options_.oracle_timeout_seconds);
  return *state_.oracle;
}

OracleDiskCache& EvaluationRun::oracle_cache() {
  const std::string folder =
      options_.use_disk_cache ? (std::filesystem::path(state_.cache_dir) / "oracle").string() : std::string();
  if (!state_.oracle_cache || state_.oracle_cache->folder() != folder) {
    state_.oracle_cache = std::make_unique<OracleDiskCache>(folder, oracle_cache_bytes());
  }
  return *state_.oracle_cache;
}

void EvaluationRun::oracle_failed(const OracleFailure& failure, const std::string& doing) const {
  const std::string& file = task_.oracle->module.path.empty() ? std::string("its module") : task_.oracle->module.path;
  if (failure.stage() == "torch") {
    throw TaskError(fmt::format("task {} takes its expected outputs from PyTorch (\"oracle\" in its manifest), which "
                                "needs torch in the Python helpers' interpreter ({}): {}",
                                task_.name, helper_python_text(), failure.what()));
  }
  if (failure.stage() == "helper") {
    throw TaskError(fmt::format("task {}: the PyTorch oracle failed while {}: {}", task_.name, doing, failure.what()));
  }
  throw TaskError(fmt::format("task {}: its PyTorch oracle ({}) failed while {} (stage {}): {}", task_.name, file,
                              doing, failure.stage(), failure.what()));
}

ReferenceState& EvaluationRun::oracle_reference(const std::string& key) {
  auto state = std::make_unique<ReferenceState>();
  state->key = key;
  state->oracle = true;
  state->content_key = task_content_key(task_);
  try {
    state->oracle_version = oracle().version();
  } catch (const OracleFailure& e) {
    oracle_failed(e, "starting");
  }
  if (!state->oracle_version.available) {
    oracle_failed(OracleFailure("torch", state->oracle_version.reason), "starting");
  }
  // A GPU is named by the backend (the helper answers without importing torch, so without CUDA).
  if (oracle().device() != "cpu") state->oracle_version.device_name = backend_.device().name;
  // No kernel to load: each configuration's buffers, as a plan without launches binds them.
  for (const SizeConfig& config : task_.all_size_configs()) {
    state->bound[config.name] = bind_plan(task_, LaunchPlan{}, config, backend_.device());
  }
  return keep(std::move(state));
}

std::vector<SealedBytes> EvaluationRun::oracle_outputs(ReferenceState& reference, const SizeConfig& config,
                                                       const std::string& case_key, const std::vector<Bytes>& inputs) {
  const BoundPlan& plan = reference.bound.at(config.name);
  std::vector<OracleTensor> input_specs;
  std::vector<const Bytes*> input_data;
  std::vector<std::size_t> output_bytes;  // task order
  std::map<std::string, std::size_t> output_index;
  std::size_t input = 0;
  for (const BufferSpec& buffer : plan.buffers) {
    const TensorSpec& tensor = task_.tensors[buffer.tensor_index];
    if (buffer.role == BufferSpec::Role::input) {
      input_specs.push_back({tensor.name, tensor.dtype, task_.extents(tensor, config.sizes)});
      input_data.push_back(&inputs[input++]);
    } else if (buffer.role == BufferSpec::Role::output) {
      output_index[tensor.name] = output_bytes.size();
      output_bytes.push_back(buffer.bytes);
    }
  }
  const OracleVersion& version = reference.oracle_version;
  const std::string key = Sha256()
                              .field("kernelsmith.oracle-outputs/2")  // 2: large inputs drawn in chunks
                              .field(reference.content_key)
                              .field(case_key)
                              .field(oracle().device())
                              .field(version.device_name)
                              .field(version.torch)
                              .hex();
  if (auto cached = oracle_cache().find_sealed_outputs(key, output_bytes)) return std::move(*cached);

  // The helper writes the outputs in the oracle's order; the harness keeps them in the task's.
  std::vector<OracleTensor> output_specs;
  for (const auto& name : task_.oracle->outputs) {
    const TensorSpec& tensor = task_.tensor(name);
    output_specs.push_back({tensor.name, tensor.dtype, task_.extents(tensor, config.sizes)});
  }
  std::vector<Bytes> written;
  try {
    written = oracle().outputs(problem_json(task_, config), reference.content_key, config.name, input_specs,
                               input_data, output_specs);
  } catch (const OracleFailure& e) {
    oracle_failed(e, fmt::format("computing the expected outputs on the sizes '{}'", config.name));
  }
  // Sealed (sealed_bytes.hpp), and the helper's copies wiped: no expected output stays in the heap.
  std::vector<SealedBytes> outputs(output_bytes.size());
  for (std::size_t i = 0; i < output_specs.size(); ++i) {
    outputs[output_index.at(output_specs[i].name)] = SealedBytes::copy_of(written[i].data(), written[i].size());
    wipe_bytes(written[i].data(), written[i].size());
  }
  oracle_cache().store_outputs(key, outputs);
  return outputs;
}

std::map<std::string, OracleBaseline> EvaluationRun::oracle_baselines(ReferenceState& reference,
                                                                      const std::string& mode, bool eager_only) {
  const SizeConfig& config = task_.timing_sizes;
  const std::string oracle_device = oracle().device();
  const Json settings = oracle_timing_settings(mode);
  std::map<std::string, OracleBaseline> baselines;
  std::optional<TimingCases> cases;  // drawn when a baseline has to be timed
  const std::vector<std::string> names = eager_only ? std::vector<std::string>{"eager"} : baseline_names(*task_.oracle);
  for (const std::string& name : names) {
    const std::string memory_key = name + "|" + mode;
    if (const auto found = reference.oracle_baselines.find(memory_key); found != reference.oracle_baselines.end()) {
      baselines[name] = found->second;
      continue;
    }
    const std::string disk_key = Sha256()
                                     .field("kernelsmith.oracle-baseline/2")  // 2: timed under torch's default settings
                                     .field(reference.content_key)
                                     .field(oracle_device)
                                     .field(reference.oracle_version.device_name)
                                     .field(reference.oracle_version.torch)
                                     .field(name)
                                     .field(settings.dump())
                                     .field(options_.baseline_session)
                                     .hex();
    OracleBaseline baseline;
    bool from_disk = false;
    if (const auto text = oracle_cache().find_text(disk_key)) {
      try {
        const Json document = parse_json(*text, "<oracle baseline cache>");
        if (document.at("timing").is_null()) {
          baseline.error = document.at("error").get<std::string>();
        } else {
          baseline.timing = timing_report_from_json(JsonField(document.at("timing"), "<oracle baseline cache>"));
        }
        from_disk = true;
      } catch (const std::exception&) {
        // A damaged entry is timed again and overwritten.
      }
    }
    if (!from_disk) {
      if (!cases) cases = timing_cases(reference);
      baseline = oracle().time(problem_json(task_, config), reference.content_key, config.name, name,
                               oracle_input_specs(config), input_sets_of(*cases), settings);
      if (baseline.timing || baseline.lasting) {
        const Json document = {{"timing", baseline.timing ? timing_report_to_json(*baseline.timing) : Json(nullptr)},
                               {"error", baseline.error},
                               {"compile_seconds", baseline.compile_seconds}};
        oracle_cache().store_text(disk_key, document.dump(2));
      }
    }
    reference.oracle_baselines[memory_key] = baseline;
    baselines[name] = baseline;
  }
  return baselines;
}

void EvaluationRun::prepare_cases(ReferenceState& reference) {
  if (!reference.oracle || reference.cases_prepared[options_.mode]) return;
  const auto configs = task_.all_size_configs();
  for (std::size_t ci = 0; ci < configs.size(); ++ci) {
    for (const bool user_pass : {false, true}) {
      for (const auto& [kind, trial] : correctness_cases(configs[ci], ci == 0, user_pass)) {
        const DataCase* user = user_pass ? &task_.cases[static_cast<std::size_t>(trial)] : nullptr;
        const std::uint64_t seed = user != nullptr ? 0 : correctness_seed(configs[ci], kind, trial);
        reference_case(reference, configs[ci], kind, seed, user);
      }
    }
  }
  timing_cases(reference);
  reference.cases_prepared[options_.mode] = true;
}

double EvaluationRun::take_oracle_seconds() { return state_.oracle ? state_.oracle->take_seconds() : 0.0; }

void EvaluationRun::record_baselines(ReferenceState& reference, const std::string& mode, Evaluation& evaluation) {
  if (!evaluation.timing || !evaluation.baseline_timing) return;
  if (!reference.oracle) {
    evaluation.baselines["reference"] = *evaluation.baseline_timing;
    evaluation.speedups["reference"] = evaluation.speedup;
    return;
  }
  for (const auto& [name, baseline] : oracle_baselines(reference, mode)) {
    if (!baseline.timing) {
      evaluation.baseline_errors[name] = baseline.error;
      evaluation.speedups[name] = 0.0;
      continue;
    }
    // Eager is what `speedup` is against, re-measured along with the candidate when that happened.
    const TimingReport& timing = name == "eager" ? *evaluation.baseline_timing : *baseline.timing;
    evaluation.baselines[name] = timing;
    evaluation.speedups[name] = speedup_of(timing, *evaluation.timing);
  }
}

}  // namespace kernelsmith::detail

namespace kernelsmith::detail {

std::vector<OracleTensor> EvaluationRun::oracle_input_specs(const SizeConfig& config) const {
  std::vector<OracleTensor> specs;
  for (const TensorSpec& tensor : task_.tensors) {
    if (tensor.role != TensorRole::input) continue;
    specs.push_back({tensor.name, tensor.dtype, task_.extents(tensor, config.sizes)});
  }
  return specs;
}

Json EvaluationRun::oracle_timing_settings(const std::string& mode) const {
  Json settings = timing_rules_json(timing_rules(mode));
  // As the harness evicts: a read pass on a GPU, a fill on the CPU.
  settings["flush"] = !options_.flush_l2 ? "none" : oracle_device() == "cpu" ? "fill" : "read";
  settings["flush_bytes"] = l2_flush_bytes(backend_.device());
  return settings;
}

// ---- A host-code candidate (docs/kernelbench-modelnew.md)

CorrectnessReport EvaluationRun::check_model_new(ReferenceState& reference, PytorchOracleClient& runner,
                                                 HostCodeReport& host, IntegrityReport& integrity) {
  CorrectnessReport report;
  report.passed = true;
  host.custom_kernel_every_check = true;
  const auto configs = task_.all_size_configs();
  for (std::size_t step = 0; step < 2 * configs.size(); ++step) {
    const std::size_t ci = step % configs.size();
    const bool user_pass = step >= configs.size();
    const SizeConfig& config = configs[ci];
    const std::vector<std::pair<InputKind, int>> cases = correctness_cases(config, ci == 0, user_pass);
    if (cases.empty()) continue;
    const std::vector<OracleTensor> input_specs = oracle_input_specs(config);
    std::vector<OracleTensor> output_specs;  // in the oracle's order, as the runner writes them
    for (const auto& name : task_.oracle->outputs) {
      const TensorSpec& tensor = task_.tensor(name);
      output_specs.push_back({tensor.name, tensor.dtype, task_.extents(tensor, config.sizes)});
    }
    const Json problem = problem_with_candidate(task_, config, candidate_);
    for (const auto& [kind, trial] : cases) {
      const DataCase* user = user_pass ? &task_.cases[static_cast<std::size_t>(trial)] : nullptr;
      const std::uint64_t seed = user != nullptr ? 0 : correctness_seed(config, kind, trial);
      const std::shared_ptr<const CaseData> held = reference_case(reference, config, kind, seed, user);
      const CaseData& data = *held;
      std::vector<const Bytes*> inputs;
      for (const Bytes& bytes : data.inputs) inputs.push_back(&bytes);
      std::vector<Bytes> written;
      try {
        written = runner.outputs(problem, reference.content_key, config.name, input_specs, inputs, output_specs);
      } catch (const OracleFailure& e) {
        throw model_new_failure(e, config.name);
      }
      if (json_value_or<std::int64_t>(runner.last_reply(), "custom_calls", 0) <= 0) host.custom_kernel_every_check = false;
      take_runner_flags(runner.last_reply(), host, integrity);
      CorrectnessCheck check;
      check.sizes = config.name;
      check.inputs = user != nullptr ? user->name : to_string(kind);
      check.seed = seed;
      check.passed = true;
      std::string first_problem;
      std::size_t expected_index = 0;  // task order
      for (const TensorSpec& tensor : task_.tensors) {
        if (tensor.role != TensorRole::output) continue;
        const auto found = std::find_if(output_specs.begin(), output_specs.end(),
                                        [&](const OracleTensor& spec) { return spec.name == tensor.name; });
        const Bytes& actual = written[static_cast<std::size_t>(found - output_specs.begin())];
        std::int64_t count = 1;
        for (const std::int64_t extent : found->shape) count *= extent;
        const Unsealed expected(data.expected[expected_index++]);
        // One run: a fresh process per candidate, and fresh output tensors on every call, leave nothing to poison.
        OutputComparison comparison = compare_output(tensor.name, tensor.dtype, count, expected, actual, actual,
                                                     task_.tolerance_for(tensor.dtype));
        if (!comparison.check.passed) {
          check.passed = false;
          if (first_problem.empty()) first_problem = describe_failure(comparison, count);
        }
        check.outputs.push_back(std::move(comparison.check));
      }
      check.message = first_problem;
      if (!record_check(report, std::move(check), user_pass)) return report;
    }
  }
  report.message = fmt::format("{} checks passed over {} size configurations", report.trials, configs.size());
  return report;
}

void EvaluationRun::inspect_model_new(ReferenceState& reference, PytorchOracleClient& runner, HostCodeReport& host,
                                      IntegrityReport& integrity) {
  // A case the checks already ran (the timing cases' inputs stay unseen until the timed runs that are checked).
  const SizeConfig& config = task_.timing_sizes;
  const std::shared_ptr<const CaseData> held =
      reference_case(reference, config, InputKind::random, correctness_seed(config, InputKind::random, 0));
  std::vector<const Bytes*> inputs;
  for (const Bytes& bytes : held->inputs) inputs.push_back(&bytes);
  Json reply;
  try {
    reply = runner.inspect(problem_with_candidate(task_, config, candidate_), reference.content_key, config.name,
                           oracle_input_specs(config), inputs);
  } catch (const OracleFailure& e) {
    throw model_new_failure(e, config.name);
  }
  const Json& report = reply.at("host_code");
  host.kernels.clear();
  for (const Json& item : report.at("kernels")) {
    HostKernel kernel;
    kernel.name = item.at("name").get<std::string>();
    kernel.origin = item.at("origin").get<std::string>();
    kernel.launches = item.at("launches").get<std::int64_t>();
    kernel.device_seconds = item.at("device_seconds").get<double>();
    host.kernels.push_back(std::move(kernel));
  }
  host.custom_share = json_value_or<double>(report, "custom_share", 0.0);
  host.custom_calls = json_value_or<std::int64_t>(report, "custom_calls", 0);
  host.ablation = json_value_or<std::string>(report, "ablation", "");
  take_runner_flags(reply, host, integrity);
}

namespace {

/// The first output of `written` (the oracle's order) that differs from `data`'s expected outputs (the task's
/// order), described; "" when all match.
std::string first_mismatch(const Task& task, const SizeConfig& config, const std::vector<Bytes>& written,
                           const CaseData& data) {
  std::size_t expected_index = 0;
  for (const TensorSpec& tensor : task.tensors) {
    if (tensor.role != TensorRole::output) continue;
    const auto& names = task.oracle->outputs;
    const auto found = std::find(names.begin(), names.end(), tensor.name);
    const Bytes& actual = written[static_cast<std::size_t>(found - names.begin())];
    std::int64_t count = 1;
    for (const std::int64_t extent : task.extents(tensor, config.sizes)) count *= extent;
    const Unsealed expected(data.expected[expected_index++]);
    const OutputComparison comparison =
        compare_output(tensor.name, tensor.dtype, count, expected, actual, actual, task.tolerance_for(tensor.dtype));
    if (!comparison.check.passed) return describe_failure(comparison, count);
  }
  return {};
}

}  // namespace

TimingReport EvaluationRun::time_model_new(ReferenceState& reference, PytorchOracleClient& runner,
                                           const std::string& mode, HostCodeReport& host, IntegrityReport& integrity) {
  const SizeConfig& config = task_.timing_sizes;
  const TimingCases cases = timing_cases(reference);
  std::vector<OracleTensor> output_specs;  // in the oracle's order, as the runner writes them
  for (const auto& name : task_.oracle->outputs) {
    const TensorSpec& tensor = task_.tensor(name);
    output_specs.push_back({tensor.name, tensor.dtype, task_.extents(tensor, config.sizes)});
  }
  const PytorchOracleClient::CandidateTiming timed = runner.time_candidate(
      problem_with_candidate(task_, config, candidate_), reference.content_key, config.name,
      oracle_input_specs(config), input_sets_of(cases), output_specs, oracle_timing_settings(mode));
  if (!timed.timing) {
    if (timed.stage == "helper") {
      throw model_new_failure(OracleFailure(timed.stage, timed.error), config.name);
    }
    const CandidateFailure failure = model_new_failure(OracleFailure(timed.stage, timed.error), config.name);
    throw CandidateFailure(failure.status(), fmt::format("timing ModelNew failed: {}", failure.what()));
  }
  take_runner_flags(timed.reply, host, integrity);
  // The timed runs on the timing cases' exact inputs must compute what the checks did: a result cached from
  // an earlier call, or a graph replayed on stale buffers, does not.
  for (std::size_t set = 0; set < cases.size() && set < timed.checked.size(); ++set) {
    const std::string mismatch = first_mismatch(task_, config, timed.checked[set], *cases[set]);
    if (!mismatch.empty()) {
      throw CandidateFailure(Status::incorrect,
                             fmt::format("sizes '{}': a timed run's outputs are wrong (timing case {}): {}; the outputs "
                                         "of every call must be computed from that call's inputs (no results kept "
                                         "from earlier calls)",
                                         config.name, set, mismatch));
    }
  }
  return *timed.timing;
}

}  // namespace kernelsmith::detail
