/* Stand-in for the MACA SDK's <mcr/mcrtc.h>, the run-time compiler MCRTC (see mc_runtime.h). The
   stand-in compiles with NVRTC, and its "bitcode" is a cubin. Values differ from NVRTC's. */
#pragma once

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mcrtcResult {
  MCRTC_SUCCESS = 0,
  MCRTC_ERROR_OUT_OF_MEMORY = 41,
  MCRTC_ERROR_PROGRAM_CREATION_FAILURE = 42,
  MCRTC_ERROR_INVALID_INPUT = 43,
  MCRTC_ERROR_INVALID_PROGRAM = 44,
  MCRTC_ERROR_INVALID_OPTION = 45,
  MCRTC_ERROR_COMPILATION = 46,
  MCRTC_ERROR_INTERNAL_ERROR = 47
} mcrtcResult;

typedef struct _mcrtcProgram* mcrtcProgram;

const char* mcrtcGetErrorString(mcrtcResult result);
mcrtcResult mcrtcVersion(int* major, int* minor);
mcrtcResult mcrtcCreateProgram(mcrtcProgram* program, const char* source, const char* name, int header_count,
                               const char* const* headers, const char* const* include_names);
mcrtcResult mcrtcDestroyProgram(mcrtcProgram* program);
mcrtcResult mcrtcCompileProgram(mcrtcProgram program, int option_count, const char* const* options);
mcrtcResult mcrtcGetProgramLogSize(mcrtcProgram program, size_t* size);
mcrtcResult mcrtcGetProgramLog(mcrtcProgram program, char* log);
mcrtcResult mcrtcGetBitcodeSize(mcrtcProgram program, size_t* size);
mcrtcResult mcrtcGetBitcode(mcrtcProgram program, char* bitcode);

#ifdef __cplusplus
}
#endif
