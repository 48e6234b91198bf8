// The stand-in MACA runtime (libmcruntime.so, tests only): every mc* and mcrtc* function of the stand-in
// headers, forwarded to the CUDA driver API and NVRTC. Both are opened at run time by the same loaders the
// library uses (lib/cuda/driver_api.cpp, lib/cuda/nvrtc_api.cpp), never linked. "Bitcode" is NVRTC's
// cubin; device attributes are the real GPU's (the warp size too: 32 on NVIDIA).
//
// Two switches for tests, read on each call:
//   KERNELSMITH_MCRUNTIME_FAIL=<function>  that function fails (mcErrorInvalidValue / MCRTC_ERROR_INTERNAL_ERROR)
//                                          with a message saying so, to test how failures are reported
//   KERNELSMITH_MCRUNTIME_EXTRA_ONLY=1     mcModuleLaunchKernel refuses a params array, as some MACA builds
//                                          do: arguments must come through `extra`
#include <mcr/mc_runtime.h>
#include <mcr/mcrtc.h>

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "cuda/driver_api.hpp"
#include "cuda/nvrtc_api.hpp"
#include "cuda/nvrtc_compile.hpp"
#include "kernelsmith/error.hpp"

#define STANDIN_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using kernelsmith::detail::cuda::driver;
using kernelsmith::detail::cuda::nvrtc;

// ------------------------------------------------------------------------------------------ errors

struct ErrorRow {
  mcError_t error;
  const char* name;
  const char* text;
  CUresult cuda;  // the driver result it stands for
};

#define STANDIN_ERROR(name, text, cuda) {name, #name, text, cuda}
const ErrorRow kErrors[] = {
    STANDIN_ERROR(mcSuccess, "no error", CUDA_SUCCESS),
    STANDIN_ERROR(mcErrorInvalidValue, "invalid argument", CUDA_ERROR_INVALID_VALUE),
    STANDIN_ERROR(mcErrorMemoryAllocation, "out of memory", CUDA_ERROR_OUT_OF_MEMORY),
    STANDIN_ERROR(mcErrorInitializationError, "initialization error", CUDA_ERROR_NOT_INITIALIZED),
    STANDIN_ERROR(mcErrorInvalidConfiguration, "invalid launch configuration", CUDA_ERROR_INVALID_VALUE),
    STANDIN_ERROR(mcErrorInvalidDevice, "invalid device ordinal", CUDA_ERROR_INVALID_DEVICE),
    STANDIN_ERROR(mcErrorNoDevice, "no MACA-capable device is detected", CUDA_ERROR_NO_DEVICE),
    STANDIN_ERROR(mcErrorInvalidImage, "device kernel image is invalid", CUDA_ERROR_INVALID_IMAGE),
    STANDIN_ERROR(mcErrorInvalidContext, "invalid device context", CUDA_ERROR_INVALID_CONTEXT),
    STANDIN_ERROR(mcErrorNoBinaryForGpu, "no kernel image is available for execution on the device",
                  CUDA_ERROR_NO_BINARY_FOR_GPU),
    STANDIN_ERROR(mcErrorInvalidSource, "device kernel image is invalid", CUDA_ERROR_INVALID_SOURCE),
    STANDIN_ERROR(mcErrorNotFound, "named symbol not found", CUDA_ERROR_NOT_FOUND),
    STANDIN_ERROR(mcErrorNotReady, "device not ready", CUDA_ERROR_NOT_READY),
    STANDIN_ERROR(mcErrorIllegalAddress, "an illegal memory access was encountered", CUDA_ERROR_ILLEGAL_ADDRESS),
    STANDIN_ERROR(mcErrorLaunchOutOfResources, "too many resources requested for launch",
                  CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES),
    STANDIN_ERROR(mcErrorLaunchTimeout, "the launch timed out and was terminated", CUDA_ERROR_LAUNCH_TIMEOUT),
    STANDIN_ERROR(mcErrorHardwareStackError, "hardware stack error", CUDA_ERROR_HARDWARE_STACK_ERROR),
    STANDIN_ERROR(mcErrorIllegalInstruction, "an illegal instruction was encountered", CUDA_ERROR_ILLEGAL_INSTRUCTION),
    STANDIN_ERROR(mcErrorMisalignedAddress, "misaligned address", CUDA_ERROR_MISALIGNED_ADDRESS),
    STANDIN_ERROR(mcErrorInvalidPc, "invalid program counter", CUDA_ERROR_INVALID_PC),
    STANDIN_ERROR(mcErrorLaunchFailure, "unspecified launch failure", CUDA_ERROR_LAUNCH_FAILED),
    STANDIN_ERROR(mcErrorAssert, "device-side assert triggered", CUDA_ERROR_ASSERT),
    STANDIN_ERROR(mcErrorNotSupported, "operation not supported", CUDA_ERROR_NOT_SUPPORTED),
    STANDIN_ERROR(mcErrorUnknown, "unknown error", CUDA_ERROR_UNKNOWN),
};
#undef STANDIN_ERROR

