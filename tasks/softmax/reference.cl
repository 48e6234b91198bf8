// Reference softmax: one work-item per row finds the row's maximum, sums the exponentials
// (compensated), then writes each exponential divided by the sum.
// @launch softmax<<<ceil_div(M, 64), 64>>>(x, y, M, N)

__kernel void softmax(__global const float* x, __global float* y, int M, int N) {
  const int row = get_global_id(0);
  if (row < M) {
    __global const float* r = x + (long)row * N;
    float max_value = r[0];
    for (int k = 1; k < N; ++k) max_value = fmax(max_value, r[k]);
    // Compensated (Kahan) summation: a plain running sum of N terms near 1 (inputs near each other)
    // drifts by up to N / 2 units in the last place, beyond the tolerance for long rows.
    float sum = 0.0f;
    float compensation = 0.0f;
    for (int k = 0; k < N; ++k) {
      const float term = exp(r[k] - max_value) - compensation;
      const float next = sum + term;
      compensation = (next - sum) - term;
      sum = next;
    }
    for (int k = 0; k < N; ++k) y[(long)row * N + k] = exp(r[k] - max_value) / sum;
  }
}
