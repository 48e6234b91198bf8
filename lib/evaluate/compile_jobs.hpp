// What runs before a candidate reaches a compiler or a device, in the caller's process (the evaluator's
// compile stage) and in the worker (the harness) alike: precheck() (the candidate's language against the
// backend's, its launch plan parsed once), and the compile jobs a plan asks for.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kernelsmith/backend.hpp"
#include "kernelsmith/candidate.hpp"
#include "kernelsmith/evaluation.hpp"
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

/// The kernels a plan launches, each once, in order of first launch.
std::vector<std::string> unique_kernel_names(const LaunchPlan& plan);

/// "[sizes NAME] " before a message about the program compiled for one size configuration (@specialize),
/// "" for the program that serves every configuration.
std::string sizes_label(const std::string& config);

/// A plan mistake as an `invalid_launch` message, starting with its line where it has one.
std::string plan_error_message(const PlanError& error);

/// The outcome of precheck(): the parsed plan, or the failure that ends the evaluation.
struct Precheck {
  LaunchPlan plan;
  std::optional<Status> failure;  ///< compile_error (wrong language) or invalid_launch (malformed plan)
  std::string message;            ///< the failure's message; also the compile log for compile_error
  /// A host-code candidate (KernelLanguage::host_code): no plan; the worker's ModelNew runner evaluates it.
  bool host_code = false;
  bool ok() const { return !failure.has_value(); }
};

/// Checks what needs no compiler and no device: that the candidate is written in the backend's
/// language, that its launch plan parses, and that it names kernels as its language can find them (MACA:
/// plain extern "C" names only).
Precheck precheck(const Candidate& candidate, const std::string& backend_name, const std::string& backend_language);

}  // namespace kernelsmith::detail
