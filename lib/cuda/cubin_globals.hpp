// The module globals a cubin defines (CUDA `__device__` variables): what a kernel can keep from one
// launch to the next without the evaluator seeing it, and what the backend puts back before every run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kernelsmith::detail::cuda {

/// Names of the data symbols of a cubin (ELF64) that live in global memory (sections .nv.global and
/// .nv.global.init). Empty for a binary that is not an ELF64 file or has no symbol table.
std::vector<std::string> cubin_global_variables(const std::vector<std::uint8_t>& cubin);

}  // namespace kernelsmith::detail::cuda
