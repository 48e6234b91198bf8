// NVRTC, the CUDA run-time compiler, loaded at run time (never linked): compiling works wherever the
// toolkit's libnvrtc is, with or without a GPU driver. <nvrtc.h> is included for types only.
#pragma once

#include <nvrtc.h>

#include <memory>
#include <string>
#include <vector>

namespace kernelsmith::detail::cuda {

#define KERNELSMITH_NVRTC_FUNCTIONS(X) \
  X(nvrtcGetErrorString)               \
  X(nvrtcVersion)                      \
  X(nvrtcCreateProgram)                \
  X(nvrtcDestroyProgram)               \
  X(nvrtcCompileProgram)               \
  X(nvrtcGetProgramLogSize)            \
  X(nvrtcGetProgramLog)                \
  X(nvrtcGetCUBINSize)                 \
  X(nvrtcGetCUBIN)                     \
  X(nvrtcAddNameExpression)            \
  X(nvrtcGetLoweredName)

// Functions of newer NVRTC releases; nullptr when absent.
//   nvrtcSetFlowCallback (CUDA 12.8+): lets a compile be cancelled at its deadline.
//   nvrtcGetNumSupportedArchs / nvrtcGetSupportedArchs (CUDA 11.2+): names the valid targets in errors.
#define KERNELSMITH_NVRTC_OPTIONAL_FUNCTIONS(X) \
  X(nvrtcSetFlowCallback)                       \
  X(nvrtcGetNumSupportedArchs)                  \
  X(nvrtcGetSupportedArchs)

struct NvrtcApi {
#define KERNELSMITH_NVRTC_DECLARE_FUNCTION(name) decltype(&::name) name = nullptr;
  KERNELSMITH_NVRTC_FUNCTIONS(KERNELSMITH_NVRTC_DECLARE_FUNCTION)
  KERNELSMITH_NVRTC_OPTIONAL_FUNCTIONS(KERNELSMITH_NVRTC_DECLARE_FUNCTION)
#undef KERNELSMITH_NVRTC_DECLARE_FUNCTION

  /// The file NVRTC was loaded from.
  std::string library;
  int version_major = 0;
  int version_minor = 0;
  /// Compute capabilities it can compile for (e.g. 75, 80, ..., 120); empty when it cannot say.
  std::vector<int> supported_architectures;

  /// "NVRTC 13.0 (/usr/local/cuda-13.0/lib/libnvrtc.so.13)"
  std::string description() const;
};

/// Where NVRTC is looked for: $KERNELSMITH_NVRTC_LIBRARY alone when set; else $CUDA_HOME and
/// $CUDA_PATH (lib64, lib), then the sonames libnvrtc.so.13, .12, .11.2 and libnvrtc.so through the
/// loader's search path, then /usr/local/cuda/lib64.
std::vector<std::string> nvrtc_library_candidates();

/// Loads NVRTC afresh (no caching). Throws LibraryNotFoundError, LibraryLoadError, SymbolMissingError.
std::unique_ptr<NvrtcApi> load_nvrtc_api();

/// The process-wide table, loaded on first use (thread-safe); a failure is rethrown on every call.
const NvrtcApi& nvrtc();

/// Throws DeviceError naming the call, the source location and NVRTC's error string.
[[noreturn]] void throw_nvrtc_error(nvrtcResult result, const char* call, const char* file, int line);

}  // namespace kernelsmith::detail::cuda

#define KERNELSMITH_NVRTC_CALL(call)                                                                \
  do {                                                                                              \
    const nvrtcResult kernelsmith_nvrtc_result_ = (call);                                           \
    if (kernelsmith_nvrtc_result_ != NVRTC_SUCCESS) {                                               \
      ::kernelsmith::detail::cuda::throw_nvrtc_error(kernelsmith_nvrtc_result_, #call, __FILE__,    \
                                                     __LINE__);                                     \
    }                                                                                               \
  } while (false)