const ErrorRow* error_row(mcError_t error) {
  for (const auto& row : kErrors) {
    if (row.error == error) return &row;
  }
  return nullptr;
}

// The detail of the last failure on this thread, added to mcGetErrorString's text for that error: which
// CUDA call failed and how, or why the driver could not be used.
thread_local mcError_t last_error = mcSuccess;
thread_local std::string last_detail;
thread_local std::string described;

mcError_t fail(mcError_t error, std::string detail) {
  last_error = error;
  last_detail = std::move(detail);
  return error;
}

mcError_t from_cuda(CUresult result, const char* call) {
  if (result == CUDA_SUCCESS) return mcSuccess;
  mcError_t error = mcErrorUnknown;
  // The first row standing for the result: the table lists the general error before the special ones.
  for (const auto& row : kErrors) {
    if (row.cuda == result) {
      error = row.error;
      break;
    }
  }
  return fail(error, fmt::format("{}: {}", call, kernelsmith::detail::cuda::describe_result(result)));
}

bool injected(const char* function) {
  const char* target = std::getenv("KERNELSMITH_MCRUNTIME_FAIL");
  return target != nullptr && std::strcmp(target, function) == 0;
}

#define STANDIN_INJECT(function)                                                                     \
  if (injected(#function)) {                                                                         \
    return fail(mcErrorInvalidValue, #function " failed on purpose (KERNELSMITH_MCRUNTIME_FAIL)");  \
  }

// Runs `body` (which returns an mcError_t) with the driver loaded; a driver that cannot be loaded means
// there is no device to use, as on a MetaX machine without a GPU.
template <typename Body>
mcError_t with_driver(Body&& body) {
  try {
    return body(driver());
  } catch (const std::exception& error) {
    return fail(mcErrorNoDevice, fmt::format("the stand-in runs on the CUDA driver: {}", error.what()));
  }
}

#define STANDIN_CU(call)                                                  \
  do {                                                                    \
    const CUresult standin_result_ = (call);                              \
    if (standin_result_ != CUDA_SUCCESS) return from_cuda(standin_result_, #call); \
  } while (false)

// ------------------------------------------------------------------------------------------ devices

CUdevice_attribute cuda_attribute(mcDeviceAttribute_t attribute, bool& known) {
  known = true;
  switch (attribute) {
    case mcDeviceAttributeMaxThreadsPerBlock: return CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK;
    case mcDeviceAttributeWarpSize: return CU_DEVICE_ATTRIBUTE_WARP_SIZE;
    case mcDeviceAttributeMaxSharedMemoryPerBlock: return CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK;
    case mcDeviceAttributeClockRate: return CU_DEVICE_ATTRIBUTE_CLOCK_RATE;
    case mcDeviceAttributeMultiProcessorCount: return CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT;
    case mcDeviceAttributeL2CacheSize: return CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE;
    case mcDeviceAttributeComputeCapabilityMajor: return CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR;
    case mcDeviceAttributeComputeCapabilityMinor: return CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR;
  }
  known = false;
  return CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK;
}

// Each device's primary context, retained once and kept for the life of the process.
std::mutex contexts_mutex;
std::map<int, CUcontext>& contexts() {
  static auto& map = *new std::map<int, CUcontext>;  // never destroyed (see driver() in driver_api.cpp)
  return map;
}

}  // namespace

// ------------------------------------------------------------------------------------------ runtime

STANDIN_EXPORT const char* mcGetErrorName(mcError_t error) {
  const ErrorRow* row = error_row(error);
  return row != nullptr ? row->name : "mcErrorUnrecognized";
}

STANDIN_EXPORT const char* mcGetErrorString(mcError_t error) {
  const ErrorRow* row = error_row(error);
  const char* text = row != nullptr ? row->text : "unrecognized error code";
  if (error != last_error || last_detail.empty()) return text;
  described = fmt::format("{} ({})", text, last_detail);
  return described.c_str();
}

STANDIN_EXPORT mcError_t mcInit(unsigned int flags) {
  STANDIN_INJECT(mcInit)
  return with_driver([&](const auto& api) {
    STANDIN_CU(api.cuInit(flags));
    return mcSuccess;
  });
}

STANDIN_EXPORT mcError_t mcDriverGetVersion(int* version) {
  STANDIN_INJECT(mcDriverGetVersion)
  return with_driver([&](const auto& api) {
    *version = api.driver_version;
    return mcSuccess;
  });
}

STANDIN_EXPORT mcError_t mcGetDeviceCount(int* count) {
  STANDIN_INJECT(mcGetDeviceCount)
  return with_driver([&](const auto& api) {
    STANDIN_CU(api.cuDeviceGetCount(count));
    return *count > 0 ? mcSuccess : fail(mcErrorNoDevice, "the CUDA driver sees no device");
  });
}

STANDIN_EXPORT mcError_t mcDeviceGetAttribute(int* value, mcDeviceAttribute_t attribute, int ordinal) {
  STANDIN_INJECT(mcDeviceGetAttribute)
  bool known = false;
  const CUdevice_attribute forwarded = cuda_attribute(attribute, known);
  if (!known) return fail(mcErrorInvalidValue, fmt::format("unknown device attribute {}", static_cast<int>(attribute)));
  return with_driver([&](const auto& api) {
    CUdevice device = 0;
    STANDIN_CU(api.cuDeviceGet(&device, ordinal));
    STANDIN_CU(api.cuDeviceGetAttribute(value, forwarded, device));
    return mcSuccess;
  });
}

STANDIN_EXPORT mcError_t mcGetDeviceProperties(mcDeviceProp_t* properties, int ordinal) {
  STANDIN_INJECT(mcGetDeviceProperties)
  return with_driver([&](const auto& api) {
    CUdevice device = 0;
    STANDIN_CU(api.cuDeviceGet(&device, ordinal));
    *properties = mcDeviceProp_t{};
    STANDIN_CU(api.cuDeviceGetName(properties->name, sizeof(properties->name) - 1, device));
    STANDIN_CU(api.cuDeviceTotalMem(&properties->totalGlobalMem, device));
    const auto read = [&](CUdevice_attribute attribute, int& field) {
      return api.cuDeviceGetAttribute(&field, attribute, device);
    };
    int shared = 0;
    int shared_optin = 0;
    STANDIN_CU(read(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, properties->major));
    STANDIN_CU(read(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, properties->minor));
    STANDIN_CU(read(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, properties->multiProcessorCount));
    STANDIN_CU(read(CU_DEVICE_ATTRIBUTE_WARP_SIZE, properties->waveSize));
    STANDIN_CU(read(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, properties->l2CacheSize));
    STANDIN_CU(read(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, properties->maxThreadsPerBlock));
    STANDIN_CU(read(CU_DEVICE_ATTRIBUTE_CLOCK_RATE, properties->clockRate));
    STANDIN_CU(read(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, shared));
    STANDIN_CU(read(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, shared_optin));
    properties->sharedMemPerBlock = static_cast<size_t>(shared);
    properties->sharedMemPerBlockOptin = static_cast<size_t>(shared_optin);
    return mcSuccess;
  });
}

STANDIN_EXPORT mcError_t mcSetDevice(int ordinal) {
  STANDIN_INJECT(mcSetDevice)
  return with_driver([&](const auto& api) {
    std::lock_guard<std::mutex> lock(contexts_mutex);
    auto found = contexts().find(ordinal);
    if (found == contexts().end()) {
      CUdevice device = 0;
      STANDIN_CU(api.cuDeviceGet(&device, ordinal));
      CUcontext context = nullptr;
      STANDIN_CU(api.cuDevicePrimaryCtxRetain(&context, device));
      found = contexts().emplace(ordinal, context).first;
    }
    STANDIN_CU(api.cuCtxSetCurrent(found->second));
    return mcSuccess;
  });
}

STANDIN_EXPORT mcError_t mcMalloc(void** pointer, size_t bytes) {
  STANDIN_INJECT(mcMalloc)
  return with_driver([&](const auto& api) {
    CUdeviceptr address = 0;
    STANDIN_CU(api.cuMemAlloc(&address, bytes));
    *pointer = reinterpret_cast<void*>(address);
    return mcSuccess;
  });
}

STANDIN_EXPORT mcError_t mcFree(void* pointer) {
  STANDIN_INJECT(mcFree)
  return with_driver([&](const auto& api) {
    STANDIN_CU(api.cuMemFree(reinterpret_cast<CUdeviceptr>(pointer)));
    return mcSuccess;
  });
}

STANDIN_EXPORT mcError_t mcMemcpy(void* destination, const void* source, size_t bytes, mcMemcpyKind kind) {
  STANDIN_INJECT(mcMemcpy)
  return with_driver([&](const auto& api) {
    switch (kind) {
      case mcMemcpyHostToDevice:
        STANDIN_CU(api.cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(destination), source, bytes));
        return mcSuccess;
      case mcMemcpyDeviceToHost:
        STANDIN_CU(api.cuMemcpyDtoH(destination, reinterpret_cast<CUdeviceptr>(source), bytes));
        return mcSuccess;
      default:
        return fail(mcErrorNotSupported, fmt::format("the stand-in copies host to device and device to host only "
                                                     "(mcMemcpyKind {})",
                                                     static_cast<int>(kind)));
    }
  });
}

STANDIN_EXPORT mcError_t mcMemsetAsync(void* destination, int value, size_t bytes, mcStream_t stream) {
  STANDIN_INJECT(mcMemsetAsync)
  return with_driver([&](const auto& api) {
    STANDIN_CU(api.cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(destination), static_cast<unsigned char>(value),
                                   bytes, reinterpret_cast<CUstream>(stream)));
    return mcSuccess;
  });
}

