// nn.LayerNorm((features, dim1, dim2)) over x (batch_size, features, dim1, dim2), eps 1e-5: the rows of the
// built-in task's layer norm are x's batch_size rows of N = features * dim1 * dim2 values, gamma and beta are
// ln_weight and ln_bias. Written by tools/generate-kernelbench-seeds.py from tasks/layernorm/seed.cl (edit
// them, not this file):
//
// Layer norm seed: one work-group of BLOCK work-items per row, three passes over the row: a rough mean
// m0; the sums of x - m0 and (x - m0)^2, which refine the mean and give the variance without the
// cancellation of a one-pass E[x^2] - E[x]^2; then the output with gamma and beta. A constant row gets
// exactly beta, as in the reference. Sums are tree reductions in local memory.
// @tune BLOCK = 128 in {32, 64, 128, 256, 512}
// @require BLOCK <= MAX_THREADS_PER_BLOCK
// @launch layernorm<<<batch_size, BLOCK>>>(x, ln_weight, ln_bias, out, features * dim1 * dim2)

// The work-group's sum of one value per work-item (BLOCK is a power of two); every work-item gets it.
float group_sum(float value, __local float* partial) {
  const int lid = get_local_id(0);
  partial[lid] = value;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int stride = BLOCK / 2; stride > 0; stride /= 2) {
    if (lid < stride) partial[lid] += partial[lid + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float total = partial[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return total;
}

__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void layernorm(__global const float* restrict x, __global const float* restrict gamma,
               __global const float* restrict beta, __global float* restrict y, int N) {
  __local float partial[BLOCK];
  const int lid = get_local_id(0);
  __global const float* row = x + (long)get_group_id(0) * N;
  __global float* out = y + (long)get_group_id(0) * N;
  float sum = 0.0f;
  for (int i = lid; i < N; i += BLOCK) sum += row[i];
  const float rough_mean = group_sum(sum, partial) / N;
  float residuals = 0.0f;
  float squares = 0.0f;
  for (int i = lid; i < N; i += BLOCK) {
    const float d = row[i] - rough_mean;
    residuals += d;
    squares += d * d;
  }
  const float correction = group_sum(residuals, partial) / N;
  const float mean = rough_mean + correction;
  const float variance = fmax(group_sum(squares, partial) / N - correction * correction, 0.0f);
  const float inverse_std = rsqrt(variance + 1e-5f);
  for (int i = lid; i < N; i += BLOCK) {
    out[i] = (row[i] - mean) * inverse_std * gamma[i] + beta[i];
  }
}
