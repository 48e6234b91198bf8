// Reference: one work-item per element, after a loop whose result feeds the output (v - v is 0 for the
// finite values it takes, and not foldable under IEEE rules), so the compiler keeps it.
// @launch slow_scale_add<<<ceil_div(N, 64), 64>>>(a, b, y, N)

__kernel void slow_scale_add(__global const float* a, __global const float* b, __global float* y, int N) {
  const int i = get_global_id(0);
  if (i >= N) return;
  float v = a[i];
  for (int k = 0; k < 1000; ++k) v = v * 0.9999f + 0.0001f;
  y[i] = 2.0f * a[i] + b[i] + (v - v);
}