STANDIN_EXPORT mcError_t mcModuleLoadData(mcModule_t* module, const void* image) {
  STANDIN_INJECT(mcModuleLoadData)
  return with_driver([&](const auto& api) {
    CUmodule loaded = nullptr;
    STANDIN_CU(api.cuModuleLoadData(&loaded, image));
    *module = reinterpret_cast<mcModule_t>(loaded);
    return mcSuccess;
  });
}

STANDIN_EXPORT mcError_t mcModuleUnload(mcModule_t module) {
  STANDIN_INJECT(mcModuleUnload)
  return with_driver([&](const auto& api) {
    STANDIN_CU(api.cuModuleUnload(reinterpret_cast<CUmodule>(module)));
    return mcSuccess;
  });
}

STANDIN_EXPORT mcError_t mcModuleGetFunction(mcFunction_t* function, mcModule_t module, const char* name) {
  STANDIN_INJECT(mcModuleGetFunction)
  return with_driver([&](const auto& api) {
    CUfunction found = nullptr;
    STANDIN_CU(api.cuModuleGetFunction(&found, reinterpret_cast<CUmodule>(module), name));
    // Loaded now rather than at the first launch (CUDA's lazy loading), as MACA loads a module whole.
    if (api.cuFuncLoad != nullptr) STANDIN_CU(api.cuFuncLoad(found));
    *function = reinterpret_cast<mcFunction_t>(found);
    return mcSuccess;
  });
}

