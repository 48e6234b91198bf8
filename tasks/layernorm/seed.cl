// Layer norm seed: one work-group of BLOCK work-items per row. Pass 1 reads the row once and sums
// d = x - x[0] and d * d (shifting by the row's first value keeps the one-pass variance accurate when
// the mean is far from zero); a tree reduction in local memory adds them up. Pass 2 reads the row again
// with gamma and beta and writes y.
// @tune BLOCK = 128 in {32, 64, 128, 256, 512}
// @require BLOCK <= MAX_THREADS_PER_BLOCK
// @launch layernorm<<<M, BLOCK>>>(x, gamma, beta, y, N)

__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void layernorm(__global const float* restrict x, __global const float* restrict gamma,
               __global const float* restrict beta, __global float* restrict y, int N) {
  __local float2 partial[BLOCK];
  const int lid = get_local_id(0);
  __global const float* row = x + (long)get_group_id(0) * N;
  __global float* out = y + (long)get_group_id(0) * N;
  const float shift = row[0];
  float2 sums = (float2)(0.0f, 0.0f);  // (sum of d, sum of d * d)
  for (int i = lid; i < N; i += BLOCK) {
    const float d = row[i] - shift;
    sums += (float2)(d, d * d);
  }
  partial[lid] = sums;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int stride = BLOCK / 2; stride > 0; stride /= 2) {
    if (lid < stride) partial[lid] += partial[lid + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float mean_d = partial[0].x / N;
  const float variance = fmax(partial[0].y / N - mean_d * mean_d, 0.0f);
  const float mean = shift + mean_d;
  const float inverse_std = rsqrt(variance + 1e-5f);
  for (int i = lid; i < N; i += BLOCK) {
    out[i] = (row[i] - mean) * inverse_std * gamma[i] + beta[i];
  }
}
