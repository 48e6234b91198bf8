// Loading a plan's programs and binding it to every size configuration (shared by the harness and the
// plan runner), and the plan runner: a source's plan run on given inputs without the protocols.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "evaluate/compile_jobs.hpp"
#include "evaluate/device_memory.hpp"
#include "evaluate/host_tensors.hpp"
#include "evaluate/plan_binding.hpp"
#include "kernelsmith/backend.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/launch_plan.hpp"
#include "kernelsmith/task.hpp"

namespace kernelsmith::detail {

/// A compiler rejection found while loading a plan: becomes `compile_error`.
class CompileRejected : public Error {
 public:
  CompileRejected(const std::string& message, std::string log) : Error(message), log(std::move(log)) {}
  std::string log;
};

/// A plan's programs loaded and the plan bound to every size configuration of the task; the modules
/// must outlive the bound plans' kernel handles.
struct LoadedPlan {
  std::vector<DeviceModule> modules;
  std::map<std::string, BoundPlan> bound;  ///< by size configuration name
  CompileReport report;
};

/// Binds the plan to every size configuration first (a plan that does not fit is reported before
/// anything is compiled), then loads `given` (or compiles the source when `given` is empty: with the
/// backend, or with the Triton front end for a Triton plan) and checks each launch against its kernel.
/// `reversed_schedule` compiles the schedule check's build, whose block indices are reversed (the
/// language's prelude, or Triton's reversed program ids). Throws InvalidLaunch, CompileRejected, and what
/// the backend throws.
LoadedPlan load_plan(Backend& backend, const Task& task, const LaunchPlan& plan, const std::string& source,
                     const ProgramSet& given, double compile_timeout, bool reversed_schedule = false);

/// Whether load_plan can build the plan's reversed schedule: a Triton plan (its front end reverses the
/// program ids), or a language with a reversing prelude.
bool can_reverse_schedule(const LaunchPlan& plan, const std::string& language);

/// Runs a source's launch plan on given host inputs, without the correctness and timing protocols: for
/// tests and tools that check a task's sources against another oracle (a float64 CPU reference). The
/// source is compiled and loaded once and bound to every size configuration of the task.
class PlanRunner {
 public:
  /// `language` is the source's ("" for the backend's own). Throws PlanError (malformed plan), Error
  /// naming the problem when the plan does not fit the task or the device or the compiler rejects the
  /// source (with its log).
  PlanRunner(Backend& backend, const Task& task, const std::string& source, const std::string& language = "");
  ~PlanRunner();
  PlanRunner(const PlanRunner&) = delete;
  PlanRunner& operator=(const PlanRunner&) = delete;

  /// Runs the plan once for the size configuration `config` on `inputs` (one buffer per input tensor,
  /// in task order) and returns one buffer per output tensor, in task order. Outputs and workspaces are
  /// filled with kPoisonFirst before the run, so elements the plan never writes stay visible.
  /// Throws NotFoundError for an unknown configuration, ValidationError for inputs of the wrong count
  /// or size, LaunchError and DeviceFault as the backend does.
  std::vector<Bytes> run(const std::string& config, const std::vector<Bytes>& inputs);

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

}  // namespace kernelsmith::detail
