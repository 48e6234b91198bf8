// Evaluator: candidate → Evaluation. The interface is small so that users can write their own (also in
// Python); the built-in one runs the shared harness in an isolated worker process per device.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernelsmith/candidate.hpp"
#include "kernelsmith/evaluation.hpp"
#include "kernelsmith/export.hpp"
#include "kernelsmith/task.hpp"

namespace kernelsmith {

class KERNELSMITH_API Evaluator {
 public:
  virtual ~Evaluator() = default;

  /// Never throws for a bad candidate: its problems are the Evaluation's status.
  virtual Evaluation evaluate(const Task& task, const Candidate& candidate) = 0;

  /// Evaluates several candidates; the default calls evaluate() in order. The built-in evaluator
  /// compiles them in parallel while the device times them one at a time.
  virtual std::vector<Evaluation> evaluate_batch(const Task& task,
                                                 const std::vector<Candidate>& candidates);

  /// Evaluates candidates in strict mode (EvaluatorOptions::mode), to confirm those that would lead an
  /// evolution (docs/search.md, "Confirmation"). The default calls evaluate_batch(): an evaluator with one
  /// mode confirms by evaluating again. The built-in evaluator in screen mode evaluates them with a strict
  /// twin of itself (its own worker processes, started on the first confirmation).
  virtual std::vector<Evaluation> confirm_batch(const Task& task, const std::vector<Candidate>& candidates);

  /// Backend and device this evaluator measures on, for the record ("opencl", "NVIDIA H100 ..."). An
  /// evaluator over several devices of one kind names that kind.
  virtual std::string backend_name() const { return "custom"; }
  virtual std::string device_name() const { return ""; }

  /// How many candidates it evaluates at once: its devices (EvaluatorOptions::devices) or Ray actors. An
  /// evolution whose mutations_in_flight is 0 ("auto") keeps twice this many in flight, so that every
  /// device has the next candidate waiting.
  virtual int concurrency() const { return 1; }
};

struct EvaluatorOptions {
  std::string backend = "auto";  ///< "cuda", "opencl" or "auto" (best available)
  int device = 0;
  /// A device set (docs/distributed.md): one worker process per entry; the candidates of a batch go to
  /// whichever worker is idle, each device times one candidate at a time, and speedups are against the
  /// baseline timed on the same device. Empty: the one device `device`. "all": every device of the
  /// backend. "0,2,3": these devices. An index listed twice gets two workers, which then time against
  /// each other on that device: useful to test the scheduling on one CPU device, not for timing.
  std::string devices;
  std::string mode = "screen";   ///< "screen" (cheap timing) or "strict" (final numbers)
  /// Correctness: random trials on the timing sizes in strict mode; every check size gets one.
  int correctness_trials = 3;
  /// Random trials on the timing sizes in screen mode. The timed runs' outputs are checked as well, on
  /// inputs of their own, so a screened candidate is still checked on two random input sets there.
  int screen_correctness_trials = 1;
  /// Adversarial inputs (large, tiny, mixed scale, constant) on every check size, and on the timing
  /// sizes in strict mode; in screen mode too with screen_adversarial_timing_sizes (the costly part of
  /// screening large tasks: each is a full-size reference run, two candidate runs and a comparison).
  bool adversarial_inputs = true;
  bool screen_adversarial_timing_sizes = false;
  /// Races between blocks: the second run of each correctness check runs a build of the candidate whose
  /// block (work-group) indices are reversed, so the device meets the blocks in the opposite order and a
  /// block that reads what another has not written yet shows (docs/evaluation.md, "Races"). It costs a
  /// second compile per candidate, so screen mode skips it unless screen_schedule_check is set.
  bool schedule_check = true;
  bool screen_schedule_check = false;
  std::uint64_t seed = 0;
  /// Timing: stop when the noise is at most this, after the mode's minimum samples and within its budget.
  /// Strict mode judges the samples' relative standard deviation; screen mode the relative standard error
  /// of their mean (docs/evaluation.md, "The protocol").
  double noise_target = 0.005;
  int min_samples = 10;
  /// Strict mode's minimum: more samples make the median stable from one evaluation to the next.
  int strict_min_samples = 100;
  int max_samples = 1000;
  /// Strict mode's maximum: its budget usually ends sampling first. A median over the whole budget
  /// (thousands of samples for a short kernel) holds from one evaluation to the next far better than
  /// one over a thousand: short memory-bound kernels have two or more modes whose mix drifts.
  int strict_max_samples = 100000;
  double screen_budget_seconds = 0.25;
  double strict_budget_seconds = 3.0;
  bool flush_l2 = true;
  /// Speedups above this are flagged and both sides re-measured over strict_min_samples samples.
  double suspicious_speedup = 10.0;
  /// Per-evaluation deadline for the worker (load, checks and timing together).
  double deadline_seconds = 60.0;
  double compile_timeout_seconds = 60.0;
  /// Added to deadline_seconds for a host-code candidate (a ModelNew file, docs/kernelbench-modelnew.md),
  /// whose torch.utils.cpp_extension builds run inside its evaluation: ~47 s for a one-line CUDA kernel.
  double host_code_build_seconds = 300.0;
  /// What counts as a solution among host-code candidates (docs/kernelbench-modelnew.md, "What ran"):
  /// "custom_kernel" (at least one of the candidate's own kernels runs on every check and the outputs depend on
  /// it, else it is flagged no_custom_kernel or custom_kernel_unused, which cast doubt) or "torch_only_allowed"
  /// (a PyTorch-only program is labelled torch_only, which casts none).
  std::string host_code_policy = "custom_kernel";
  /// Longest one request to the PyTorch oracle's helper may take (a task with an oracle: the expected
  /// outputs of one case, or the timing of one baseline, whose torch.compile with max-autotune compiles
  /// for minutes on a GPU). Past it the helper is killed: the task fails, or that baseline is not timed.
  double oracle_timeout_seconds = 1800.0;
  int compile_threads = 0;  ///< 0: hardware threads
  /// Run the harness in a worker process (crash and hang isolation). false runs in-process (debugging).
  bool isolate = true;
  /// Refuse to evaluate (the constructor throws ValidationError) unless every required protection of the
  /// sandbox holds on this machine (sandbox_status(), docs/security.md) and isolate is on. Off by default:
  /// what is off is then recorded in each Evaluation's integrity.unconfined.
  bool require_sandbox = false;
  /// Compile cache on disk; empty for $KERNELSMITH_CACHE_DIR or ~/.cache/kernelsmith.
  std::string cache_dir;
  bool use_disk_cache = true;
  /// The baselines' timings (the reference kernel's, PyTorch eager's and torch.compile's) are kept on disk for
  /// the evaluators that name the same session: a speedup is then measured against a baseline timed in the
  /// same run, on the machine as it is now, not in an earlier run. Empty (the default): a session of this
  /// evaluator's own (its workers share it). Naming one reuses its baselines across runs (a benchmark's warm
  /// pass, a sweep spread over several processes).
  std::string baseline_session;
};

/// The built-in evaluator over the shared harness. Throws BackendUnavailableError with the reason when
/// the backend cannot run here.
KERNELSMITH_API std::unique_ptr<Evaluator> create_evaluator(const EvaluatorOptions& options = {});

}  // namespace kernelsmith
