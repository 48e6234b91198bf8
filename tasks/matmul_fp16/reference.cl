// Reference half-precision matrix product: one work-item per element of C, the dot product in order
// over k in float32 (vload_half widens the float16 inputs).
// @launch matmul_fp16<<<dim3(ceil_div(N, 16), ceil_div(M, 16)), dim3(16, 16)>>>(A, B, C, M, N, K)

__kernel void matmul_fp16(__global const half* A, __global const half* B, __global float* C, int M, int N, int K) {
  const int col = get_global_id(0);
  const int row = get_global_id(1);
  if (row < M && col < N) {
    float sum = 0.0f;
    for (int k = 0; k < K; ++k) {
      sum += vload_half((long)row * K + k, A) * vload_half((long)k * N + col, B);
    }
    C[(long)row * N + col] = sum;
  }
}
