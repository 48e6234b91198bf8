// @launch partial_max<<<256, 256>>>(x, partial, N)
// @launch final_max<<<1, 1>>>(partial, y, 256)
// The first kernel reads all of x and takes nearly all the time: tune it (more work per item, wide loads);
// the second touches 256 values and is not worth an edit.
__kernel void partial_max(__global const float* restrict x, __global float* restrict partial, int n) {
  __local float best[256];
  const int lid = get_local_id(0);
  float mine = -INFINITY;
  for (int i = get_global_id(0); i < n; i += get_global_size(0)) mine = fmax(mine, x[i]);
  best[lid] = mine;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int stride = get_local_size(0) / 2; stride > 0; stride /= 2) {
    if (lid < stride) best[lid] = fmax(best[lid], best[lid + stride]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) partial[get_group_id(0)] = best[0];
}
__kernel void final_max(__global const float* restrict partial, __global float* restrict y, int count) {
  float best = partial[0];
  for (int i = 1; i < count; ++i) best = fmax(best, partial[i]);
  y[0] = best;
}
