// Reference row sum: one thread per row adds the row's K values in order.
// @launch row_sum<<<ceil_div(M, 256), 256>>>(x, y, M, K)

extern "C" __global__ void row_sum(const float* x, float* y, int M, int K) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M) {
    float sum = 0.0f;
    for (int k = 0; k < K; ++k) {
      sum += x[row * K + k];
    }
    y[row] = sum;
  }
}
