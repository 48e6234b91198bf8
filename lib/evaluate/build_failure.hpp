// A program the device's compiler rejected when it was loaded (OpenCL builds at load time). The harness
// reports it as a `compile_error` carrying the build log, not as a runtime error.
#pragma once

#include <string>

#include "kernelsmith/error.hpp"

namespace kernelsmith::detail {

class BuildFailure : public Error {
 public:
  BuildFailure(const std::string& message, std::string log) : Error(message), log_(std::move(log)) {}
  /// The compiler's log, as it printed it.
  const std::string& log() const { return log_; }

 private:
  std::string log_;
};

/// The line of a compiler log that says what went wrong: the first one that mentions an error (ptxas
/// and NVRTC print informational lines first), else the first non-empty line; empty for an empty log.
std::string headline_of_log(const std::string& log);

/// A log with the name compilers give every source ("candidate.cu", "candidate.cl") replaced by `name`:
/// for a task's reference, whose log lines should point at the reference's file.
std::string rename_source_in_log(const std::string& log, const std::string& name);

}  // namespace kernelsmith::detail
