/* Stand-in for the MACA runtime API (see mc_runtime.h): types, enums and functions kernelsmith's MACA
   plugin calls. Implemented over the CUDA driver API by tests/maca_standin/mcruntime.cpp. */
#pragma once

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Error codes. mcSuccess is 0 as in the SDK; every other value is ours (CUDA's plus 7000, shuffled). */
typedef enum mcError_t {
  mcSuccess = 0,
  mcErrorInvalidValue = 7011,
  mcErrorMemoryAllocation = 7002,
  mcErrorInitializationError = 7003,
  mcErrorInvalidConfiguration = 7009,
  mcErrorInvalidDevice = 7101,
  mcErrorNoDevice = 7100,
  mcErrorInvalidImage = 7200,
  mcErrorInvalidContext = 7201,
  mcErrorNoBinaryForGpu = 7209,
  mcErrorInvalidSource = 7300,
  mcErrorNotFound = 7500,
  mcErrorNotReady = 7600,
  mcErrorIllegalAddress = 7700,
  mcErrorLaunchOutOfResources = 7701,
  mcErrorLaunchTimeout = 7702,
  mcErrorHardwareStackError = 7714,
  mcErrorIllegalInstruction = 7715,
  mcErrorMisalignedAddress = 7716,
  mcErrorInvalidPc = 7718,
  mcErrorLaunchFailure = 7719,
  mcErrorAssert = 7710,
  mcErrorNotSupported = 7801,
  mcErrorUnknown = 7999
} mcError_t;

typedef enum mcDeviceAttribute_t {
  mcDeviceAttributeMaxThreadsPerBlock = 301,
  mcDeviceAttributeWarpSize = 317,
  mcDeviceAttributeMaxSharedMemoryPerBlock = 305,
  mcDeviceAttributeClockRate = 313,
  mcDeviceAttributeMultiProcessorCount = 339,
  mcDeviceAttributeL2CacheSize = 342,
  mcDeviceAttributeComputeCapabilityMajor = 376,
  mcDeviceAttributeComputeCapabilityMinor = 377
} mcDeviceAttribute_t;

typedef enum mcFunction_attribute {
  MC_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 50,
  MC_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 53,
  MC_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 51,
  MC_FUNC_ATTRIBUTE_NUM_REGS = 52
} mcFunction_attribute;

typedef enum mcMemcpyKind {
  mcMemcpyHostToHost = 20,
  mcMemcpyHostToDevice = 21,
  mcMemcpyDeviceToHost = 22,
  mcMemcpyDeviceToDevice = 23
} mcMemcpyKind;

/* The markers of mcModuleLaunchKernel's `extra` array (CUDA's are 0x01, 0x02 and 0x00). */
#define MC_LAUNCH_PARAM_BUFFER_POINTER ((void*)0x0b)
#define MC_LAUNCH_PARAM_BUFFER_SIZE ((void*)0x0c)
#define MC_LAUNCH_PARAM_END ((void*)0x0a)

/* The fields differ in order from cudaDeviceProp: the plugin reads them by name. */
typedef struct mcDeviceProp_t {
  int major;
  int minor;
  size_t totalGlobalMem;
  int multiProcessorCount;
  int waveSize;
  size_t sharedMemPerBlockOptin;
  int l2CacheSize;
  char name[256];
  size_t sharedMemPerBlock;
  int maxThreadsPerBlock;
  int clockRate;
} mcDeviceProp_t;

typedef struct mcModule_st* mcModule_t;
typedef struct mcFunction_st* mcFunction_t;
typedef struct mcStream_st* mcStream_t;
typedef struct mcEvent_st* mcEvent_t;

mcError_t mcInit(unsigned int flags);
mcError_t mcDriverGetVersion(int* version);
const char* mcGetErrorName(mcError_t error);
const char* mcGetErrorString(mcError_t error);

mcError_t mcGetDeviceCount(int* count);
mcError_t mcDeviceGetAttribute(int* value, mcDeviceAttribute_t attribute, int device);
mcError_t mcGetDeviceProperties(mcDeviceProp_t* properties, int device);
mcError_t mcSetDevice(int device);

mcError_t mcMalloc(void** pointer, size_t bytes);
mcError_t mcFree(void* pointer);
mcError_t mcMemcpy(void* destination, const void* source, size_t bytes, mcMemcpyKind kind);
mcError_t mcMemsetAsync(void* destination, int value, size_t bytes, mcStream_t stream);

mcError_t mcModuleLoadData(mcModule_t* module, const void* image);
mcError_t mcModuleUnload(mcModule_t module);
mcError_t mcModuleGetFunction(mcFunction_t* function, mcModule_t module, const char* name);
mcError_t mcFuncGetAttribute(int* value, mcFunction_attribute attribute, mcFunction_t function);
mcError_t mcModuleLaunchKernel(mcFunction_t function, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z,
                               unsigned int block_x, unsigned int block_y, unsigned int block_z,
                               unsigned int shared_bytes, mcStream_t stream, void** params, void** extra);

mcError_t mcStreamCreate(mcStream_t* stream);
mcError_t mcStreamDestroy(mcStream_t stream);
mcError_t mcStreamSynchronize(mcStream_t stream);

mcError_t mcEventCreate(mcEvent_t* event);
mcError_t mcEventDestroy(mcEvent_t event);
mcError_t mcEventRecord(mcEvent_t event, mcStream_t stream);
mcError_t mcEventSynchronize(mcEvent_t event);
mcError_t mcEventElapsedTime(float* milliseconds, mcEvent_t start, mcEvent_t stop);

#ifdef __cplusplus
}
#endif
