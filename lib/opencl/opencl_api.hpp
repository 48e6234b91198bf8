// The OpenCL ICD loader (libOpenCL.so.1), opened at run time: a table of function pointers filled on
// first use. kernelsmith never links OpenCL, so it builds and runs where no OpenCL runtime exists and
// says why the backend is unavailable.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <string>

namespace kernelsmith::detail::opencl {

// Every OpenCL function the backend calls. X(name) expands once per function.
#define KERNELSMITH_OPENCL_FUNCTIONS(X) \
  X(clGetPlatformIDs)                   \
  X(clGetPlatformInfo)                  \
  X(clGetDeviceIDs)                     \
  X(clGetDeviceInfo)                    \
  X(clCreateContext)                    \
  X(clReleaseContext)                   \
  X(clCreateCommandQueue)               \
  X(clReleaseCommandQueue)              \
  X(clCreateProgramWithSource)          \
  X(clBuildProgram)                     \
  X(clGetProgramBuildInfo)              \
  X(clGetProgramInfo)                   \
  X(clReleaseProgram)                   \
  X(clCreateKernel)                     \
  X(clReleaseKernel)                    \
  X(clGetKernelInfo)                    \
  X(clGetKernelArgInfo)                 \
  X(clGetKernelWorkGroupInfo)           \
  X(clSetKernelArg)                     \
  X(clCreateBuffer)                     \
  X(clReleaseMemObject)                 \
  X(clEnqueueWriteBuffer)               \
  X(clEnqueueReadBuffer)                \
  X(clEnqueueFillBuffer)                \
  X(clEnqueueNDRangeKernel)             \
  X(clFlush)                            \
  X(clFinish)                           \
  X(clWaitForEvents)                    \
  X(clGetEventInfo)                     \
  X(clGetEventProfilingInfo)            \
  X(clReleaseEvent)

struct Api {
#define KERNELSMITH_OPENCL_POINTER(name) decltype(&::name) name = nullptr;
  KERNELSMITH_OPENCL_FUNCTIONS(KERNELSMITH_OPENCL_POINTER)
#undef KERNELSMITH_OPENCL_POINTER
  /// The library file that was opened, for BackendInfo::details.
  std::string library;
};

/// The table, loaded on first call (thread-safe). Throws LibraryNotFoundError, LibraryLoadError or
/// SymbolMissingError (the same one on every call) when the ICD loader cannot be used. The library is
/// searched as $KERNELSMITH_OPENCL_LIBRARY (a path), then libOpenCL.so.1, then libOpenCL.so.
const Api& api();

/// "CL_INVALID_VALUE (-30)" for an error code.
std::string error_name(cl_int code);

}  // namespace kernelsmith::detail::opencl
