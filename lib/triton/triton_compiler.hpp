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
/// `reverse_program_ids` compiles the build of the schedule check: program indices reversed
/// (triton_compile.reverse_program_ids).
TritonKernelResult compile_triton_kernel(const std::string& source, const TritonKernelSpec& spec,
                                         const std::string& target, double timeout_seconds,
                                         bool reverse_program_ids = false);

/// Compiles every spec into one program (one KernelBinary each). The first rejection ends it: a program
/// whose report is not ok, with the helper's message as its log.
CompiledProgram compile_triton_program(const std::string& source, const std::vector<TritonKernelSpec>& specs,
                                       const std::string& target, double timeout_seconds,
                                       bool reverse_program_ids = false);

/// The triton version the helpers import ("3.6.0"), or "" when triton is not available: part of the
/// compile cache's key.
std::string triton_version_for_cache();

}  // namespace kernelsmith::detail
