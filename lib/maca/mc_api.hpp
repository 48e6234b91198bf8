// The MACA runtime (libmcruntime.so, which also exports the run-time compiler MCRTC), opened at run time
// by the plugin: never linked, so the plugin builds against the SDK's headers alone and loads on a machine
// whose runtime lives elsewhere. <mcr/*.h> are included for types, prototypes and enum names; no enum
// value is written down here (public sources disagree about them: docs/backends.md, "MACA").
#pragma once

#include <mcr/mc_runtime.h>
#include <mcr/mcrtc.h>

#include <string>
#include <vector>

namespace kernelsmith::detail::maca {

#define KERNELSMITH_MC_FUNCTIONS(X) \
  X(mcInit)                         \
  X(mcGetErrorName)                 \
  X(mcGetErrorString)               \
  X(mcGetDeviceCount)               \
  X(mcDeviceGetAttribute)           \
  X(mcGetDeviceProperties)          \
  X(mcSetDevice)                    \
  X(mcMalloc)                       \
  X(mcFree)                         \
  X(mcMemcpy)                       \
  X(mcMemsetAsync)                  \
  X(mcModuleLoadData)               \
  X(mcModuleUnload)                 \
  X(mcModuleGetFunction)            \
  X(mcFuncGetAttribute)             \
  X(mcModuleLaunchKernel)           \
  X(mcStreamCreate)                 \
  X(mcStreamDestroy)                \
  X(mcStreamSynchronize)            \
  X(mcEventCreate)                  \
  X(mcEventDestroy)                 \
  X(mcEventRecord)                  \
  X(mcEventSynchronize)             \
  X(mcEventElapsedTime)             \
  X(mcrtcGetErrorString)            \
  X(mcrtcVersion)                   \
  X(mcrtcCreateProgram)             \
  X(mcrtcDestroyProgram)            \
  X(mcrtcCompileProgram)            \
  X(mcrtcGetProgramLogSize)         \
  X(mcrtcGetProgramLog)             \
  X(mcrtcGetBitcodeSize)            \
  X(mcrtcGetBitcode)

// Optional: nullptr when absent. mcDriverGetVersion keys the cache of measured peaks.
#define KERNELSMITH_MC_OPTIONAL_FUNCTIONS(X) X(mcDriverGetVersion)

struct McApi {
#define KERNELSMITH_MC_DECLARE_FUNCTION(name) decltype(&::name) name = nullptr;
  KERNELSMITH_MC_FUNCTIONS(KERNELSMITH_MC_DECLARE_FUNCTION)
  KERNELSMITH_MC_OPTIONAL_FUNCTIONS(KERNELSMITH_MC_DECLARE_FUNCTION)
#undef KERNELSMITH_MC_DECLARE_FUNCTION

  std::string library;  ///< the file it was loaded from
  int compiler_major = 0;
  int compiler_minor = 0;
  /// The SDK's include folder MCRTC is given (maca_fp16.h, maca_bfloat16.h), or "" when none was found.
  std::string include_directory;

  /// "MACA runtime (/opt/maca/lib/libmcruntime.so), MCRTC 3.1"
  std::string description() const;
};

/// $KERNELSMITH_MACA_RUNTIME alone when set; else $MACA_PATH/lib/libmcruntime.so, libmcruntime.so on the
/// loader's path, /opt/maca/lib/libmcruntime.so.
std::vector<std::string> runtime_library_candidates();

/// The table for the current candidates, loaded on first use (see load_cache.hpp). Throws
/// LibraryNotFoundError, LibraryLoadError or SymbolMissingError.
const McApi& runtime();

/// "mcErrorIllegalAddress (an illegal memory access was encountered)".
std::string describe(const McApi& api, mcError_t result);

/// True for errors after which the device context is unusable: the worker must report and exit.
bool is_sticky(mcError_t result);

/// Throws DeviceFault (sticky errors) or DeviceError naming the call, the source location and the error.
[[noreturn]] void throw_mc_error(const McApi& api, mcError_t result, const char* call, const char* file, int line);

}  // namespace kernelsmith::detail::maca

#define KERNELSMITH_MC_CALL(api, call)                                                                  \
  do {                                                                                                  \
    const mcError_t kernelsmith_mc_result_ = (api).call;                                                \
    if (kernelsmith_mc_result_ != mcSuccess) {                                                          \
      ::kernelsmith::detail::maca::throw_mc_error((api), kernelsmith_mc_result_, #call, __FILE__, __LINE__); \
    }                                                                                                   \
  } while (false)

/// For cleanup: the result is ignored (a lost context rejects every call; destructors must not throw).
#define KERNELSMITH_MC_CALL_NOEXCEPT(api, call) static_cast<void>((api).call)
