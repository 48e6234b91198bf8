// The CUDA driver API, loaded at run time: kernelsmith never links libcuda, so it builds and runs its
// CPU paths on machines with no GPU driver.
//
// <cuda.h> is included for its types and prototypes only. It #defines many functions to versioned
// names (cuMemAlloc → cuMemAlloc_v2, cuEventElapsedTime → cuEventElapsedTime_v2, ...). The table below
// therefore resolves every function through the driver's own cuGetProcAddress with the *unversioned*
// name and the header's CUDA_VERSION: the driver then hands out the entry point whose ABI matches the
// prototype this file was compiled against, which dlsym of the plain name would not guarantee.
#pragma once

#include <cuda.h>

#include <memory>
#include <string>
#include <vector>

namespace kernelsmith::detail::cuda {

// Functions the backend needs. X(name): `#name` gives the unversioned name for cuGetProcAddress (the #
// operator does not macro-expand its argument) and `decltype(&::name)` the prototype of the versioned
// function that <cuda.h> maps the name to (an ordinary use does expand it). The member itself gets the
// expanded name too, so `api.cuMemAlloc(...)` reads as the plain call and means the table's cuMemAlloc_v2.
#define KERNELSMITH_CUDA_DRIVER_FUNCTIONS(X) \
  X(cuInit)                                  \
  X(cuDriverGetVersion)                      \
  X(cuGetErrorName)                          \
  X(cuGetErrorString)                        \
  X(cuDeviceGetCount)                        \
  X(cuDeviceGet)                             \
  X(cuDeviceGetName)                         \
  X(cuDeviceGetAttribute)                    \
  X(cuDeviceTotalMem)                        \
  X(cuDevicePrimaryCtxRetain)                \
  X(cuDevicePrimaryCtxRelease)               \
  X(cuCtxSetCurrent)                         \
  X(cuCtxSynchronize)                        \
  X(cuStreamCreate)                          \
  X(cuStreamDestroy)                         \
  X(cuStreamSynchronize)                     \
  X(cuModuleLoadData)                        \
  X(cuModuleUnload)                          \
  X(cuModuleGetFunction)                     \
  X(cuModuleGetGlobal)                       \
  X(cuFuncGetAttribute)                      \
  X(cuFuncSetAttribute)                      \
  X(cuMemAlloc)                              \
  X(cuMemFree)                               \
  X(cuMemcpyHtoD)                            \
  X(cuMemcpyDtoH)                            \
  X(cuMemsetD8Async)                         \
  X(cuMemcpyDtoDAsync)                       \
  X(cuMemGetAddressRange)                    \
  X(cuPointerGetAttribute)                   \
  X(cuLaunchKernel)                          \
  X(cuEventCreate)                           \
  X(cuEventDestroy)                          \
  X(cuEventRecord)                           \
  X(cuEventSynchronize)                      \
  X(cuEventElapsedTime)

// Functions that newer drivers have and older ones lack; nullptr when absent.
//   cuFuncGetParamInfo: CUDA 12.4 drivers and later (kernel_params() is empty without it).
//   cuFuncLoad: CUDA 12.4 and later; loads a kernel now rather than at its first launch (lazy loading).
//   cuTensorMapEncodeTiled, cuLaunchKernelEx: CUDA 12.0 and later; needed only by plans that use TMA
//   tensor maps or thread-block clusters (sm_90), so an older driver still runs every other plan.
//   cuStreamBeginCapture .. cuEventRecordWithFlags: stream capture into CUDA graphs (CUDA 10.0; event
//   records as graph nodes, CU_EVENT_RECORD_EXTERNAL, 11.1): record_timed_batch, which times tiny
//   kernels; without them those are timed one sample at a time, as every other sequence is. The graph
//   is instantiated through cuGraphInstantiateWithFlags (CUDA 11.4), named as such: cuda.h #defines
//   cuGraphInstantiate to it, but the driver's own "cuGraphInstantiate" is the older five-argument
//   function, which a call with the three-argument prototype would crash.
#define KERNELSMITH_CUDA_DRIVER_OPTIONAL_FUNCTIONS(X) \
  X(cuFuncGetParamInfo)                               \
  X(cuFuncLoad)                                       \
  X(cuTensorMapEncodeTiled)                           \
  X(cuLaunchKernelEx)                                 \
  X(cuStreamBeginCapture)                             \
  X(cuStreamEndCapture)                               \
  X(cuGraphInstantiateWithFlags)                      \
  X(cuGraphLaunch)                                    \
  X(cuGraphExecDestroy)                               \
  X(cuGraphDestroy)                                   \
  X(cuEventRecordWithFlags)

struct DriverApi {
#define KERNELSMITH_CUDA_DECLARE_FUNCTION(name) decltype(&::name) name = nullptr;
  KERNELSMITH_CUDA_DRIVER_FUNCTIONS(KERNELSMITH_CUDA_DECLARE_FUNCTION)
  KERNELSMITH_CUDA_DRIVER_OPTIONAL_FUNCTIONS(KERNELSMITH_CUDA_DECLARE_FUNCTION)
#undef KERNELSMITH_CUDA_DECLARE_FUNCTION

  /// The file the driver was loaded from (resolved path where the loader can say).
  std::string library;
  /// The CUDA version the driver supports, e.g. 13000 for 13.0.
  int driver_version = 0;
};

/// Where the driver is looked for: $KERNELSMITH_CUDA_DRIVER_LIBRARY alone when set, else libcuda.so.1
/// through the loader's search path, then the usual system folders.
std::vector<std::string> driver_library_candidates();

/// Loads the driver afresh (no caching); reads the override variable now. Throws LibraryNotFoundError,
/// LibraryLoadError or SymbolMissingError (a required function the driver does not provide).
std::unique_ptr<DriverApi> load_driver_api();

/// The process-wide table, loaded on first use (thread-safe). A failure is remembered and thrown again,
/// with the same type and message, on every later call.
const DriverApi& driver();

/// "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)"; works before and without a
/// loaded driver (then only the number is known).
std::string describe_result(CUresult result);

/// True for errors after which the context is unusable (illegal address, trap, assert, ...): every
/// later call in the process fails, so the worker must report and exit.
bool is_sticky_error(CUresult result);

/// Throws for a failed driver call: DeviceFault when the error is sticky, else DeviceError. The message
/// names the call, the source location and the driver's error name and description.
[[noreturn]] void throw_driver_error(CUresult result, const char* call, const char* file, int line);

}  // namespace kernelsmith::detail::cuda

/// Checks a driver call (nvbench style): `KERNELSMITH_CU_CALL(api.cuMemAlloc(&ptr, bytes));`
#define KERNELSMITH_CU_CALL(call)                                                                   \
  do {                                                                                              \
    const CUresult kernelsmith_cu_result_ = (call);                                                 \
    if (kernelsmith_cu_result_ != CUDA_SUCCESS) {                                                   \
      ::kernelsmith::detail::cuda::throw_driver_error(kernelsmith_cu_result_, #call, __FILE__,      \
                                                      __LINE__);                                    \
    }                                                                                               \
  } while (false)

/// For destructors and cleanup after a failure: the result is deliberately ignored (a context that
/// faulted rejects every call, and a destructor must not throw).
#define KERNELSMITH_CU_CALL_NOEXCEPT(call) static_cast<void>(call)
