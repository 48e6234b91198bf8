// Reference ReLU: one work-item per element. Plain and obviously correct; it is also the baseline.
// @launch relu<<<ceil_div(N, 256), 256>>>(x, y, N)

__kernel void relu(__global const float* x, __global float* y, int N) {
  const int i = get_global_id(0);
  if (i < N) {
    y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  }
}
