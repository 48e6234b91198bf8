// One work-group per output row: work-items stride over the row, then combine their sums in a tree in
// local memory.
__kernel void row_sum(__global const float* restrict x, __global float* restrict y, int cols) {
  __local float partial[256];  // launched with work-groups of 256
  const int lid = get_local_id(0);
  __global const float* row = x + (long)get_group_id(0) * cols;
  float sum = 0.0f;
  for (int c = lid; c < cols; c += get_local_size(0)) sum += row[c];
  partial[lid] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int stride = get_local_size(0) / 2; stride > 0; stride /= 2) {
    if (lid < stride) partial[lid] += partial[lid + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) y[get_group_id(0)] = partial[0];
}
