// Every index is checked against its extent before it is used, including the neighbours a stencil reads.
__kernel void blur(__global const float* restrict x, __global float* restrict y, int n) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const float left = i > 0 ? x[i - 1] : 0.0f;
  const float right = i + 1 < n ? x[i + 1] : 0.0f;
  y[i] = (left + x[i] + right) * (1.0f / 3.0f);
}
