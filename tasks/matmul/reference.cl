// Reference matrix product: one work-item per element of C, the dot product in order over k.
// @launch matmul<<<dim3(ceil_div(N, 16), ceil_div(M, 16)), dim3(16, 16)>>>(A, B, C, M, N, K)

__kernel void matmul(__global const float* A, __global const float* B, __global float* C, int M, int N, int K) {
  const int col = get_global_id(0);
  const int row = get_global_id(1);
  if (row < M && col < N) {
    float sum = 0.0f;
    for (int k = 0; k < K; ++k) {
      sum += A[row * K + k] * B[k * N + col];
    }
    C[row * N + col] = sum;
  }
}