STANDIN_EXPORT mcError_t mcFuncGetAttribute(int* value, mcFunction_attribute attribute, mcFunction_t function) {
  STANDIN_INJECT(mcFuncGetAttribute)
  CUfunction_attribute forwarded = CU_FUNC_ATTRIBUTE_NUM_REGS;
  switch (attribute) {
    case MC_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: forwarded = CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK; break;
    case MC_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: forwarded = CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES; break;
    case MC_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: forwarded = CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES; break;
    case MC_FUNC_ATTRIBUTE_NUM_REGS: forwarded = CU_FUNC_ATTRIBUTE_NUM_REGS; break;
    default:
      return fail(mcErrorInvalidValue, fmt::format("unknown function attribute {}", static_cast<int>(attribute)));
  }
  return with_driver([&](const auto& api) {
    STANDIN_CU(api.cuFuncGetAttribute(value, forwarded, reinterpret_cast<CUfunction>(function)));
    return mcSuccess;
  });
}

// The variant built for the "missing symbol" test leaves the launch out.
#if !defined(KERNELSMITH_STANDIN_WITHOUT_LAUNCH)
STANDIN_EXPORT mcError_t mcModuleLaunchKernel(mcFunction_t function, unsigned int grid_x, unsigned int grid_y,
                                              unsigned int grid_z, unsigned int block_x, unsigned int block_y,
                                              unsigned int block_z, unsigned int shared_bytes, mcStream_t stream,
                                              void** params, void** extra) {
  STANDIN_INJECT(mcModuleLaunchKernel)
  const char* extra_only = std::getenv("KERNELSMITH_MCRUNTIME_EXTRA_ONLY");
  if (params != nullptr && extra_only != nullptr && std::strcmp(extra_only, "1") == 0) {
    return fail(mcErrorNotSupported, "this runtime takes kernel arguments through `extra` only "
                                     "(KERNELSMITH_MCRUNTIME_EXTRA_ONLY=1)");
  }
  // The `extra` markers are translated to CUDA's, value by value: the two headers disagree on them.
  std::vector<void*> cuda_extra;
  if (extra != nullptr) {
    for (std::size_t i = 0;; i += 2) {
      if (extra[i] == MC_LAUNCH_PARAM_END) {
        cuda_extra.push_back(CU_LAUNCH_PARAM_END);
        break;
      }
      if (extra[i] == MC_LAUNCH_PARAM_BUFFER_POINTER) {
        cuda_extra.push_back(CU_LAUNCH_PARAM_BUFFER_POINTER);
      } else if (extra[i] == MC_LAUNCH_PARAM_BUFFER_SIZE) {
        cuda_extra.push_back(CU_LAUNCH_PARAM_BUFFER_SIZE);
      } else {
        return fail(mcErrorInvalidValue, fmt::format("extra[{}] is not an MC_LAUNCH_PARAM_* marker", i));
      }
      cuda_extra.push_back(extra[i + 1]);
    }
  }
  return with_driver([&](const auto& api) {
    // MACA lets a block use all of its shared memory without opting in; CUDA needs the attribute above 48 KiB.
    if (shared_bytes > 48 * 1024) {
      STANDIN_CU(api.cuFuncSetAttribute(reinterpret_cast<CUfunction>(function),
                                        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(shared_bytes)));
    }
    STANDIN_CU(api.cuLaunchKernel(reinterpret_cast<CUfunction>(function), grid_x, grid_y, grid_z, block_x, block_y,
                                  block_z, shared_bytes, reinterpret_cast<CUstream>(stream), params,
                                  extra != nullptr ? cuda_extra.data() : nullptr));
    return mcSuccess;
  });
}
#endif

