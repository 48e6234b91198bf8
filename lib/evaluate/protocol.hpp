// The correctness and timing protocols of one evaluation (docs/evaluation.md): reference cases computed
// once and cached, the candidate checked on every size configuration and input kind (two runs over
// poisoned outputs, inputs checked for writes, determinism), plan and baseline timed under the same
// rules with the L2 evicted. The harness (harness.hpp) sequences these stages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "evaluate/cache_flush.hpp"
#include "evaluate/device_memory.hpp"
#include "evaluate/device_peaks.hpp"
#include "evaluate/host_tensors.hpp"
#include "evaluate/oracle_cache.hpp"
#include "evaluate/plan_binding.hpp"
#include "evaluate/pytorch_oracle.hpp"
#include "evaluate/sealed_bytes.hpp"
#include "evaluate/timing.hpp"
#include "kernelsmith/backend.hpp"
#include "kernelsmith/candidate.hpp"
#include "kernelsmith/evaluation.hpp"
#include "kernelsmith/evaluator.hpp"
#include "kernelsmith/task.hpp"

namespace kernelsmith::detail {

/// Inputs of one correctness case and the reference's outputs for them. The expected outputs are sealed
/// (sealed_bytes.hpp): open them with Unsealed to compare, and only while no candidate kernel runs.
struct CaseData {
  std::vector<Bytes> inputs;          ///< per input tensor, in task order
  std::vector<SealedBytes> expected;  ///< per output tensor, in task order
  std::size_t bytes() const {
    std::size_t total = 0;
    for (const auto& b : inputs) total += b.size();
    for (const auto& b : expected) total += b.size();
    return total;
  }
};

/// Reference results are computed once per (task, sizes, input kind, seed) and kept while they fit.
/// Entries are shared: a case in use stays alive when the cache evicts it to make room for another.
class CaseCache {
 public:
  explicit CaseCache(std::size_t capacity_bytes) : capacity_(capacity_bytes) {}
  std::shared_ptr<const CaseData> find(const std::string& key) const {
    const auto found = entries_.find(key);
    return found == entries_.end() ? nullptr : found->second;
  }
  std::shared_ptr<const CaseData> insert(const std::string& key, CaseData data) {
    const std::size_t size = data.bytes();
    while (!order_.empty() && total_ + size > capacity_) {
      const auto oldest = entries_.find(order_.front());
      if (oldest != entries_.end()) {
        total_ -= oldest->second->bytes();
        entries_.erase(oldest);
      }
      order_.pop_front();
    }
    total_ += size;
    order_.push_back(key);
    return entries_[key] = std::make_shared<const CaseData>(std::move(data));
  }

