// cross_entropy(predictions, targets), the mean over batch_size rows of num_classes logits: the built-in
// task's per-row loss into a workspace, then their mean. targets are int64; a target outside [0, num_classes)
// gives NaN (PyTorch raises an error) rather than a read out of bounds. Written by
// tools/generate-kernelbench-seeds.py from tasks/cross_entropy/seed.cl (edit them, not this file):
//
// Cross-entropy seed: one work-group of BLOCK work-items per row reads the row once. Each work-item
// keeps a running (maximum, sum of exponentials) pair that rescales its sum when the maximum grows
// (online softmax); a tree reduction in local memory merges the pairs.
// @tune BLOCK = 128 in {32, 64, 128, 256, 512}
// @require BLOCK <= MAX_THREADS_PER_BLOCK
// @workspace loss: float32[batch_size]
// @launch cross_entropy<<<batch_size, BLOCK>>>(predictions, targets, loss, num_classes)
// @launch mean_loss<<<1, 256>>>(loss, out, batch_size)

__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void cross_entropy(__global const float* restrict logits, __global const long* restrict targets,
                   __global float* restrict loss, int V) {
  __local float maxima[BLOCK];
  __local float sums[BLOCK];
  const int lid = get_local_id(0);
  __global const float* row = logits + (long)get_group_id(0) * V;
  float max_value = -INFINITY;
  float sum = 0.0f;  // of exp(x - max_value); 0 for no elements yet
  for (int i = lid; i < V; i += BLOCK) {
    const float value = row[i];
    if (value > max_value) {
      sum = sum * exp(max_value - value) + 1.0f;
      max_value = value;
    } else {
      sum += exp(value - max_value);
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
  if (lid == 0) {
    const long target = targets[get_group_id(0)];
    loss[get_group_id(0)] = target >= 0 && target < V ? maxima[0] + log(sums[0]) - row[target] : NAN;
  }
}

// The mean of the rows' losses: one work-group of 256 sums them in a fixed order.
__kernel __attribute__((reqd_work_group_size(256, 1, 1)))
void mean_loss(__global const float* restrict loss, __global float* restrict out, int rows) {
  __local float partial[256];
  const int lid = get_local_id(0);
  float sum = 0.0f;
  for (int i = lid; i < rows; i += 256) sum += loss[i];
  partial[lid] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int stride = 128; stride > 0; stride /= 2) {
    if (lid < stride) partial[lid] += partial[lid + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) out[0] = partial[0] / rows;
}