STANDIN_EXPORT mcError_t mcStreamCreate(mcStream_t* stream) {
  STANDIN_INJECT(mcStreamCreate)
  return with_driver([&](const auto& api) {
    CUstream created = nullptr;
    STANDIN_CU(api.cuStreamCreate(&created, CU_STREAM_DEFAULT));
    *stream = reinterpret_cast<mcStream_t>(created);
    return mcSuccess;
  });
}

STANDIN_EXPORT mcError_t mcStreamDestroy(mcStream_t stream) {
  return with_driver([&](const auto& api) {
    STANDIN_CU(api.cuStreamDestroy(reinterpret_cast<CUstream>(stream)));
    return mcSuccess;
  });
}

STANDIN_EXPORT mcError_t mcStreamSynchronize(mcStream_t stream) {
  STANDIN_INJECT(mcStreamSynchronize)
  return with_driver([&](const auto& api) {
    STANDIN_CU(api.cuStreamSynchronize(reinterpret_cast<CUstream>(stream)));
    return mcSuccess;
  });
}

STANDIN_EXPORT mcError_t mcEventCreate(mcEvent_t* event) {
  STANDIN_INJECT(mcEventCreate)
  return with_driver([&](const auto& api) {
    CUevent created = nullptr;
    STANDIN_CU(api.cuEventCreate(&created, CU_EVENT_DEFAULT));
    *event = reinterpret_cast<mcEvent_t>(created);
    return mcSuccess;
  });
}

STANDIN_EXPORT mcError_t mcEventDestroy(mcEvent_t event) {
  return with_driver([&](const auto& api) {
    STANDIN_CU(api.cuEventDestroy(reinterpret_cast<CUevent>(event)));
    return mcSuccess;
  });
}

