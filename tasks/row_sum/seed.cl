// Row sum seed: one work-group of BLOCK work-items per row. The work-items read the row with coalesced
// strided loads, then combine their partial sums with a tree reduction in local memory.
// @tune BLOCK = 128 in {32, 64, 128, 256}
// @require BLOCK <= MAX_THREADS_PER_BLOCK
// @launch row_sum<<<M, BLOCK>>>(x, y, K)

__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void row_sum(__global const float* restrict x, __global float* restrict y, int K) {
  __local float partial[BLOCK];
  const int lid = get_local_id(0);
  __global const float* row = x + (size_t)get_group_id(0) * K;
  float sum = 0.0f;
  for (int k = lid; k < K; k += BLOCK) {
    sum += row[k];
  }
  partial[lid] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  // BLOCK is a power of two: halve the active work-items each step.
  for (int stride = BLOCK / 2; stride > 0; stride /= 2) {
    if (lid < stride) {
      partial[lid] += partial[lid + stride];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) {
    y[get_group_id(0)] = partial[0];
  }
}
