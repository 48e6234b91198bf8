// @launch scale<<<4 * SM_COUNT, 256>>>(x, y, N)
// Enough work-groups to keep every compute unit busy, each work-item striding over the data: the global
// size no longer depends on N, and no work-item loops over a long serial range while others idle.
__kernel void scale(__global const float* restrict x, __global float* restrict y, int n) {
  for (int i = get_global_id(0); i < n; i += get_global_size(0)) y[i] = 2.0f * x[i];
}
