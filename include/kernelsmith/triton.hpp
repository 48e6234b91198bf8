// The Triton front end (docs/triton.md): Triton candidates are compiled ahead of time to cubins by the
// `triton` Python package, in helper processes that run kernelsmith's triton_compile.py, and launched by
// the CUDA backend like any other kernel. The candidate's file is executed only in those helpers.
//
// The helpers run the Python interpreter named by $KERNELSMITH_PYTHON, else the one set_triton_python()
// names (the Python package names its own interpreter when it is imported), else `python3` on the PATH;
// the script is $KERNELSMITH_TRITON_HELPER, else triton_compile.py beside the library (the wheel) or in
// the source tree (an uninstalled build).
#pragma once

#include <string>

#include "kernelsmith/export.hpp"

namespace kernelsmith {

/// Whether Triton candidates can be compiled here, and by what.
struct TritonStatus {
  bool available = false;
  std::string version;  ///< the triton package's version, "3.6.0"
  std::string reason;   ///< why not, when not available (what is missing and how to install it)
  std::string python;   ///< the interpreter the helpers run
  std::string helper;   ///< the helper script
};

/// Asks a helper (started on first use, then kept) whether triton imports. Never throws: a helper that
/// cannot start is a reason.
KERNELSMITH_API TritonStatus triton_status();

/// The Python interpreter the helpers run when $KERNELSMITH_PYTHON is not set. Helpers already running
/// keep theirs.
KERNELSMITH_API void set_triton_python(const std::string& python);

}  // namespace kernelsmith
