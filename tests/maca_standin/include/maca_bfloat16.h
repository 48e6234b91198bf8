/* Stand-in for the MACA SDK's <maca_bfloat16.h>: CUDA's bfloat16 (__nv_bfloat16 and its intrinsics)
   under the names MACA code uses (maca_bfloat16, __maca_bfloat16 for the type). */
#pragma once
#include <cuda_bf16.h>
typedef __nv_bfloat16 maca_bfloat16;
typedef __nv_bfloat16 __maca_bfloat16;
