// The backend-agnostic evaluation harness (docs/evaluation.md): binds a candidate's launch plan to the
// task and the device, runs the correctness protocol against the task's reference, times candidate
// and reference with the same protocol, relates the result to the device's measured peaks and raises
// integrity flags. It runs inside the worker process (or in the caller's when isolation is off) and
// talks to the device only through the Backend seam.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "evaluate/device_peaks.hpp"
#include "kernelsmith/backend.hpp"
#include "kernelsmith/candidate.hpp"
#include "kernelsmith/evaluation.hpp"
#include "kernelsmith/evaluator.hpp"
#include "kernelsmith/launch_plan.hpp"
#include "kernelsmith/task.hpp"

namespace kernelsmith::detail {

/// The programs of one candidate: one per size configuration name when the plan specialises
/// (`@specialize`), else a single one under the key "".
using ProgramSet = std::map<std::string, CompiledProgram>;

struct CompileJob {
  std::string config;  ///< size configuration name, or "" for every configuration
  CompileOptions options;
};

/// What to compile for a candidate: the plan's tunables as macros (NAME=value); with @specialize one job
/// per size configuration that adds KS_<size>=value for each size.
std::vector<CompileJob> compile_jobs(const Task& task, const LaunchPlan& plan, const std::string& target,
                                     double timeout_seconds);

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
  /// for options.mode, so that a later evaluate() spends its time on the candidate alone. Throws
  /// TaskError, DeviceFault.
  void prepare(const Task& task, const EvaluatorOptions& options);

  /// The device's peaks from memory or the disk cache; measured now when missing and `measure` is set.
  /// Returns zeros when unknown.
  DevicePeaks peaks(bool measure);

  /// Whether evaluate() may measure missing peaks itself (default true). The worker turns it off and
  /// measures them on a separate request with its own deadline.
  void set_measure_peaks(bool measure);

  struct State;  ///< caches: loaded references, reference outputs, baselines, peaks (opaque)

 private:
  Backend& backend_;
  std::unique_ptr<State> state_;
};

/// Runs a source's launch plan on given host inputs, without the correctness and timing protocols: for
/// tests and tools that check a task's sources against another oracle (a float64 CPU reference). The
/// source is compiled and loaded once and bound to every size configuration of the task.
class PlanRunner {
 public:
  /// Throws PlanError (malformed plan), Error naming the problem when the plan does not fit the task or
  /// the device or the compiler rejects the source (with its log).
  PlanRunner(Backend& backend, const Task& task, const std::string& source);
  ~PlanRunner();
  PlanRunner(const PlanRunner&) = delete;
  PlanRunner& operator=(const PlanRunner&) = delete;

  /// Runs the plan once for the size configuration `config` on `inputs` (one buffer per input tensor,
  /// in task order) and returns one buffer per output tensor, in task order. Outputs and workspaces are
  /// filled with kPoisonFirst before the run, so elements the plan never writes stay visible.
  /// Throws NotFoundError for an unknown configuration, ValidationError for inputs of the wrong count
  /// or size, LaunchError and DeviceFault as the backend does.
  std::vector<std::vector<std::uint8_t>> run(const std::string& config,
                                             const std::vector<std::vector<std::uint8_t>>& inputs);

  /// Runs the plan once on the caller's device buffers: `tensor_buffers` holds a Backend buffer handle per
  /// task tensor, in task order, sized for `config` (the caller's checks). Outputs and workspaces are
  /// filled with kPoisonFirst first; workspaces are allocated here. Synchronizes before returning.
  void run_with_buffers(const std::string& config, const std::vector<std::uint64_t>& tensor_buffers);

  const CompileReport& compile_report() const;

  struct Loaded;  ///< the loaded modules and the bound plans (opaque)

 private:
  Backend& backend_;
  std::unique_ptr<Loaded> loaded_;
};

/// A plan mistake as an `invalid_launch` message, starting with its line where it has one.
std::string plan_error_message(const PlanError& error);

/// The evaluation of a candidate whose worker died or whose device context was lost.
Evaluation failed_evaluation(const Task& task, const Candidate& candidate, const std::string& backend,
                             const std::string& device, Status status, const std::string& message);

}  // namespace kernelsmith::detail
