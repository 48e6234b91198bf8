#include "kernelsmith/version.hpp"

namespace kernelsmith {

std::string version() { return KERNELSMITH_VERSION_STRING; }

}  // namespace kernelsmith
