// Softmax seed: one work-group of BLOCK work-items per row. Pass 1 reads the row once, each work-item
// keeping a running (maximum, sum of exponentials) pair that rescales its sum when the maximum grows
// (online softmax); a tree reduction in local memory merges the pairs. Pass 2 reads the row again and
// writes exp(x - max) / sum. Each step a work-item loads ITEMS values, BLOCK apart, before it folds any in
// (loads in flight; on a CPU, longer runs per work-item).
// @tune BLOCK = 128 in {16, 32, 64, 128, 256, 512, 1024}
// @tune ITEMS = 1 in {1, 2, 4, 8, 16}
// @require BLOCK <= MAX_THREADS_PER_BLOCK
// @launch softmax<<<M, BLOCK>>>(x, y, N)

__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void softmax(__global const float* restrict x, __global float* restrict y, int N) {
  __local float maxima[BLOCK];
  __local float sums[BLOCK];
  const int lid = get_local_id(0);
  __global const float* row = x + (long)get_group_id(0) * N;
  __global float* out = y + (long)get_group_id(0) * N;
  float max_value = -INFINITY;
  float sum = 0.0f;  // of exp(x - max_value); 0 for no elements yet
  for (int start = lid; start < N; start += BLOCK * ITEMS) {
    float values[ITEMS];
    for (int k = 0; k < ITEMS; ++k) {
      const int i = start + k * BLOCK;
      values[k] = i < N ? row[i] : -INFINITY;
    }
    for (int k = 0; k < ITEMS && start + k * BLOCK < N; ++k) {
      const float value = values[k];
      if (value > max_value) {
        sum = sum * exp(max_value - value) + 1.0f;
        max_value = value;
      } else {
        sum += exp(value - max_value);
      }
    }
  }
  maxima[lid] = max_value;
  sums[lid] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  // BLOCK is a power of two: halve the active work-items each step, merging pairs.
  for (int stride = BLOCK / 2; stride > 0; stride /= 2) {
    if (lid < stride && sums[lid + stride] != 0.0f) {
      const float other_max = maxima[lid + stride];
      const float other_sum = sums[lid + stride];
      if (sums[lid] == 0.0f) {
        maxima[lid] = other_max;
        sums[lid] = other_sum;
      } else {
        const float merged = fmax(maxima[lid], other_max);
        sums[lid] = sums[lid] * exp(maxima[lid] - merged) + other_sum * exp(other_max - merged);
        maxima[lid] = merged;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float row_max = maxima[0];
  const float inverse = 1.0f / sums[0];
  for (int i = lid; i < N; i += BLOCK) {
    out[i] = exp(row[i] - row_max) * inverse;
  }
}