 private:
  std::size_t capacity_;
  std::size_t total_ = 0;
  std::deque<std::string> order_;
  std::unordered_map<std::string, std::shared_ptr<const CaseData>> entries_;
};

/// A generator seeded from the system's entropy (several words of std::random_device): what it draws cannot
/// be foreseen from the evaluation's seed or from earlier evaluations.
std::mt19937_64 entropy_seeded_generator();

/// Host memory the case cache may hold: an eighth of the machine's, between 1 and 16 GiB.
std::size_t case_cache_bytes();

/// The seed stream of the timing cases (apart from the correctness cases' streams).
constexpr std::uint64_t kTimingSeedStream = 0x7157'0000'0000'0001ULL;
/// The seed stream of the nudges that test a case's conditioning (EvaluationRun::ill_conditioned).
constexpr std::uint64_t kNudgeSeedStream = 0x7157'0000'0000'0002ULL;

/// Input sets the timed runs cycle through (docs/evaluation.md, "State between runs"): consecutive runs
/// never see the inputs of the run before, so a result kept from an earlier run (a cache of fewer
/// entries than this, a "done" flag, a launch counter) is never the right answer.
constexpr int kTimingInputSets = 3;

/// The timing cases: kTimingInputSets random cases on the timing sizes.
using TimingCases = std::vector<std::shared_ptr<const CaseData>>;

/// A task's reference, compiled, loaded and bound to every size configuration: kept across
/// evaluations of the same task, with its baseline timings. For a task with a PyTorch oracle there is no
/// kernel: `bound` holds each configuration's buffers only, and the oracle computes the outputs.
struct ReferenceState {
  std::string key;
  std::vector<DeviceModule> modules;
  std::map<std::string, BoundPlan> bound;  ///< by size configuration name
  bool spread_checked = false;
  std::map<std::string, TimingReport> baseline;  ///< by timing mode
  bool oracle = false;
  std::string content_key;  ///< the task's content key (part of the disk cache's keys)
  OracleVersion oracle_version;
  /// The PyTorch baselines by "<baseline>|<timing mode>".
  std::map<std::string, OracleBaseline> oracle_baselines;
  /// Correctness cases whose expected outputs were computed ahead (prepare_cases), by timing mode.
  std::map<std::string, bool> cases_prepared;
};

/// What a harness keeps across evaluations: loaded references, reference outputs, device memory,
/// baselines, the device's peaks.
struct HarnessState {
  HarnessState(std::string directory, std::size_t pool_bytes) : cache_dir(std::move(directory)), pool(pool_bytes) {}
  std::string cache_dir;
  bool measure_peaks = true;
  std::optional<DevicePeaks> peaks;
  bool peaks_failed = false;
  CaseCache cases{case_cache_bytes()};
  BufferPool pool;
  std::deque<std::unique_ptr<ReferenceState>> references;
  std::unique_ptr<CacheFlusher> flusher;  // built on the first timed sample
  std::unique_ptr<PytorchOracleClient> oracle;      // started by the first task with an oracle
  std::unique_ptr<OracleDiskCache> oracle_cache;  // its expected outputs and baselines on disk
};

/// Everything one evaluation needs; the stages are its methods.
class EvaluationRun {
 public:
  EvaluationRun(Backend& backend, HarnessState& state, const Task& task, const Candidate& candidate,
                const EvaluatorOptions& options)
      : backend_(backend), state_(state), task_(task), candidate_(candidate), options_(options) {}

  ReferenceState& reference(const std::string& task_key);
  /// Refuses a task (TaskError) whose reference's outputs barely vary, or that a trivial program passes
  /// (check_trivial_programs); once per loaded reference.
  void check_reference_spread(ReferenceState& reference);
  /// With `user`, the inputs are the caller's data case and its expected outputs replace the reference's.
  std::shared_ptr<const CaseData> reference_case(ReferenceState& reference, const SizeConfig& config,
                                                 InputKind kind, std::uint64_t seed, const DataCase* user = nullptr);
  /// The case of these inputs (in task order) under `key`, from the cache or with the reference's outputs;
  /// `label` names the inputs in a reference's error.
  std::shared_ptr<const CaseData> reference_case_of(ReferenceState& reference, const SizeConfig& config,
                                                    const std::string& key, const std::string& label,
                                                    std::vector<Bytes> inputs);
  /// The inputs the timed runs cycle through, with the reference's outputs for each (drawn once per run).
  TimingCases timing_cases(ReferenceState& reference);
  /// With `reversed`, the second run of each check runs that build (block indices reversed, the schedule
  /// check) and its outputs are checked too where they differ from the first run's.
  CorrectnessReport check_candidate(ReferenceState& reference, const std::map<std::string, BoundPlan>& bound,
                                    const std::map<std::string, BoundPlan>* reversed, IntegrityReport& integrity);
  /// Times a plan, cycling through the cases' inputs; outputs and workspaces are poisoned before every
  /// run (a pattern drawn at random each time), outside the timed region. With `timed_output_problem`, the
  /// outputs and inputs of timed runs are checked too (every run's when they are small, else a random
  /// sample of runs and the last; every input set after the last run) and the first problem is described
  /// there. Without it (the reference's baseline) the buffers are scrubbed at the end: they held the
  /// expected outputs.
  TimingReport time_plan(const BoundPlan& plan, const TimingCases& cases, const std::string& mode,
                         std::string* timed_output_problem);
  /// The baseline `speedup` is against: the reference's timing, or PyTorch eager's for an oracle task.
  TimingReport baseline(ReferenceState& reference, const std::string& mode);

