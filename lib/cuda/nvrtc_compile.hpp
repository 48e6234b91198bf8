// Compiling CUDA C++ with NVRTC to a cubin for one target, and reading the per-kernel resources that
// ptxas reports. Needs NVRTC only (no driver, no device): the device backend and compile_offline share it.
#pragma once

#include <string>
#include <vector>

#include "kernelsmith/backend.hpp"
#include "kernelsmith/evaluation.hpp"

namespace kernelsmith::detail::cuda {

/// Compiles `source` for `target` ("sm_90", "sm_90a", ...) to a cubin.
///
/// A source the compiler rejects, or a compile that runs past `options.timeout_seconds`, comes back as
/// `report.ok == false` with the log. Throws ValidationError for a malformed target or define, and
/// BackendUnavailableError / DeviceError when NVRTC itself is missing or broken.
///
/// Kernels should be `extern "C"`; kernels named in `options.kernels` that are C++ functions or
/// template instances (e.g. "gemm<128>") are resolved with NVRTC name expressions and listed in
/// `CompiledProgram::symbols`.
CompiledProgram compile_with_nvrtc(const std::string& source, const CompileOptions& options,
                                   const std::string& target);

/// Per-kernel resources from a ptxas `-v` log (registers, spill stores/loads, stack frame, static
/// shared memory). `symbol_to_name` maps mangled symbols back to the names the source uses; other
/// mangled names are demangled.
std::vector<KernelResources> parse_ptxas_resources(
    const std::string& log, const std::vector<std::pair<std::string, std::string>>& symbol_to_name = {});

/// The toolkit's include folder NVRTC is given (holding cuda_fp16.h), or "" when none was found:
/// $CUDA_HOME/include, $CUDA_PATH/include, the folder beside the loaded NVRTC, /usr/local/cuda/include.
std::string toolkit_include_directory();

}  // namespace kernelsmith::detail::cuda
