// RMS norm seed: one work-group of BLOCK work-items per row. Pass 1 reads the row once and sums the
// squares, added up by a tree reduction in local memory; pass 2 reads the row again with w and writes y.
// @tune BLOCK = 128 in {32, 64, 128, 256, 512}
// @require BLOCK <= MAX_THREADS_PER_BLOCK
// @launch rmsnorm<<<M, BLOCK>>>(x, w, y, N)

__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void rmsnorm(__global const float* restrict x, __global const float* restrict w, __global float* restrict y, int N) {
  __local float partial[BLOCK];
  const int lid = get_local_id(0);
  __global const float* row = x + (long)get_group_id(0) * N;
  __global float* out = y + (long)get_group_id(0) * N;
  float squares = 0.0f;
  for (int i = lid; i < N; i += BLOCK) squares += row[i] * row[i];
  partial[lid] = squares;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int stride = BLOCK / 2; stride > 0; stride /= 2) {
    if (lid < stride) partial[lid] += partial[lid + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float inverse_rms = rsqrt(partial[0] / N + 1e-6f);
  for (int i = lid; i < N; i += BLOCK) out[i] = row[i] * inverse_rms * w[i];
}