  /// The correctness cases of one size configuration, (input kind, trial) each: random trials and the
  /// adversarial kinds; in the user pass, (random, index into task.cases) for the caller's data cases.
  std::vector<std::pair<InputKind, int>> correctness_cases(const SizeConfig& config, bool timing_sizes,
                                                           bool user_pass) const;
  std::uint64_t correctness_seed(const SizeConfig& config, InputKind kind, int trial) const;

  // A task with a PyTorch oracle (oracle_protocol.cpp).

  /// Every PyTorch baseline of an oracle task for a timing mode, eager first (timed whether the task
  /// lists it or not: speedup is against it), or eager alone with `eager_only`; cached in memory and on
  /// disk.
  std::map<std::string, OracleBaseline> oracle_baselines(ReferenceState& reference, const std::string& mode,
                                                         bool eager_only = false);
  /// Computes the expected outputs of every correctness case an evaluation under these options checks,
  /// so that evaluations (under their deadline) find them cached. Oracle tasks only.
  void prepare_cases(ReferenceState& reference);
  /// The device PyTorch runs on for this backend: "cuda:N" on CUDA device N, else "cpu".
  std::string oracle_device() const;
  /// Seconds spent in the oracle's helper since the last call (the "oracle" stage).
  double take_oracle_seconds();
  /// Fills evaluation.baselines, speedups and baseline_errors from its timing and baseline_timing.
  void record_baselines(ReferenceState& reference, const std::string& mode, Evaluation& evaluation);

  // A host-code candidate (a KernelBench ModelNew file, oracle_protocol.cpp): built and run whole by `runner`,
  // a helper of its own (PytorchOracleClient::for_candidate). Its failures are thrown as CandidateFailure.

  /// Checks it on every correctness case the plan candidates meet (sizes, input kinds, the caller's data
  /// cases) against the oracle's expected outputs; its outputs are compared here, never in its process.
  /// `host` learns whether one of its own kernels ran in every check; the runner's flags go into `integrity`.
  CorrectnessReport check_model_new(ReferenceState& reference, PytorchOracleClient& runner, HostCodeReport& host,
                                    IntegrityReport& integrity);
  /// What its forward runs (its own kernels versus library ones), whether its outputs depend on its own kernels
  /// (the ablation run), and the flags of the runner's inspection (docs/kernelbench-modelnew.md, "What ran"), on a
  /// correctness case of the timing sizes.
  void inspect_model_new(ReferenceState& reference, PytorchOracleClient& runner, HostCodeReport& host,
                         IntegrityReport& integrity);
  /// Times its forward on the timing cases' inputs under the mode's rules, as PyTorch eager is timed, every run
  /// on inputs it has not seen; the outputs of the last timed runs, on the timing cases' exact inputs, are
  /// compared with the expected ones (a failure is thrown as `incorrect`).
  TimingReport time_model_new(ReferenceState& reference, PytorchOracleClient& runner, const std::string& mode,
                              HostCodeReport& host, IntegrityReport& integrity);

 private:
  CacheFlusher& flusher();
  /// A trivial program (a copy of an input, its negation, zeros, a constant) that passes every case of the
  /// timing sizes, or of the check sizes together, makes the task unable to tell a right kernel from one
  /// that does not compute it: TaskError naming the program, the output and the sizes.
  void check_trivial_programs(ReferenceState& reference);
  /// A poison pattern for one run, and the two distinct patterns of a correctness check, drawn from a
  /// generator seeded from the system's entropy: a kernel cannot learn which run it is in from them.
  std::uint8_t random_poison();
  PoisonPair random_poisons();
  /// The mode's sampling rules, without the cache flusher.
  TimingSettings timing_rules(const std::string& mode) const;
  TimingSettings settings(const std::string& mode);

