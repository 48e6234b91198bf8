/* Stand-in for the MACA SDK's <maca_fp16.h>: on the stand-in, MACA C++ is compiled by NVRTC, so the
   half type and its intrinsics are CUDA's (__half, __half2float, __float2half, ...), which MACA mirrors. */
#pragma once
#include <cuda_fp16.h>
