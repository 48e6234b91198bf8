// Reference matrix product: one thread per element of C, the dot product in order over k.
// @launch matmul<<<dim3(ceil_div(N, 16), ceil_div(M, 16)), dim3(16, 16)>>>(A, B, C, M, N, K)

extern "C" __global__ void matmul(const float* A, const float* B, float* C, int M, int N, int K) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < M && col < N) {
    float sum = 0.0f;
    for (int k = 0; k < K; ++k) {
      sum += A[row * K + k] * B[k * N + col];
    }
    C[row * N + col] = sum;
  }
}