  /// Keeps a prepared reference in the harness state (the last few tasks').
  ReferenceState& keep(std::unique_ptr<ReferenceState> reference);
  ReferenceState& oracle_reference(const std::string& key);
  PytorchOracleClient& oracle();
  OracleDiskCache& oracle_cache();
  /// The oracle's expected outputs (task order) for one case's inputs (task order); `case_key` names the
  /// case among the task's (configuration, input kind, seed, or data case).
  // The reference's (or the oracle's) outputs for these inputs; `key` names the case in caches.
  std::vector<SealedBytes> reference_outputs(ReferenceState& reference, const SizeConfig& config,
                                             const std::string& key, const std::vector<Bytes>& inputs,
                                             const std::string& inputs_label);
  // Why the case cannot judge a candidate (its reference outputs move beyond the tolerance when the inputs
  // move by about 2^-17 of their magnitude: nudge_inputs), or "" when it can.
  std::string ill_conditioned(ReferenceState& reference, const SizeConfig& config, InputKind kind,
                              std::uint64_t seed, const CaseData& data);
  std::vector<SealedBytes> oracle_outputs(ReferenceState& reference, const SizeConfig& config,
                                          const std::string& case_key, const std::vector<Bytes>& inputs);
  /// A TaskError naming the task for a failure the oracle reported.
  [[noreturn]] void oracle_failed(const OracleFailure& failure, const std::string& doing) const;
  /// The oracle's description of one configuration's input tensors, in task order.
  std::vector<OracleTensor> oracle_input_specs(const SizeConfig& config) const;
  /// The timing rules of `mode` as the oracle's helper takes them, with the cache eviction to use.
  Json oracle_timing_settings(const std::string& mode) const;

  Backend& backend_;
  HarnessState& state_;
  const Task& task_;
  const Candidate& candidate_;
  const EvaluatorOptions& options_;
  /// The timing cases, once drawn, held for the rest of this run: preparing an oracle task draws them and
  /// then times the baselines on them, and the case cache may be too small to keep them in between.
  std::optional<TimingCases> timing_cases_;
  /// Chooses poison patterns and the timed runs whose outputs are checked: not reproducible on purpose.
  std::mt19937_64 random_ = entropy_seeded_generator();
};

/// The sampling rules that decide a measurement, as one document: part of the baselines' disk-cache keys
/// (the reference's and PyTorch's), and the settings the oracle helper times PyTorch under (it does not
/// batch, so it ignores batch_below_ms and batch_runs).
Json timing_rules_json(const TimingSettings& rules);
/// The reference's time over the candidate's (0 when either is unknown).
double speedup_of(const TimingReport& baseline, const TimingReport& candidate);
/// The key of a task's loaded reference in the harness state.
std::string reference_key(const Task& task, const std::string& language);
/// Adds a correctness check to the report; a failed one fails the report with its message (a data case named
/// by its name, a generated one by its sizes, input kind and seed). Returns whether the check passed.
bool record_check(CorrectnessReport& report, CorrectnessCheck check, bool user_pass);
/// Adds an integrity flag once.
void add_flag(IntegrityReport& integrity, const std::string& flag);

/// Why a candidate failed at a stage: the Evaluation's status and message (a ModelNew that does not build is a
/// compile_error, one that writes into its input is incorrect, a timed run's wrong output is incorrect, ...).
class CandidateFailure : public Error {
 public:
  CandidateFailure(Status status, const std::string& message) : Error(message), status_(status) {}
  Status status() const { return status_; }

 private:
  Status status_;
};

}  // namespace kernelsmith::detail
