// Reference: one work-item per element.
// @launch scale_add<<<ceil_div(N, 64), 64>>>(a, b, y, N)

__kernel void scale_add(__global const float* a, __global const float* b, __global float* y, int N) {
  const int i = get_global_id(0);
  if (i < N) {
    y[i] = 2.0f * a[i] + b[i];
  }
}
