// Reference softmax: one thread per row finds the row's maximum, sums the exponentials, then writes
// each exponential divided by the sum.
// @launch softmax<<<ceil_div(M, 64), 64>>>(x, y, M, N)

extern "C" __global__ void softmax(const float* x, float* y, int M, int N) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M) {
    const float* r = x + (long long)row * N;
    float max_value = r[0];
    for (int k = 1; k < N; ++k) max_value = fmaxf(max_value, r[k]);
    float sum = 0.0f;
    for (int k = 0; k < N; ++k) sum += expf(r[k] - max_value);
    for (int k = 0; k < N; ++k) y[(long long)row * N + k] = expf(r[k] - max_value) / sum;
  }
}
