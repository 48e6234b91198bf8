// Compiling Triton kernels in helper processes (include/kernelsmith/triton.hpp says which Python and
// which script). A process-wide pool keeps the helpers: each serves one request at a time and is reused
// across candidates, so triton is imported once per helper, not once per candidate. A helper that dies
// or overruns its deadline is killed and replaced.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernelsmith/backend.hpp"
#include "kernelsmith/triton.hpp"

namespace kernelsmith::detail {

/// One specialization of a `@triton.jit` function: what the helper compiles into one cubin.
struct TritonKernelSpec {
  std::string name;    ///< the binary's name, which bound launches look it up by (triton_launch.hpp)
  std::string kernel;  ///< the Python function
  std::vector<std::string> signature;  ///< the non-constexpr parameters' types: "*fp32", "i32", ...
  std::vector<std::pair<std::string, std::int64_t>> constexprs;
  int num_warps = 4;
  int num_stages = 3;
  std::vector<int> aligned;  ///< indices into `signature` of pointers the harness aligns to 16 bytes
  int line = 0;              ///< the plan line of its first launch, for messages
};

/// What a helper said of one kernel.
struct TritonKernelResult {
  bool ok = false;
  std::string stage;    ///< where a rejection happened: gate, load, signature, compile, request
  int line = 0;         ///< the candidate's line of a rejection, 0 when unknown
  std::string message;  ///< a rejection's message (starting "line N: " where the line is known)
  KernelBinary binary;
  KernelResources resources;  ///< registers and spills from ptxas
  std::string ptxas_log;
};

/// Compiles one kernel of `source` for `target` ("sm_90", "sm_90a"). A rejected source is a result with
/// ok == false; throws BackendUnavailableError when no helper can run (no Python, no triton), Error when a
/// helper dies or exceeds `timeout_seconds` (it is killed).
TritonKernelResult compile_triton_kernel(const std::string& source, const TritonKernelSpec& spec,
                                         const std::string& target, double timeout_seconds);

/// Compiles every spec into one program (one KernelBinary each). The first rejection ends it: a program
/// whose report is not ok, with the helper's message as its log.
CompiledProgram compile_triton_program(const std::string& source, const std::vector<TritonKernelSpec>& specs,
                                       const std::string& target, double timeout_seconds);

/// The triton version the helpers import ("3.6.0"), or "" when triton is not available: part of the
/// compile cache's key.
std::string triton_version_for_cache();

}  // namespace kernelsmith::detail
