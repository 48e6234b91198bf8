// Reference transpose: one thread per element of x reads it and writes it to its transposed place.
// @launch transpose<<<dim3(ceil_div(N, 16), ceil_div(M, 16)), dim3(16, 16)>>>(x, y, M, N)

extern "C" __global__ void transpose(const float* x, float* y, int M, int N) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < M && col < N) {
    y[(long long)col * M + row] = x[(long long)row * N + col];
  }
}
