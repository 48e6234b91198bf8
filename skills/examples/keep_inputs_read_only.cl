// @workspace scratch: float32[N]
// Inputs are const; intermediate values go to a declared workspace, never into an input tensor.
__kernel void square_then_add(__global const float* restrict x, __global float* restrict scratch,
                              __global float* restrict y, int n) {
  const int i = get_global_id(0);
  if (i >= n) return;
  scratch[i] = x[i] * x[i];
  y[i] = scratch[i] + x[i];
}
