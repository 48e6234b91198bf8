#include "evaluate/protocol.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <random>

#include <unistd.h>

#include "detail/json_util.hpp"
#include "detail/bulk_file.hpp"
#include "detail/file_cache.hpp"
#include "detail/random.hpp"
#include "detail/sha256.hpp"
#include "evaluate/build_failure.hpp"
#include "evaluate/plan_runner.hpp"
#include "evaluate/task_key.hpp"
#include "json_codec.hpp"

namespace kernelsmith::detail {

namespace {

std::uint64_t stable_hash(const std::string& text) {
  // FNV-1a: the same on every platform, unlike std::hash.
  std::uint64_t hash = 1469598103934665603ULL;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  return hash;
}

// A loaded reference holds its modules and bound plans (kilobytes); its cases live in the case cache.
constexpr std::size_t kReferenceTasksKept = 32;

std::uint64_t case_seed(std::uint64_t base, const std::string& config, InputKind kind, int trial) {
  return mix_seed(mix_seed(base, stable_hash(config)), static_cast<std::uint64_t>(kind) * 1000 + trial);
}

}  // namespace

// Reference inputs and outputs kept in host memory: $KERNELSMITH_CASE_CACHE_GB GiB, else an eighth of it,
// between 1 and 16 GiB. A strict evaluation of a large task holds about eight cases of its timing sizes.
std::size_t case_cache_bytes() {
  if (const auto bytes = cache_bytes_from_environment("KERNELSMITH_CASE_CACHE_GB")) return *bytes;
  constexpr std::size_t kGiB = std::size_t(1) << 30;
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  const std::size_t physical = pages > 0 && page_size > 0 ? std::size_t(pages) * std::size_t(page_size) : 8 * kGiB;
  return std::clamp(physical / 8, kGiB, 16 * kGiB);
}

namespace {

// " (tasks/relu/reference.cl)" for a reference read from a file; "" for one given inline.
std::string reference_file_label(const Task& task, const std::string& language) {
  const auto source = task.references.find(language);
  return source == task.references.end() || source->second.path.empty() ? std::string()
                                                                        : fmt::format(" ({})", source->second.path);
}

}  // namespace

ReferenceState& EvaluationRun::reference(const std::string& key) {
  // Least recently used out: a run that cycles through more tasks than are kept would otherwise load each
  // reference again, and time it again to confirm each suspicious speedup.
  for (auto it = state_.references.begin(); it != state_.references.end(); ++it) {
    if ((*it)->key != key) continue;
    std::unique_ptr<ReferenceState> found = std::move(*it);
    state_.references.erase(it);
    state_.references.push_back(std::move(found));
    return *state_.references.back();
  }
  // The oracle, when present, is the correctness oracle and the baseline for every backend; the
  // references then serve as examples only.
  if (task_.oracle) return oracle_reference(key);
  const auto source = task_.references.find(backend_.language());
  if (source == task_.references.end()) {
    throw TaskError(fmt::format("task {} has no {} reference, which the {} backend needs as the correctness oracle "
                                "and the baseline; add \"references\": {{\"{}\": ...}} to its manifest",
                                task_.name, backend_.language(), backend_.name(), backend_.language()));
  }
  auto state = std::make_unique<ReferenceState>();
  state->key = key;
  state->content_key = task_content_key(task_);
  try {
    const LaunchPlan plan = LaunchPlan::parse(source->second.source, source->first);
    LoadedPlan loaded = load_plan(backend_, task_, plan, source->second.source, {}, options_.compile_timeout_seconds);
    state->modules = std::move(loaded.modules);
    state->bound = std::move(loaded.bound);
  } catch (const DeviceFault&) {
    throw;
  } catch (const CompileRejected& e) {
    const std::string file = source->second.path.empty() ? "reference" : source->second.path;
    throw TaskError(fmt::format("task {}: its {} reference does not compile on {}: {}\n{}", task_.name,
                                backend_.language(), backend_.device().name, e.what(),
                                rename_source_in_log(e.log, file)));
  } catch (const std::exception& e) {
    throw TaskError(fmt::format("task {}: its {} reference{} cannot run on {}: {}", task_.name, backend_.language(),
                                reference_file_label(task_, backend_.language()), backend_.device().name, e.what()));
  }
  return keep(std::move(state));
}

ReferenceState& EvaluationRun::keep(std::unique_ptr<ReferenceState> reference) {
  if (state_.references.size() >= kReferenceTasksKept) state_.references.pop_front();
  state_.references.push_back(std::move(reference));
  return *state_.references.back();
}

std::shared_ptr<const CaseData> EvaluationRun::reference_case(ReferenceState& reference, const SizeConfig& config,
                                                              InputKind kind, std::uint64_t seed,
                                                              const DataCase* user) {
  const std::string key = user != nullptr ? fmt::format("{}|{}|{}", reference.key, config.name, user->name)
                                          : fmt::format("{}|{}|{}|{}", reference.key, config.name, to_string(kind), seed);
  if (auto cached = state_.cases.find(key)) return cached;
  const BoundPlan& plan = reference.bound.at(config.name);
  std::vector<Bytes> inputs;
  for (std::size_t i = 0; i < plan.buffers.size(); ++i) {
    const BufferSpec& buffer = plan.buffers[i];
    if (buffer.role != BufferSpec::Role::input) continue;
    if (user != nullptr) {
      const auto& given = *user->inputs.at(buffer.name);
      inputs.emplace_back(given.begin(), given.end());
      continue;
    }
    const TensorSpec& tensor = task_.tensors[buffer.tensor_index];
    inputs.push_back(
        generate_input(tensor, task_.extents(tensor, config.sizes), kind, mix_seed(seed, buffer.tensor_index)));
  }
  if (user == nullptr) return reference_case_of(reference, config, key, to_string(kind), std::move(inputs));
  // The caller's expected outputs, where given, replace the reference's, which are computed all the same (the
  // case must be one the reference runs on); not cached under the key until they are in place.
  CaseData data;
  data.expected = reference_outputs(reference, config, key, inputs, user->name);
  data.inputs = std::move(inputs);
  std::size_t output = 0;
  for (const BufferSpec& buffer : plan.buffers) {
    if (buffer.role != BufferSpec::Role::output) continue;
    if (user->expected.count(buffer.name) > 0) {
      const auto& given = *user->expected.at(buffer.name);
      data.expected[output] = SealedBytes::copy_of(given.data(), given.size());
    }
    ++output;
  }
  return state_.cases.insert(key, std::move(data));
}

std::shared_ptr<const CaseData> EvaluationRun::reference_case_of(ReferenceState& reference, const SizeConfig& config,
                                                                 const std::string& key, const std::string& label,
                                                                 std::vector<Bytes> inputs) {
  if (auto cached = state_.cases.find(key)) return cached;
  CaseData data;
  data.expected = reference_outputs(reference, config, key, inputs, label);
  data.inputs = std::move(inputs);
  return state_.cases.insert(key, std::move(data));
}

std::vector<SealedBytes> EvaluationRun::reference_outputs(ReferenceState& reference, const SizeConfig& config,
                                                          const std::string& key, const std::vector<Bytes>& inputs,
                                                          const std::string& inputs_label) {
  if (reference.oracle) return oracle_outputs(reference, config, key, inputs);
  const BoundPlan& plan = reference.bound.at(config.name);
  // A reference kernel's outputs are kept on disk like the oracle's, so the next run on this machine pays the
  // reference's cost (often the largest stage for naive references) once per case, not once per run.
  std::vector<std::size_t> output_bytes;
  for (const BufferSpec& buffer : plan.buffers) {
    if (buffer.role == BufferSpec::Role::output) output_bytes.push_back(buffer.bytes);
  }
  const std::string disk_key = Sha256()
                                   .field("kernelsmith.reference-outputs/2")  // 2: large inputs drawn in chunks
                                   .field(reference.content_key)
                                   .field(key)
                                   .field(backend_.name())
                                   .field(backend_.device().name)
                                   .hex();
  if (auto cached = oracle_cache().find_sealed_outputs(disk_key, output_bytes)) return std::move(*cached);
  std::vector<SealedBytes> expected;
  try {
    DeviceBuffers buffers(backend_, state_.pool, plan.buffers);
    std::size_t input = 0;
    for (std::size_t i = 0; i < plan.buffers.size(); ++i) {
      const BufferSpec& buffer = plan.buffers[i];
      if (buffer.role == BufferSpec::Role::input) {
        backend_.write(buffers[i], inputs[input++].data(), buffer.bytes);
      } else {
        backend_.fill(buffers[i], 0, buffer.bytes);
      }
    }
    run_plan(backend_, plan, buffers.handles());
    backend_.synchronize();
    for (std::size_t i = 0; i < plan.buffers.size(); ++i) {
      const BufferSpec& buffer = plan.buffers[i];
      if (buffer.role != BufferSpec::Role::output) continue;
      // Read straight into sealed pages: no copy of the expected output is left in the heap.
      SealedBytes out(buffer.bytes);
      {
        const Unsealed open(out, true);
        backend_.read(buffers[i], open.writable_data(), buffer.bytes);
      }
      expected.push_back(std::move(out));
    }
    // The buffers go back to the pool, which hands them to candidates: not with the answer in them.
    scrub_outputs_and_workspaces(backend_, plan, buffers);
  } catch (const DeviceFault&) {
    throw;
  } catch (const std::exception& e) {
    throw TaskError(fmt::format("task {}: its {} reference{} failed on the sizes '{}' with {} inputs: {}; fix the "
                                "reference, or the sizes in the manifest",
                                task_.name, backend_.language(), reference_file_label(task_, backend_.language()),
                                config.name, inputs_label, e.what()));
  }
  oracle_cache().store_outputs(disk_key, expected);
  return expected;
}

std::string EvaluationRun::ill_conditioned(ReferenceState& reference, const SizeConfig& config, InputKind kind,
                                           std::uint64_t seed, const CaseData& data) {
  // The inputs moved by about 2^-17 of their magnitude (up or down at random, zeros kept): what a right
  // kernel's own rounding can amount to in its intermediate values. Where the reference's outputs move
  // beyond the tolerance then, the case cannot tell a right kernel from a wrong one.
  const BoundPlan& plan = reference.bound.at(config.name);
  std::vector<Bytes> nudged;
  std::size_t input = 0;
  for (const BufferSpec& buffer : plan.buffers) {
    if (buffer.role != BufferSpec::Role::input) continue;
    nudged.push_back(nudge_inputs(buffer.dtype, data.inputs[input++], mix_seed(seed, kNudgeSeedStream)));
  }
  const std::string key = fmt::format("{}|{}|{}|{}|nudged", reference.key, config.name, to_string(kind), seed);
  const std::vector<SealedBytes> moved = reference_outputs(reference, config, key, nudged, to_string(kind));
  std::size_t output = 0;
  for (const BufferSpec& buffer : plan.buffers) {
    if (buffer.role != BufferSpec::Role::output) continue;
    const Unsealed expected(data.expected[output]);
    const Unsealed nudged_outputs(moved[output]);
    const OutputComparison comparison =
        compare_output(buffer.name, buffer.dtype, buffer.count, expected, nudged_outputs, nudged_outputs,
                       task_.tolerance_for(buffer.dtype));
    if (!comparison.check.passed) return describe_failure(comparison, buffer.count);
    ++output;
  }
  return "";
}

void EvaluationRun::check_reference_spread(ReferenceState& reference) {
  if (reference.spread_checked) return;
  // Several random cases on the timing sizes: an output that barely varies across elements and seeds
  // lets a wrong kernel pass a tolerance (pitfall 8).
  const SizeConfig& config = task_.timing_sizes;
  const int trials = std::max(options_.correctness_trials, 2);
  struct OutputSpread {
    const TensorSpec* tensor;
    std::size_t index;  // among the outputs
    std::int64_t count;
    bool single_value;
    SpreadAccumulator spread;
    std::size_t cases = 0;
  };
  std::vector<OutputSpread> outputs;
  for (const auto& tensor : task_.tensors) {
    if (tensor.role != TensorRole::output) continue;
    const std::int64_t count = task_.element_count(tensor, config.sizes);
    // A single value (a loss, a norm) barely moves between random draws of many elements, yet a constant
    // answer still fails wherever the cases a candidate is checked on expect different values: for such an
    // output the spread also counts those cases of the first check size (its input kinds scale the data).
    const bool single_value =
        count == 1 && !task_.check_sizes.empty() && task_.element_count(tensor, task_.check_sizes.front().sizes) == 1;
    outputs.push_back({&tensor, outputs.size(), count, single_value, {}, 0});
  }
  auto add_case = [&](const CaseData& data, bool checked_case) {
    for (OutputSpread& output : outputs) {
      if (checked_case && !output.single_value) continue;
      const Unsealed expected(data.expected[output.index]);
      output.spread.add(output.tensor->dtype, expected.data(), output.count);
      ++output.cases;
    }
  };
  if (!task_.check_sizes.empty()) {
    const SizeConfig& check = task_.check_sizes.front();
    for (const auto& [kind, trial] : correctness_cases(check, false, false)) {
      add_case(*reference_case(reference, check, kind, correctness_seed(check, kind, trial)), true);
    }
  }
  // One case at a time (each may take gigabytes), the last being trial 0: the first correctness case on these
  // sizes, so it is the case cache's most recent entry when the checks begin.
  for (int trial = trials - 1; trial >= 0; --trial) {
    add_case(*reference_case(reference, config, InputKind::random,
                             case_seed(options_.seed, config.name, InputKind::random, trial)),
             false);
  }
  for (const OutputSpread& output : outputs) {
    const double spread = output.spread.spread();
    const double threshold = near_constant_spread(output.tensor->dtype, task_.tolerance_for(output.tensor->dtype));
    if (spread < threshold) {
      throw TaskError(fmt::format(
          "task {}: the {} output {} is near-constant on random inputs (relative spread {:.3g} over {} "
          "{}, below {:g}, the tolerance's atol + rtol): a wrong kernel could pass the tolerance; change the "
          "task's input distributions or its computation",
          task_.name, reference.oracle ? "PyTorch module's" : "reference", output.tensor->name, spread, output.cases,
          output.single_value
              ? fmt::format("cases of the sizes '{}' and '{}'", config.name, task_.check_sizes.front().name)
              : fmt::format("trials of the sizes '{}'", config.name),
          threshold));
    }
  }
  check_trivial_programs(reference);
  reference.spread_checked = true;
}

std::mt19937_64 entropy_seeded_generator() {
  std::random_device entropy;
  std::seed_seq seed{entropy(), entropy(), entropy(), entropy(), entropy(), entropy(), entropy(), entropy()};
  return std::mt19937_64(seed);
}

std::uint8_t EvaluationRun::random_poison() {
  constexpr std::size_t kPatterns = sizeof(kPoisonBytes);
  return kPoisonBytes[random_() % kPatterns];
}

PoisonPair EvaluationRun::random_poisons() {
  constexpr std::size_t kPatterns = sizeof(kPoisonBytes);
  const std::size_t first = random_() % kPatterns;
  const std::size_t second = (first + 1 + random_() % (kPatterns - 1)) % kPatterns;
  return {kPoisonBytes[first], kPoisonBytes[second]};
}

namespace {

// One trivial program for one output: what it writes there, from a case's inputs (task order).
struct TrivialProgram {
  std::string name;         // "y = x", "y = -x", "y = 0", "y = 0.5 (a constant)"
  std::string input;        // the input it copies or negates; "" for zeros and the constant
  bool negate = false;
  bool constant = false;
  double value = 0.0;       // the constant
  bool passed_every = true;  // no case of the group failed it yet
};

}  // namespace

void EvaluationRun::check_trivial_programs(ReferenceState& reference) {
  // Two groups of cases: the timing sizes (their correctness cases and the timed runs' input sets: a
  // candidate specialized there would be timed trivial), and the check sizes together (the group the brief
  // checks name as "the check sizes"). A trivial program that passes every case of a group means the task
  // cannot tell a kernel that computes nothing from a right one.
  struct Group {
    std::string label;
    std::vector<std::pair<const SizeConfig*, std::vector<std::pair<InputKind, int>>>> configs;
    bool timing = false;
  };
  std::vector<Group> groups;
  groups.push_back({fmt::format("the timing sizes '{}'", task_.timing_sizes.name),
                    {{&task_.timing_sizes, correctness_cases(task_.timing_sizes, true, false)}},
                    true});
  if (!task_.check_sizes.empty()) {
    Group checks;
    std::vector<std::string> names;
    for (const SizeConfig& config : task_.check_sizes) {
      checks.configs.emplace_back(&config, correctness_cases(config, false, false));
      names.push_back(fmt::format("'{}'", config.name));
    }
    checks.label = fmt::format("the check sizes {}", fmt::join(names, ", "));
    groups.push_back(std::move(checks));
  }

  for (const Group& group : groups) {
    // Per output (task order among the outputs), the programs still passing every case seen.
    std::map<std::string, std::vector<TrivialProgram>> programs;
    std::size_t case_count = 0;
    auto try_case = [&](const SizeConfig& config, const CaseData& data) {
      ++case_count;
      const BoundPlan& plan = reference.bound.at(config.name);
      std::map<std::string, const BufferSpec*> inputs;
      std::map<std::string, std::size_t> input_index;
      std::size_t input = 0;
      for (const BufferSpec& buffer : plan.buffers) {
        if (buffer.role != BufferSpec::Role::input) continue;
        inputs[buffer.name] = &buffer;
        input_index[buffer.name] = input++;
      }
      std::size_t output = 0;
      for (const BufferSpec& buffer : plan.buffers) {
        if (buffer.role != BufferSpec::Role::output) continue;
        const Unsealed expected(data.expected[output++]);
        auto found = programs.find(buffer.name);
        if (found == programs.end()) {
          // The first case names the programs: zeros, the mean of its expected output as a constant, and a
          // copy and the negation of every input of the output's dtype and element count.
          std::vector<TrivialProgram> made;
          made.push_back({fmt::format("{} = 0", buffer.name), "", false, false, 0.0, true});
          double sum = 0.0;
          std::int64_t finite = 0;
          for (std::int64_t i = 0; i < buffer.count; ++i) {
            const double value = load_element(buffer.dtype, expected.data(), i);
            if (std::isfinite(value)) {
              sum += value;
              ++finite;
            }
          }
          const double mean = finite > 0 ? sum / static_cast<double>(finite) : 0.0;
          // On the timing sizes alone a single-value output may legitimately stay near one value (a mean of
          // many draws): the check sizes' scaled input kinds judge constants there, as the spread check does.
          if (!group.timing) {
            made.push_back({fmt::format("{} = {:.6g} (a constant: the mean of the expected output)", buffer.name,
                                        mean),
                            "", false, true, mean, true});
          }
          for (const auto& [name, spec] : inputs) {
            if (spec->dtype != buffer.dtype || spec->count != buffer.count) continue;
            made.push_back({fmt::format("{} = {} (a copy of the input)", buffer.name, name), name, false, false, 0.0,
                            true});
            made.push_back({fmt::format("{} = -{} (the input negated)", buffer.name, name), name, true, false, 0.0,
                            true});
          }
          found = programs.emplace(buffer.name, std::move(made)).first;
        }
        for (TrivialProgram& program : found->second) {
          if (!program.passed_every) continue;
          Bytes written;
          const Bytes* candidate = &written;
          if (!program.input.empty()) {
            const auto spec = inputs.find(program.input);
            if (spec == inputs.end() || spec->second->dtype != buffer.dtype || spec->second->count != buffer.count) {
              program.passed_every = false;  // the shapes differ on these sizes: the program cannot be written
              continue;
            }
            const Bytes& source = data.inputs[input_index.at(program.input)];
            if (program.negate) {
              written.resize(source.size());
              for (std::int64_t i = 0; i < buffer.count; ++i) {
                store_element(buffer.dtype, written.data(), i, -load_element(buffer.dtype, source.data(), i));
              }
            } else {
              candidate = &source;
            }
          } else {
            written.resize(buffer.bytes);
            for (std::int64_t i = 0; i < buffer.count; ++i) {
              store_element(buffer.dtype, written.data(), i, program.constant ? program.value : 0.0);
            }
          }
          const OutputComparison comparison = compare_output(buffer.name, buffer.dtype, buffer.count, expected,
                                                             *candidate, *candidate, task_.tolerance_for(buffer.dtype));
          if (!comparison.check.passed) program.passed_every = false;
        }
      }
    };
    for (const auto& [config, cases] : group.configs) {
      for (const auto& [kind, trial] : cases) {
        try_case(*config, *reference_case(reference, *config, kind, correctness_seed(*config, kind, trial)));
      }
    }
    if (group.timing) {
      for (const auto& data : timing_cases(reference)) try_case(task_.timing_sizes, *data);
    }
    for (const auto& [output, made] : programs) {
      for (const TrivialProgram& program : made) {
        if (!program.passed_every) continue;
        std::string advice = "widen the input distributions in the task's manifest (task.json)";
        if (!program.input.empty()) {
          advice = fmt::format("widen the distribution of input {} in the task's manifest (task.json): a "
                               "distribution symmetric around zero for an operation that keeps positive values, "
                               "such as ReLU",
                               program.input);
        }
        throw TaskError(fmt::format("task {}: the trivial program '{}' passes every check of output {} on {} ({} "
                                    "cases): a kernel that does not compute the task would be ok; {}, so that it "
                                    "fails",
                                    task_.name, program.name, output, group.label, case_count, advice));
      }
    }
  }
}

std::vector<std::pair<InputKind, int>> EvaluationRun::correctness_cases(const SizeConfig& config, bool timing_sizes,
                                                                       bool user_pass) const {
  // The timing sizes are the largest, where each case costs the most. Screen mode runs fewer cases
  // there; the check sizes get every kind of input in both modes.
  const bool strict = options_.mode == "strict";
  std::vector<std::pair<InputKind, int>> cases;
  const int trials_at_timing_sizes = strict ? options_.correctness_trials : options_.screen_correctness_trials;
  const int random_trials = timing_sizes ? std::max(trials_at_timing_sizes, 1) : 1;
  if (user_pass) {
    // In this pass the second member is the index of the data case in task_.cases.
    for (std::size_t u = 0; u < task_.cases.size(); ++u) {
      if (task_.cases[u].sizes == config.name) cases.emplace_back(InputKind::random, static_cast<int>(u));
    }
    return cases;
  }
  for (int trial = 0; trial < random_trials; ++trial) cases.emplace_back(InputKind::random, trial);
  if (options_.adversarial_inputs && (!timing_sizes || strict || options_.screen_adversarial_timing_sizes)) {
    for (InputKind kind : adversarial_input_kinds()) cases.emplace_back(kind, 0);
  }
  return cases;
}

std::uint64_t EvaluationRun::correctness_seed(const SizeConfig& config, InputKind kind, int trial) const {
  return case_seed(options_.seed, config.name, kind, trial);
}

bool record_check(CorrectnessReport& report, CorrectnessCheck check, bool user_pass) {
  ++report.trials;
  const bool passed = check.passed;
  report.checks.push_back(std::move(check));
  if (passed) return true;
  const CorrectnessCheck& failed = report.checks.back();
  report.passed = false;
  report.message = user_pass ? fmt::format("{} (sizes '{}'): {}", failed.inputs, failed.sizes, failed.message)
                             : fmt::format("sizes '{}', {} inputs (seed {}): {}", failed.sizes, failed.inputs,
                                           failed.seed, failed.message);
  return false;
}

CorrectnessReport EvaluationRun::check_candidate(ReferenceState& reference,
                                                 const std::map<std::string, BoundPlan>& bound,
                                                 const std::map<std::string, BoundPlan>* reversed,
                                                 IntegrityReport& integrity) {
  CorrectnessReport report;
  report.passed = true;
  const auto configs = task_.all_size_configs();
  // Two passes over the configurations: the built-in cases, then the caller's data cases (Task::add_case).
  for (std::size_t step = 0; step < 2 * configs.size(); ++step) {
    const std::size_t ci = step % configs.size();
    const bool user_pass = step >= configs.size();
    const SizeConfig& config = configs[ci];
    const BoundPlan& plan = bound.at(config.name);
    const BoundPlan& second_plan = reversed != nullptr ? reversed->at(config.name) : plan;
    const std::vector<std::pair<InputKind, int>> cases = correctness_cases(config, ci == 0, user_pass);
    if (cases.empty()) continue;
    DeviceBuffers buffers(backend_, state_.pool, plan.buffers);
    for (const auto& [kind, trial] : cases) {
      const DataCase* user = user_pass ? &task_.cases[static_cast<std::size_t>(trial)] : nullptr;
      const std::uint64_t seed = user != nullptr ? 0 : correctness_seed(config, kind, trial);
      const std::shared_ptr<const CaseData> held = reference_case(reference, config, kind, seed, user);
      const CaseData& data = *held;
      CorrectnessCheck check;
      check.sizes = config.name;
      check.inputs = user != nullptr ? user->name : to_string(kind);
      check.seed = seed;

      auto upload_inputs = [&] {
        std::size_t input = 0;
        for (std::size_t i = 0; i < plan.buffers.size(); ++i) {
          if (plan.buffers[i].role != BufferSpec::Role::input) continue;
          backend_.write(buffers[i], data.inputs[input++].data(), plan.buffers[i].bytes);
        }
      };
      auto read_outputs = [&] {
        std::vector<Bytes> outputs;
        for (std::size_t i = 0; i < plan.buffers.size(); ++i) {
          if (plan.buffers[i].role != BufferSpec::Role::output) continue;
          Bytes out(plan.buffers[i].bytes);
          backend_.read(buffers[i], out.data(), out.size());
          outputs.push_back(std::move(out));
        }
        return outputs;
      };
      // Inputs the candidate wrote into (pitfall 4); restores them for the next case.
      auto check_inputs = [&] {
        std::size_t input = 0;
        bool restored = false;
        for (std::size_t i = 0; i < plan.buffers.size(); ++i) {
          if (plan.buffers[i].role != BufferSpec::Role::input) continue;
          Bytes now(plan.buffers[i].bytes);
          backend_.read(buffers[i], now.data(), now.size());
          if (now != data.inputs[input]) {
            if (std::find(check.modified_inputs.begin(), check.modified_inputs.end(), plan.buffers[i].name) ==
                check.modified_inputs.end()) {
              check.modified_inputs.push_back(plan.buffers[i].name);
            }
            restored = true;
          }
          ++input;
        }
        if (restored) upload_inputs();
      };

      // The two runs' patterns are drawn at random (they differ): a kernel cannot tell the first run from
      // the second, or either from a timed run, by what its outputs and workspaces hold.
      const PoisonPair poison = random_poisons();
      upload_inputs();
      poison_outputs_and_workspaces(backend_, plan, buffers, poison.first);
      run_plan(backend_, plan, buffers.handles());
      backend_.synchronize();
      const std::vector<Bytes> first = read_outputs();
      // Inputs are checked after each run: a kernel that keeps state in its input during one run and puts
      // the input back in the next is found after the first.
      check_inputs();
      poison_outputs_and_workspaces(backend_, plan, buffers, poison.second);
      run_plan(backend_, second_plan, buffers.handles());
      backend_.synchronize();
      const std::vector<Bytes> second = read_outputs();
      check_inputs();

      check.passed = check.modified_inputs.empty();
      std::size_t output = 0;
      std::string first_problem;
      for (std::size_t i = 0; i < plan.buffers.size(); ++i) {
        const BufferSpec& buffer = plan.buffers[i];
        if (buffer.role != BufferSpec::Role::output) continue;
        const Tolerance tolerance = task_.tolerance_for(buffer.dtype);
        // Opened now that both runs have ended (synchronized above); sealed again at the end of the scope.
        const Unsealed expected(data.expected[output]);
        OutputComparison comparison = compare_output(buffer.name, buffer.dtype, buffer.count, expected, first[output],
                                                     second[output], tolerance, ThreadPool::shared(), poison);
        if (comparison.nondeterministic > 0) {
          integrity.deterministic = false;
          add_flag(integrity, "nondeterministic");
          if (reversed != nullptr && comparison.check.passed) {
            // The runs differ: the reversed schedule's outputs must be right as well.
            const OutputComparison again = compare_output(buffer.name, buffer.dtype, buffer.count, expected,
                                                          second[output], second[output], tolerance);
            if (!again.check.passed) {
              add_flag(integrity, "race");
              comparison.check = again.check;
              comparison.check.passed = false;
              if (first_problem.empty()) {
                first_problem = "with the blocks run in the reverse order (a race between blocks: one reads what "
                                "another has not written yet, or both write one place), " +
                                describe_failure(again, buffer.count);
              }
            }
          }
        }
        if (!comparison.check.passed) {
          check.passed = false;
          if (first_problem.empty()) first_problem = describe_failure(comparison, buffer.count);
        }
        check.outputs.push_back(std::move(comparison.check));
        ++output;
      }
      if (!check.modified_inputs.empty()) {
        check.message = fmt::format("the kernel wrote into its input{} {}; inputs must stay unchanged",
                                    check.modified_inputs.size() == 1 ? "" : "s", fmt::join(check.modified_inputs, ", "));
      } else if (!first_problem.empty()) {
        check.message = first_problem;
      }
      if (!check.passed && check.modified_inputs.empty() && user == nullptr && kind != InputKind::random &&
          integrity.deterministic) {
        // A failure on an adversarial case counts only where the case is well-conditioned (LayerNorm of
        // constant inputs divides rounding noise by sqrt(eps): the reference's answer is noise too).
        const std::string reason = ill_conditioned(reference, config, kind, seed, data);
        if (!reason.empty()) {
          check.passed = true;
          check.message = fmt::format("not judged: the case is ill-conditioned (inputs moved by 2^-17 of their "
                                      "magnitude move the reference's outputs beyond the tolerance: {}); the "
                                      "candidate's own result was: {}",
                                      reason, check.message);
          add_flag(integrity, "ill_conditioned_case");
        }
      }
      if (!record_check(report, std::move(check), user_pass)) return report;
    }
  }
  report.message = fmt::format("{} checks passed over {} size configurations", report.trials, configs.size());
  return report;
}

CacheFlusher& EvaluationRun::flusher() {
  if (!state_.flusher) state_.flusher = std::make_unique<CacheFlusher>(backend_);
  return *state_.flusher;
}

TimingSettings EvaluationRun::settings(const std::string& mode) {
  TimingSettings settings = timing_rules(mode);
  if (options_.flush_l2) settings.flusher = &flusher();
  return settings;
}

TimingSettings EvaluationRun::timing_rules(const std::string& mode) const {
  // "remeasure" confirms a suspicious speedup: strict mode's budget and its strict_min_samples samples, no
  // more. It checks a ratio above suspicious_speedup to within harness.cpp's kConfirmingRatio (1.5), for which a
  // hundred samples are plenty (spread by even 10%, their mean is known to 1%); sampling to a spread target
  // or a whole strict budget would multiply the cost of screening fast candidates. Screen mode stops on
  // the standard error of the mean (timing.hpp, TimingSettings::stop_rule); strict mode on the spread.
  const bool strict = mode == "strict" || mode == "remeasure";
  TimingSettings settings;
  settings.mode = strict ? "strict" : "screen";
  settings.noise_target = options_.noise_target;
  settings.stop_rule = strict ? "spread" : "standard_error";
  settings.min_samples = strict ? std::max(options_.min_samples, options_.strict_min_samples) : options_.min_samples;
  settings.max_samples = mode == "strict"      ? options_.strict_max_samples
                         : mode == "remeasure" ? settings.min_samples
                                               : options_.max_samples;
  settings.budget_seconds = strict ? options_.strict_budget_seconds : options_.screen_budget_seconds;
  settings.share_samples = strict ? 5 : 3;
  return settings;
}

TimingCases EvaluationRun::timing_cases(ReferenceState& reference) {
  if (timing_cases_) return *timing_cases_;
  const SizeConfig& config = task_.timing_sizes;
  const std::uint64_t seed = mix_seed(options_.seed, kTimingSeedStream);
  TimingCases cases{reference_case(reference, config, InputKind::random, seed)};
  const BoundPlan& plan = reference.bound.at(config.name);
  for (int set = 1; set < kTimingInputSets; ++set) {
    // The other sets cost a copy: each input of the first set rotated by an offset of its own (drawing
    // random values again costs the host far more than the reference run costs the device). Every
    // position then holds another value, which is what defeats a cache keyed on input values.
    std::vector<Bytes> inputs;
    std::size_t input = 0;
    for (const BufferSpec& buffer : plan.buffers) {
      if (buffer.role != BufferSpec::Role::input) continue;
      const Bytes& source = cases.front()->inputs[input++];
      const std::uint64_t set_seed = mix_seed(seed, static_cast<std::uint64_t>(set) * 1000003ULL + input);
      const TensorSpec& tensor = task_.tensors[buffer.tensor_index];
      if (tensor.distribution.structure != "none") {
        // A rotation would break the structure (a symmetric matrix, rows that sum to 1): drawn afresh.
        inputs.push_back(generate_input(tensor, task_.extents(tensor, config.sizes), InputKind::random, set_seed));
        continue;
      }
      const std::size_t element = dtype_size(buffer.dtype);
      const std::size_t count = element == 0 ? 0 : source.size() / element;
      const std::size_t shift = (count > 1 ? 1 + set_seed % (count - 1) : 0) * element;
      Bytes rotated(source.size());
      parallel_copy(rotated.data(), source.data() + shift, source.size() - shift);
      parallel_copy(rotated.data() + (source.size() - shift), source.data(), shift);
      inputs.push_back(std::move(rotated));
    }
    const std::string name = fmt::format("timing input set {} of seed {}", set, seed);
    cases.push_back(reference_case_of(reference, config, fmt::format("{}|{}|{}", reference.key, config.name, name),
                                      name, std::move(inputs)));
  }
  timing_cases_ = cases;
  return cases;
}

TimingReport EvaluationRun::time_plan(const BoundPlan& plan, const TimingCases& cases, const std::string& mode,
                                      std::string* timed_output_problem) {
  // One set of output and workspace buffers; one copy of the inputs per case, on the device for the
  // whole measurement. The runs cycle through the copies: run r reads input set r % cases.size().
  DeviceBuffers buffers(backend_, state_.pool, plan.buffers);
  std::vector<std::size_t> input_slots;
  std::vector<BufferSpec> input_specs;
  std::size_t output_bytes = 0;
  for (std::size_t i = 0; i < plan.buffers.size(); ++i) {
    if (plan.buffers[i].role == BufferSpec::Role::input) {
      input_slots.push_back(i);
      input_specs.push_back(plan.buffers[i]);
    } else if (plan.buffers[i].role == BufferSpec::Role::output) {
      output_bytes += plan.buffers[i].bytes;
    }
  }
  std::vector<std::unique_ptr<DeviceBuffers>> more_inputs;
  std::vector<std::vector<std::uint64_t>> handle_sets(cases.size(), buffers.handles());
  for (std::size_t set = 0; set < cases.size(); ++set) {
    if (set > 0) {
      more_inputs.push_back(std::make_unique<DeviceBuffers>(backend_, state_.pool, input_specs));
      for (std::size_t j = 0; j < input_slots.size(); ++j) handle_sets[set][input_slots[j]] = (*more_inputs.back())[j];
    }
    for (std::size_t j = 0; j < input_slots.size(); ++j) {
      backend_.write(handle_sets[set][input_slots[j]], cases[set]->inputs[j].data(), plan.buffers[input_slots[j]].bytes);
    }
  }

  std::size_t runs = 0;
  std::size_t current = 0;
  LaunchSequence sequence;
  for (const auto& launch : plan.launches) sequence.names.push_back(launch.kernel);
  sequence.launch = [&](std::size_t index) { launch_one(backend_, plan.launches[index], handle_sets[current]); };
  sequence.before_run = [&] {
    current = runs++ % handle_sets.size();
    reset_plan_state(backend_, plan);
    // A pattern of its own for every run: nothing in a run's outputs or workspaces says whether the
    // correctness checks or the timing are running, or which run of either.
    poison_outputs_and_workspaces(backend_, plan, buffers, random_poison());
  };
  // The outputs of the current run against the reference's for its input set; the first problem only.
  std::size_t drawn_checks = 0;
  // After a sampled timed run, a spread-out selection of kSampledElements elements is compared (a run
  // that skipped or shortened its work leaves poison across whole regions); the full comparison runs
  // after the last run, and again to describe a mismatch the selection found.
  constexpr std::size_t kSampledElements = std::size_t(1) << 16;
  auto check_outputs = [&](const std::string& which, bool whole) {
    if (timed_output_problem == nullptr || !timed_output_problem->empty()) return;
    // The expected outputs are opened below: nothing of the candidate's may still be running then.
    backend_.synchronize();
    std::size_t output = 0;
    for (std::size_t i = 0; i < plan.buffers.size(); ++i) {
      const BufferSpec& buffer = plan.buffers[i];
      if (buffer.role != BufferSpec::Role::output) continue;
      Bytes out(buffer.bytes);
      backend_.read(buffers[i], out.data(), out.size());
      const Unsealed expected(cases[current]->expected[output]);
      const Tolerance tolerance = task_.tolerance_for(buffer.dtype);
      const auto count = static_cast<std::size_t>(buffer.count);
      if (!whole && count > kSampledElements) {
        const std::size_t element = dtype_size(buffer.dtype);
        const std::size_t stride = count / kSampledElements;
        const std::size_t start = random_() % count;
        Bytes expected_part(kSampledElements * element);
        Bytes out_part(kSampledElements * element);
        for (std::size_t j = 0; j < kSampledElements; ++j) {
          const std::size_t at = (start + j * stride) % count * element;
          std::memcpy(&expected_part[j * element], expected.data() + at, element);
          std::memcpy(&out_part[j * element], &out[at], element);
        }
        const OutputComparison part = compare_output(buffer.name, buffer.dtype, kSampledElements, expected_part,
                                                     out_part, out_part, tolerance);
        // The selection of the expected output does not stay behind in the heap.
        wipe_bytes(expected_part.data(), expected_part.size());
        if (part.check.passed) {
          ++output;
          continue;
        }
      }
      const OutputComparison comparison =
          compare_output(buffer.name, buffer.dtype, buffer.count, expected, out, out, tolerance);
      if (!comparison.check.passed) {
        *timed_output_problem = fmt::format("{}, {}", which, describe_failure(comparison, buffer.count));
        return;
      }
      ++output;
    }
  };
  // The inputs of input set `set` as they were uploaded: a kernel that keeps state in its inputs from one
  // timed run to the next (and puts them back before the correctness checks read them) is incorrect.
  auto check_inputs = [&](std::size_t set, const std::string& which) {
    if (timed_output_problem == nullptr || !timed_output_problem->empty()) return;
    for (std::size_t j = 0; j < input_slots.size(); ++j) {
      const BufferSpec& buffer = plan.buffers[input_slots[j]];
      Bytes now(buffer.bytes);
      backend_.read(handle_sets[set][input_slots[j]], now.data(), now.size());
      if (now != cases[set]->inputs[j]) {
        *timed_output_problem = fmt::format("{}, the kernel wrote into its input {}; inputs must stay unchanged",
                                            which, buffer.name);
        return;
      }
    }
  };
  // Small outputs and inputs are checked whole after every timed run; larger ones after runs drawn at
  // random (the k-th check after a run with probability 1/(4k), so checks fall early and late in the
  // measurement alike, at most kMaxCheckedSamples), and whole after the last run in any case.
  constexpr std::size_t kCheckEverySampleBytes = std::size_t(1) << 20;
  constexpr std::size_t kMaxCheckedSamples = 8;
  std::size_t input_bytes = 0;
  for (const BufferSpec& spec : input_specs) input_bytes += spec.bytes;
  if (timed_output_problem != nullptr) {
    sequence.after_sample = [&](std::size_t sample) {
      const bool every_output = output_bytes <= kCheckEverySampleBytes;
      const bool every_input = input_bytes <= kCheckEverySampleBytes;
      const bool drawn = drawn_checks < kMaxCheckedSamples && random_() % (4 * (drawn_checks + 1)) == 0;
      if (drawn) ++drawn_checks;
      const std::string which = fmt::format("in timed run {}", sample + 1);
      if (every_output || drawn) check_outputs(which, every_output);
      if (every_input || drawn) check_inputs(current, which);
    };
  }
  const TimingReport report = measure_sequence(backend_, sequence, settings(mode));
  check_outputs("after the timed runs", true);
  for (std::size_t set = 0; set < handle_sets.size(); ++set) check_inputs(set, "after the timed runs");
  // The reference's timing leaves the expected outputs in buffers that the pool hands to candidates next.
  if (timed_output_problem == nullptr) scrub_outputs_and_workspaces(backend_, plan, buffers);
  return report;
}

TimingReport EvaluationRun::baseline(ReferenceState& reference, const std::string& mode) {
  const auto found = reference.baseline.find(mode);
  if (found != reference.baseline.end()) return found->second;
  if (reference.oracle) {
    // A re-measurement ("remeasure") times eager again alone: speedup is against it.
    const OracleBaseline eager = oracle_baselines(reference, mode, true).at("eager");
    if (!eager.timing) {
      throw TaskError(fmt::format("task {}: timing its PyTorch module (the eager baseline, which speedups are "
                                  "against) failed: {}",
                                  task_.name, eager.error));
    }
    return reference.baseline[mode] = *eager.timing;
  }
  // The reference's timing is kept on disk like its outputs, per (task content, backend, device, the timing
  // rules), so the next run on this machine does not time it again. A re-measurement ("remeasure")
  // confirms a suspicious speedup against a fresh timing of both sides, so it is never taken from disk.
  const TimingSettings rules = timing_rules(mode);
  const std::string disk_key = Sha256()
                                   .field("kernelsmith.reference-baseline/1")
                                   .field(reference.content_key)
                                   .field(backend_.name())
                                   .field(backend_.device().name)
                                   .field(mode)
                                   .field(timing_rules_json(rules).dump())
                                   .field(options_.flush_l2 ? "flush_l2" : "no_flush")
                                   .field(options_.baseline_session)
                                   .hex();
  if (mode != "remeasure") {
    if (const auto text = oracle_cache().find_text(disk_key)) {
      try {
        const char* origin = "<reference baseline cache>";
        return reference.baseline[mode] = timing_report_from_json(JsonField(parse_json(*text, origin), origin));
      } catch (const std::exception&) {
        // A damaged entry is timed again and overwritten.
      }
    }
  }
  const SizeConfig& config = task_.timing_sizes;
  TimingReport report;
  try {
    report = time_plan(reference.bound.at(config.name), timing_cases(reference), mode, nullptr);
  } catch (const DeviceFault&) {
    throw;
  } catch (const std::exception& e) {
    throw TaskError(fmt::format("task {}: timing its {} reference failed: {}", task_.name, backend_.language(), e.what()));
  }
  if (mode != "remeasure") oracle_cache().store_text(disk_key, timing_report_to_json(report).dump(2));
  reference.baseline[mode] = report;
  return report;
}

Json timing_rules_json(const TimingSettings& rules) {
  return {{"mode", rules.mode},
          {"noise_target", rules.noise_target},
          {"stop_rule", rules.stop_rule},
          {"min_samples", rules.min_samples},
          {"max_samples", rules.max_samples},
          {"budget_seconds", rules.budget_seconds},
          {"warmups", rules.warmups},
          {"host_repeats", rules.host_repeats},
          {"batch_below_ms", rules.batch_below_ms},
          {"batch_runs", rules.batch_runs}};
}

double speedup_of(const TimingReport& baseline, const TimingReport& candidate) {
  const double candidate_ms = candidate.median_ms > 0.0 ? candidate.median_ms : candidate.host_ms;
  if (!(candidate_ms > 0.0) || !(baseline.median_ms > 0.0)) return 0.0;
  return baseline.median_ms / candidate_ms;
}

std::string reference_key(const Task& task, const std::string& language) {
  // The content key does not re-encode the data cases' bytes on every evaluation.
  return Sha256().field(task_content_key(task)).field(language).hex().substr(0, 24);
}

void add_flag(IntegrityReport& integrity, const std::string& flag) {
  if (std::find(integrity.flags.begin(), integrity.flags.end(), flag) == integrity.flags.end()) {
    integrity.flags.push_back(flag);
  }
}
}  // namespace kernelsmith::detail
