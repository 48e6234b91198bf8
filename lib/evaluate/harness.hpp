// The backend-agnostic evaluation harness (docs/evaluation.md): sequences one evaluation's stages —
// precheck, the task's reference (protocol.hpp), loading and binding the candidate's plan
// (plan_runner.hpp), the correctness and timing protocols (protocol.hpp) — relates the result to the
// device's measured peaks and raises integrity flags. It runs inside the worker process (or in the
// caller's when isolation is off) and talks to the device only through the Backend seam.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "evaluate/compile_jobs.hpp"
#include "evaluate/device_peaks.hpp"
#include "kernelsmith/backend.hpp"
#include "kernelsmith/candidate.hpp"
#include "kernelsmith/evaluation.hpp"
#include "kernelsmith/evaluator.hpp"
#include "kernelsmith/launch_plan.hpp"
#include "kernelsmith/task.hpp"

namespace kernelsmith::detail {

struct HarnessState;

class Harness {
 public:
  /// `cache_dir` holds the measured device peaks.
  Harness(Backend& backend, std::string cache_dir);
  ~Harness();
  Harness(const Harness&) = delete;
  Harness& operator=(const Harness&) = delete;

  /// Evaluates a candidate. `programs` are compiled already (e.g. by NVRTC in the caller's process);
  /// when empty the harness compiles with the backend itself (OpenCL builds at load anyway).
  ///
  /// Never throws for a bad candidate: its problems are the Evaluation's status. Throws TaskError for a
  /// broken task, and DeviceFault when the device context was lost (the backend is then unusable: the
  /// worker reports the evaluation as crashed and exits).
  Evaluation evaluate(const Task& task, const Candidate& candidate, const ProgramSet& programs,
                      const EvaluatorOptions& options);

  /// Compiles and loads the task's reference, checks that its output varies, and times the baseline
  /// for options.mode, so that a later evaluate() spends its time on the candidate alone. A task with a
  /// PyTorch oracle has every correctness case's expected outputs computed and all its baselines timed.
  /// Returns the seconds spent in the oracle's helper. Throws TaskError, DeviceFault.
  double prepare(const Task& task, const EvaluatorOptions& options);

  /// The device's peaks from memory or the disk cache; measured now when missing and `measure` is set.
  /// Returns zeros when unknown.
  DevicePeaks peaks(bool measure);

  /// Whether evaluate() may measure missing peaks itself (default true). The worker turns it off and
  /// measures them on a separate request with its own deadline.
  void set_measure_peaks(bool measure);

 private:
  Backend& backend_;
  std::unique_ptr<HarnessState> state_;  ///< caches: loaded references, reference outputs, baselines, peaks
};

/// The evaluation of a candidate whose worker died or whose device context was lost.
Evaluation failed_evaluation(const Task& task, const Candidate& candidate, const std::string& backend,
                             const std::string& device, Status status, const std::string& message);

}  // namespace kernelsmith::detail
