// Reference bbfloat16 matrix product: one thread per element of C, the dot product in order over
// k in float32, rounded once to bfloat16.
// @launch matmul_bf16<<<dim3(ceil_div(N, 16), ceil_div(M, 16)), dim3(16, 16)>>>(A, B, C, M, N, K)
#include <cuda_bf16.h>

extern "C" __global__ void matmul_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N, int K) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < M && col < N) {
    float sum = 0.0f;
    for (int k = 0; k < K; ++k) {
      sum += __bfloat162float(A[(long long)row * K + k]) * __bfloat162float(B[(long long)k * N + col]);
    }
    C[(long long)row * N + col] = __float2bfloat16_rn(sum);
  }
}
