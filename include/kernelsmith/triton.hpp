// The Triton front end (docs/triton.md): Triton candidates are compiled ahead of time to cubins by the
// `triton` Python package, in helper processes that run kernelsmith's triton_compile.py, and launched by
// the CUDA backend like any other kernel. The candidate's file is executed only in those helpers.
//
// The helpers run the Python interpreter of every helper process (python_helpers.hpp: $KERNELSMITH_PYTHON,
// else the one set_helper_python() names, else `python3` on the PATH); the script is
// $KERNELSMITH_TRITON_HELPER, else triton_compile.py beside the library (the wheel) or in the source tree
// (an uninstalled build).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernelsmith/device.hpp"
#include "kernelsmith/export.hpp"
#include "kernelsmith/python_helpers.hpp"
#include "kernelsmith/task.hpp"

namespace kernelsmith {

/// Whether Triton candidates can be compiled here, and by what.
struct TritonStatus {
  bool available = false;
  std::string version;  ///< the triton package's version, "3.6.0"
  std::string reason;   ///< why not, when not available (what is missing and how to install it)
  std::string python;   ///< the interpreter the helpers run
  std::string helper;   ///< the helper script
};

/// One specialization of a `@triton.jit` function that a candidate's plan launches: what the front end
/// compiles into one cubin (docs/triton.md, "Compile stage").
struct TritonKernelSpec {
  /// The binary's name, which bound launches look it up by: the kernel and its specialization,
  /// `add[BLOCK=1024 num_warps=4 num_stages=3 | *fp32,*fp32,*fp32,i32/16]`.
  std::string name;
  std::string kernel;                  ///< the Python function
  std::vector<std::string> signature;  ///< the non-constexpr parameters' types: "*fp32", "i32", ...
  std::vector<std::pair<std::string, std::int64_t>> constexprs;
  int num_warps = 4;
  int num_stages = 3;
  /// Indices into `signature` the compiler may take as multiples of 16 (tt.divisibility): pointers the
  /// harness aligns to 16 bytes, integers whose value is a multiple of 16.
  std::vector<int> aligned;
  int line = 0;                      ///< the plan line of its first launch
  std::vector<std::string> configs;  ///< the size configurations that launch it
};

/// The specializations a Triton candidate's plan needs for `task` on `device` (whose attributes the
/// plan's expressions may use), each once, in order of first launch, as the evaluator compiles them.
/// Throws PlanError for a malformed plan, ValidationError naming the line when it does not fit the task
/// or the device.
KERNELSMITH_API std::vector<TritonKernelSpec> triton_kernel_specs(const Task& task, const std::string& source,
                                                                  const DeviceInfo& device);

/// Asks a helper (started on first use, then kept) whether triton imports. Never throws: a helper that
/// cannot start is a reason.
KERNELSMITH_API TritonStatus triton_status();

/// The older name of set_helper_python (python_helpers.hpp): the interpreter of every Python helper, the
/// PyTorch oracle's too.
KERNELSMITH_API void set_triton_python(const std::string& python);

}  // namespace kernelsmith
