// The Python helper processes the library starts: the Triton front end's compile helpers
// (triton_compile.py, docs/triton.md) and the PyTorch oracle of tasks imported from KernelBench
// (pytorch_oracle.py, docs/kernelbench.md). Both run one interpreter: $KERNELSMITH_PYTHON, else the one
// set_helper_python() names (the Python package names its own interpreter when it is imported), else
// `python3` on the PATH. The evaluator's worker processes get the setting from the process that starts
// them.
#pragma once

#include <string>

#include "kernelsmith/export.hpp"

namespace kernelsmith {

/// The Python interpreter the helpers run when $KERNELSMITH_PYTHON is not set. Helpers already running
/// keep theirs; idle ones are replaced at their next use.
KERNELSMITH_API void set_helper_python(const std::string& python);

/// The interpreter the helpers run now ("/usr/bin/env python3" when none is set).
KERNELSMITH_API std::string helper_python();

}  // namespace kernelsmith
