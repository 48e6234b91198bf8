// Reference half-precision matrix product: one thread per element of C, the dot product in order over
// k in float32.
// @launch matmul_fp16<<<dim3(ceil_div(N, 16), ceil_div(M, 16)), dim3(16, 16)>>>(A, B, C, M, N, K)
#include <cuda_fp16.h>

extern "C" __global__ void matmul_fp16(const __half* A, const __half* B, float* C, int M, int N, int K) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < M && col < N) {
    float sum = 0.0f;
    for (int k = 0; k < K; ++k) {
      sum += __half2float(A[(long long)row * K + k]) * __half2float(B[(long long)k * N + col]);
    }
    C[(long long)row * N + col] = sum;
  }
}
