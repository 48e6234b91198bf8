// A barrier between writing local memory and reading what other work-items wrote, in every round.
__kernel void block_sum(__global const float* restrict x, __global float* restrict sums, int n) {
  __local float partial[256];  // launched with work-groups of 256
  const int lid = get_local_id(0);
  const int i = get_global_id(0);
  partial[lid] = i < n ? x[i] : 0.0f;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int stride = get_local_size(0) / 2; stride > 0; stride /= 2) {
    if (lid < stride) partial[lid] += partial[lid + stride];
    barrier(CLK_LOCAL_MEM_FENCE);  // outside the if: every work-item reaches it
  }
  if (lid == 0) sums[get_group_id(0)] = partial[0];
}