STANDIN_EXPORT mcError_t mcEventRecord(mcEvent_t event, mcStream_t stream) {
  STANDIN_INJECT(mcEventRecord)
  return with_driver([&](const auto& api) {
    STANDIN_CU(api.cuEventRecord(reinterpret_cast<CUevent>(event), reinterpret_cast<CUstream>(stream)));
    return mcSuccess;
  });
}

STANDIN_EXPORT mcError_t mcEventSynchronize(mcEvent_t event) {
  STANDIN_INJECT(mcEventSynchronize)
  return with_driver([&](const auto& api) {
    STANDIN_CU(api.cuEventSynchronize(reinterpret_cast<CUevent>(event)));
    return mcSuccess;
  });
}

STANDIN_EXPORT mcError_t mcEventElapsedTime(float* milliseconds, mcEvent_t start, mcEvent_t stop) {
  STANDIN_INJECT(mcEventElapsedTime)
  return with_driver([&](const auto& api) {
    STANDIN_CU(api.cuEventElapsedTime(milliseconds, reinterpret_cast<CUevent>(start), reinterpret_cast<CUevent>(stop)));
    return mcSuccess;
  });
}

// ------------------------------------------------------------------------------------------ MCRTC

namespace {

struct StandinProgram {
  nvrtcProgram program = nullptr;
};

const char* const kMcrtcErrors[] = {"MCRTC_SUCCESS", "MCRTC_ERROR_OUT_OF_MEMORY", "MCRTC_ERROR_PROGRAM_CREATION_FAILURE",
                                    "MCRTC_ERROR_INVALID_INPUT", "MCRTC_ERROR_INVALID_PROGRAM",
                                    "MCRTC_ERROR_INVALID_OPTION", "MCRTC_ERROR_COMPILATION",
                                    "MCRTC_ERROR_INTERNAL_ERROR"};

mcrtcResult from_nvrtc(nvrtcResult result) {
  switch (result) {
    case NVRTC_SUCCESS: return MCRTC_SUCCESS;
    case NVRTC_ERROR_OUT_OF_MEMORY: return MCRTC_ERROR_OUT_OF_MEMORY;
    case NVRTC_ERROR_PROGRAM_CREATION_FAILURE: return MCRTC_ERROR_PROGRAM_CREATION_FAILURE;
    case NVRTC_ERROR_INVALID_INPUT: return MCRTC_ERROR_INVALID_INPUT;
    case NVRTC_ERROR_INVALID_PROGRAM: return MCRTC_ERROR_INVALID_PROGRAM;
    case NVRTC_ERROR_INVALID_OPTION: return MCRTC_ERROR_INVALID_OPTION;
    case NVRTC_ERROR_COMPILATION: return MCRTC_ERROR_COMPILATION;
    default: return MCRTC_ERROR_INTERNAL_ERROR;
  }
}

template <typename Body>
mcrtcResult with_nvrtc(Body&& body) {
  try {
    return from_nvrtc(body(nvrtc()));
  } catch (const std::exception&) {
    return MCRTC_ERROR_INTERNAL_ERROR;  // no NVRTC here: the stand-in cannot compile
  }
}

#define STANDIN_INJECT_MCRTC(function) \
  if (injected(#function)) return MCRTC_ERROR_INTERNAL_ERROR;

// MCRTC's options in NVRTC's words: -arch=compute_XY compiles for the GPU sm_XY (the "bitcode" is a
// cubin), -std= is --std=. The CUDA toolkit's include folder comes first, for what the stand-in's
// maca_fp16.h and maca_bfloat16.h wrap; the SDK's own folder (those headers) must come from the caller's
// --include-path, as with MCRTC. maca_standin_wave.h, found there too, gives the wave functions MACA's
// 64-bit masks. Anything else goes to NVRTC as it is.
std::vector<std::string> nvrtc_options(int count, const char* const* options) {
  std::vector<std::string> translated = {"--pre-include=maca_standin_wave.h"};
  const std::string toolkit = kernelsmith::detail::cuda::toolkit_include_directory();
  if (!toolkit.empty()) {
    translated.push_back("--include-path=" + toolkit);
    if (std::filesystem::exists(std::filesystem::path(toolkit) / "cccl")) {
      translated.push_back("--include-path=" + (std::filesystem::path(toolkit) / "cccl").string());
    }
  }
  for (int i = 0; i < count; ++i) {
    const std::string option = options[i];
    if (option.rfind("-arch=compute_", 0) == 0) {
      translated.push_back("--gpu-architecture=sm_" + option.substr(std::strlen("-arch=compute_")));
    } else if (option.rfind("-std=", 0) == 0) {
      translated.push_back("-" + option);
    } else {
      translated.push_back(option);
    }
  }
  return translated;
}

}  // namespace

STANDIN_EXPORT const char* mcrtcGetErrorString(mcrtcResult result) {
  if (result == MCRTC_SUCCESS) return kMcrtcErrors[0];
  const int index = static_cast<int>(result) - static_cast<int>(MCRTC_ERROR_OUT_OF_MEMORY) + 1;
  if (index < 1 || index > 7) return "MCRTC_ERROR_UNRECOGNIZED";
  return kMcrtcErrors[index];
}

STANDIN_EXPORT mcrtcResult mcrtcVersion(int* major, int* minor) {
  STANDIN_INJECT_MCRTC(mcrtcVersion)
  return with_nvrtc([&](const auto& api) { return api.nvrtcVersion(major, minor); });
}

STANDIN_EXPORT mcrtcResult mcrtcCreateProgram(mcrtcProgram* program, const char* source, const char* name,
                                              int header_count, const char* const* headers,
                                              const char* const* include_names) {
  STANDIN_INJECT_MCRTC(mcrtcCreateProgram)
  return with_nvrtc([&](const auto& api) {
    auto* created = new StandinProgram;
    const nvrtcResult result = api.nvrtcCreateProgram(&created->program, source, name, header_count, headers,
                                                      include_names);
    if (result != NVRTC_SUCCESS) {
      delete created;
      return result;
    }
    *program = reinterpret_cast<mcrtcProgram>(created);
    return result;
  });
}

STANDIN_EXPORT mcrtcResult mcrtcDestroyProgram(mcrtcProgram* program) {
  if (program == nullptr || *program == nullptr) return MCRTC_ERROR_INVALID_PROGRAM;
  auto* owned = reinterpret_cast<StandinProgram*>(*program);
  const mcrtcResult result = with_nvrtc([&](const auto& api) { return api.nvrtcDestroyProgram(&owned->program); });
  delete owned;
  *program = nullptr;
  return result;
}

STANDIN_EXPORT mcrtcResult mcrtcCompileProgram(mcrtcProgram program, int option_count, const char* const* options) {
  STANDIN_INJECT_MCRTC(mcrtcCompileProgram)
  return with_nvrtc([&](const auto& api) {
    const std::vector<std::string> translated = nvrtc_options(option_count, options);
    std::vector<const char*> argv;
    for (const auto& option : translated) argv.push_back(option.c_str());
    return api.nvrtcCompileProgram(reinterpret_cast<StandinProgram*>(program)->program, static_cast<int>(argv.size()),
                                   argv.data());
  });
}

STANDIN_EXPORT mcrtcResult mcrtcGetProgramLogSize(mcrtcProgram program, size_t* size) {
  return with_nvrtc([&](const auto& api) {
    return api.nvrtcGetProgramLogSize(reinterpret_cast<StandinProgram*>(program)->program, size);
  });
}

STANDIN_EXPORT mcrtcResult mcrtcGetProgramLog(mcrtcProgram program, char* log) {
  return with_nvrtc(
      [&](const auto& api) { return api.nvrtcGetProgramLog(reinterpret_cast<StandinProgram*>(program)->program, log); });
}

STANDIN_EXPORT mcrtcResult mcrtcGetBitcodeSize(mcrtcProgram program, size_t* size) {
  STANDIN_INJECT_MCRTC(mcrtcGetBitcodeSize)
  return with_nvrtc(
      [&](const auto& api) { return api.nvrtcGetCUBINSize(reinterpret_cast<StandinProgram*>(program)->program, size); });
}

STANDIN_EXPORT mcrtcResult mcrtcGetBitcode(mcrtcProgram program, char* bitcode) {
  return with_nvrtc(
      [&](const auto& api) { return api.nvrtcGetCUBIN(reinterpret_cast<StandinProgram*>(program)->program, bitcode); });
}
