// Reference softmax: one work-item per row finds the row's maximum, sums the exponentials, then writes
// each exponential divided by the sum.
// @launch softmax<<<ceil_div(M, 64), 64>>>(x, y, M, N)

__kernel void softmax(__global const float* x, __global float* y, int M, int N) {
  const int row = get_global_id(0);
  if (row < M) {
    __global const float* r = x + (long)row * N;
    float max_value = r[0];
    for (int k = 1; k < N; ++k) max_value = fmax(max_value, r[k]);
    float sum = 0.0f;
    for (int k = 0; k < N; ++k) sum += exp(r[k] - max_value);
    for (int k = 0; k < N; ++k) y[(long)row * N + k] = exp(r[k] - max_value) / sum;
  }
}
