// The library's version, as built (the header) and as loaded (the function): they differ only when a
// program runs against another build of the shared library than it was compiled with.
#pragma once

#include <string>

#include "kernelsmith/config.hpp"
#include "kernelsmith/export.hpp"

namespace kernelsmith {

/// Version of the loaded library, e.g. "0.1.0".
KERNELSMITH_API std::string version();

}  // namespace kernelsmith
