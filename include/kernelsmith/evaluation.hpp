// Evaluation: the evaluator's structured feedback on one candidate. Stable JSON schema
// (docs/evaluation-schema.md); renders itself as concise text for an LLM prompt.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kernelsmith/export.hpp"

namespace kernelsmith {

enum class Status {
  ok,              ///< compiled, correct, timed
  compile_error,   ///< the compiler rejected the source
  invalid_launch,  ///< the launch plan is malformed or does not fit the kernels or the device
  runtime_error,   ///< a launch or API call failed without poisoning the device
  incorrect,       ///< ran, but an output was wrong, unwritten, non-finite, or an input was modified
  timeout,         ///< did not finish by the deadline; the worker was killed
  crashed,         ///< the worker died or the device context was lost (illegal address, trap, ...)
};

KERNELSMITH_API std::string to_string(Status status);
KERNELSMITH_API Status parse_status(const std::string& name);

/// Resources one compiled kernel uses (what the toolchain reports; -1 where unknown).
struct KernelResources {
  std::string name;
  int registers = -1;
  std::int64_t spill_store_bytes = -1;
  std::int64_t spill_load_bytes = -1;
  std::int64_t stack_bytes = -1;
  std::int64_t shared_bytes = -1;  ///< static shared memory
  std::int64_t local_bytes = -1;
};

struct CompileReport {
  bool ok = false;
  std::string log;
  std::string target;  ///< e.g. "sm_90", "pthread-skylake (PoCL)"
  double seconds = 0.0;
  bool cached = false;
  std::vector<KernelResources> kernels;
};

/// Comparison of one output tensor against the reference in one check.
struct OutputCheck {
  std::string tensor;
  bool passed = false;
  double max_abs_error = 0.0;
  double rel_l2_error = 0.0;
  std::int64_t mismatches = 0;
  std::int64_t unwritten = 0;   ///< elements the candidate never wrote (poison survived)
  std::int64_t non_finite = 0;  ///< NaN/Inf where the reference is finite
  std::int64_t first_mismatch = -1;  ///< flat index, -1 when none
  double expected = 0.0;        ///< at first_mismatch
  double actual = 0.0;          ///< at first_mismatch
};

/// One correctness trial: a size configuration and an input kind.
struct CorrectnessCheck {
  std::string sizes;   ///< name of the size configuration
  std::string inputs;  ///< "random", "large", "tiny", "mixed_scale", "constant", ...
  std::uint64_t seed = 0;
  bool passed = false;
  std::vector<OutputCheck> outputs;
  std::vector<std::string> modified_inputs;  ///< inputs the candidate wrote into
  std::string message;
};

struct CorrectnessReport {
  bool passed = false;
  int trials = 0;
  std::vector<CorrectnessCheck> checks;
  std::string message;  ///< short summary of the first failure
};

/// Share of the timed launch sequence spent in one kernel.
struct KernelTime {
  std::string name;
  double median_ms = 0.0;
  double share = 0.0;
};

struct TimingReport {
  std::string mode;      ///< "screen" or "strict"
  double median_ms = 0.0;
  double mean_ms = 0.0;
  double min_ms = 0.0;
  double noise = 0.0;    ///< relative standard deviation of the samples
  int samples = 0;
  bool converged = false;  ///< noise reached the target before the time budget ran out
  double host_ms = 0.0;  ///< host-clock time per sequence around full synchronisations
  bool l2_flushed = true;
  /// How the samples were taken (docs/evaluation.md, "Tiny kernels"): "per_sample" (the host enqueues each
  /// sample after the last one finished) or "graph_replay" (a sequence under 50 us on CUDA: the samples,
  /// each with its own eviction and event pair, recorded once as a CUDA graph and replayed back to back).
  std::string sampling = "per_sample";
  /// Why a sequence under the threshold was sampled per sample all the same (a backend or driver that
  /// cannot record, a recording that failed); empty otherwise.
  std::string sampling_fallback;
  std::vector<KernelTime> kernels;
};

/// Speed of light: achieved rates against the device's measured peaks.
struct SpeedOfLight {
  double flops = 0.0;
  double bytes = 0.0;
  double achieved_gbps = 0.0;
  double achieved_gflops = 0.0;
  double peak_gbps = 0.0;
  double peak_gflops = 0.0;
  double bandwidth_fraction = 0.0;
  double compute_fraction = 0.0;
  /// The larger of the two fractions: how close the candidate is to the hardware's limit.
  double fraction = 0.0;
};

struct IntegrityReport {
  /// e.g. "speedup_above_threshold", "remeasured", "nondeterministic", "host_timer_mismatch"
  std::vector<std::string> flags;
  bool deterministic = true;
  bool remeasured = false;
  double remeasured_speedup = 0.0;
  /// The sandbox's protections that were off while this evaluation ran ("name: why", docs/security.md);
  /// empty when every protection held.
  std::vector<std::string> unconfined;
};

/// One kernel a host-code candidate's forward launched (docs/kernelbench-modelnew.md, "What ran").
struct HostKernel {
  std::string name;
  /// "candidate": one of its own kernels (a `__global__` function of its load_inline sources, one of its Triton
  /// kernels, on the CPU a function of an extension it built); "library": ATen, cuBLAS, cuDNN and the like.
  std::string origin;
  std::int64_t launches = 0;
  /// Device time of its launches in one forward (on the CPU, the host time of the call).
  double device_seconds = 0.0;
};

/// What a host-code (ModelNew) candidate ran, measured in one profiled forward, and what its own kernels mean
/// for its outputs.
struct HostCodeReport {
  std::vector<HostKernel> kernels;
  /// The candidate's own kernels' share (0..1) of the device time of every kernel listed.
  double custom_share = 0.0;
  /// Calls of the candidate's own kernels in the profiled forward.
  std::int64_t custom_calls = 0;
  /// Whether at least one of its own kernels ran in every correctness check.
  bool custom_kernel_every_check = false;
  /// The ablation run (each of its own kernels a no-op writing noise): "changed" (the outputs depend on its
  /// kernels), "unchanged" or "no_custom_calls".
  std::string ablation;
  /// EvaluatorOptions::host_code_policy it was judged under.
  std::string policy;
  /// What each integrity flag raised by the runner saw, one line each.
  std::vector<std::string> notes;
};

/// Where an evaluation ran: which machine and device, which Ray actor, and whether it had to be run again
/// because the process running it was lost (docs/distributed.md).
struct Placement {
  /// Host name of the machine whose device ran it (the caller's, for a candidate rejected before a device).
  std::string host;
  /// Index of the device within the backend (EvaluatorOptions::device, or one of EvaluatorOptions::devices);
  /// -1 when it never reached a device (rejected by the plan check or the compiler in the caller's process)
  /// or the evaluator does not say.
  int device_index = -1;
  /// The Ray actor that ran it (kernelsmith.distributed.RayEvaluator); empty elsewhere.
  std::string actor;
  /// Times it was started on an actor that was lost before answering (its process or node died) and was
  /// started again on another: 0 for an evaluation that ran once.
  int retries = 0;
};

struct KERNELSMITH_API Evaluation {
  std::string candidate_id;
  std::string task;
  std::string backend;
  std::string device;
  Status status = Status::crashed;
  /// One line: what went wrong, or "ok".
  std::string message;
  CompileReport compile;
  std::optional<CorrectnessReport> correctness;
  std::optional<TimingReport> timing;
  /// The baseline `speedup` is against: the reference kernel's timing, or PyTorch eager's for a task with
  /// a PyTorch oracle (KernelBench's convention).
  std::optional<TimingReport> baseline_timing;
  /// Baseline median time over the candidate's (> 1 is faster). 0 when not timed.
  double speedup = 0.0;
  /// Every baseline timed, by name: "reference" (the reference kernel), or for a task with a PyTorch
  /// oracle "eager", "compile" (torch.compile) and "compile_max_autotune" (torch.compile with
  /// mode="max-autotune-no-cudagraphs"), as far as the task's oracle lists them.
  std::map<std::string, TimingReport> baselines;
  /// The candidate's speedup over each baseline: its median over the candidate's; 0 for a baseline that
  /// could not be timed (baseline_errors says why).
  std::map<std::string, double> speedups;
  /// Why a baseline could not be timed (torch.compile unavailable, an Inductor error), by name.
  std::map<std::string, std::string> baseline_errors;
  std::optional<SpeedOfLight> sol;
  IntegrityReport integrity;
  /// Scalar for selection: speedup when ok, 0 when incorrect, negative for the worse failures.
  double fitness = 0.0;
  double wall_seconds = 0.0;
  /// Where the wall time went, by stage (seconds): "compile" (in the caller's process, in parallel with
  /// other candidates' device work), "reference" (preparing the task's reference: compile, load, spread
  /// check, baseline timing; charged to the task's first evaluation), "load",
  /// "correctness", "timing" (re-measurement included), "baseline" (the reference's timing, once per
  /// task and mode), "oracle" (the PyTorch oracle's helper: expected outputs and baseline timings of a
  /// task with an oracle, cached on disk, so mostly on a task's first evaluation) and "overhead" (the
  /// worker round trip). Stages that did not run are absent.
  std::map<std::string, double> stage_seconds;
  /// Where it ran (host, device, actor) and how often it was lost and run again.
  Placement placement;
  /// For a host-code candidate that passed its checks: the kernels its forward ran (its own versus library
  /// ones) and their device-time shares. Absent for kernel candidates.
  std::optional<HostCodeReport> host_code;

