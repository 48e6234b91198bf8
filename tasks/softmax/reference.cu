// Reference softmax: one thread per row finds the row's maximum, sums the exponentials
// (compensated), then writes each exponential divided by the sum.
// @launch softmax<<<ceil_div(M, 64), 64>>>(x, y, M, N)

extern "C" __global__ void softmax(const float* x, float* y, int M, int N) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M) {
    const float* r = x + (long long)row * N;
    float max_value = r[0];
    for (int k = 1; k < N; ++k) max_value = fmaxf(max_value, r[k]);
    // Compensated (Kahan) summation: a plain running sum of N terms near 1 (inputs near each other)
    // drifts by up to N / 2 units in the last place, beyond the tolerance for long rows.
    float sum = 0.0f;
    float compensation = 0.0f;
    for (int k = 0; k < N; ++k) {
      const float term = expf(r[k] - max_value) - compensation;
      const float next = sum + term;
      compensation = (next - sum) - term;
      sum = next;
    }
    for (int k = 0; k < N; ++k) y[(long long)row * N + k] = expf(r[k] - max_value) / sum;
  }
}