  bool ok() const { return status == Status::ok; }

  std::string to_json() const;
  static Evaluation from_json(const std::string& json_text, const std::string& origin = "<evaluation>");

  /// Concise text for an LLM prompt: status, the first failure with its numbers, resources, timing
  /// with noise, speedup, fraction of the hardware limit, flags.
  std::string to_prompt_text() const;
};

/// Version 5 added host_code; version 4 placement; version 3 baselines, speedups and baseline_errors; version 2
/// stage_seconds. Documents of versions 1 to 4 are still read.
inline constexpr const char* kEvaluationSchema = "kernelsmith.evaluation/5";
inline constexpr const char* kEvaluationSchemaV4 = "kernelsmith.evaluation/4";
inline constexpr const char* kEvaluationSchemaV3 = "kernelsmith.evaluation/3";
inline constexpr const char* kEvaluationSchemaV2 = "kernelsmith.evaluation/2";
inline constexpr const char* kEvaluationSchemaV1 = "kernelsmith.evaluation/1";

/// The fitness a status gets when it has no timing: incorrect 0, runtime_error -0.25,
/// invalid_launch -0.5, compile_error -0.75, timeout and crashed -1.
KERNELSMITH_API double failure_fitness(Status status);

/// The integrity flags that cast doubt on an evaluation's speed or correctness, each with what it means for a
/// reader (docs/evaluation.md, "Integrity"). An evaluation carrying one is confirmed before it leads a run
/// (docs/search.md), and the reports do not headline it (kernelsmith.store.DOUBT_FLAGS is this map).
KERNELSMITH_API const std::map<std::string, std::string>& doubt_casting_flags();

}  // namespace kernelsmith
