// Fused linear + bias + GELU seed: TILE x TILE work-items compute a TILE x (TILE * WPT) block of y,
// each work-item WPT columns TILE apart, staging tiles of x and weight through local memory so that each
// value loaded from global memory is reused; the epilogue adds the bias and applies GELU before the
// only store.
// @tune TILE = 16 in {4, 8, 16}
// @tune WPT = 2 in {1, 2, 4}
// @require TILE * TILE <= MAX_THREADS_PER_BLOCK
// @launch linear_gelu<<<dim3(ceil_div(N, TILE * WPT), ceil_div(M, TILE)), dim3(TILE, TILE)>>>(x, weight, bias, y, M, N, K)

__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1)))
void linear_gelu(__global const float* restrict x, __global const float* restrict weight,
                 __global const float* restrict bias, __global float* restrict y, int M, int N, int K) {
  __local float x_tile[TILE][TILE];
  __local float w_tile[TILE][TILE * WPT];  // [k][n]
  const int tx = get_local_id(0);
  const int ty = get_local_id(1);
  const int row = get_group_id(1) * TILE + ty;
  const int col0 = get_group_id(0) * TILE * WPT;
  float sums[WPT];
  for (int w = 0; w < WPT; ++w) sums[w] = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    // Out-of-range elements load as zero, so the edges need no special case in the inner loop.
    x_tile[ty][tx] = (row < M && k0 + tx < K) ? x[(long)row * K + k0 + tx] : 0.0f;
    for (int w = 0; w < WPT; ++w) {
      // Work-item (tx, ty) loads weight[n, k0 + tx] for n = col0 + w * TILE + ty: reads along k.
      const int n = col0 + w * TILE + ty;
      w_tile[tx][w * TILE + ty] = (n < N && k0 + tx < K) ? weight[(long)n * K + k0 + tx] : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TILE; ++k) {
      const float a = x_tile[ty][k];
      for (int w = 0; w < WPT; ++w) sums[w] += a * w_tile[k][w * TILE + tx];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int w = 0; w < WPT; ++w) {
    const int col = col0 + w * TILE + tx;
    if (row < M && col < N) {
      const float z = sums[w] + bias[col];
      const float c = 0.7978845608028654f;  // sqrt(2 / pi)
      y[(long)row * N + col] = 0.5f * z * (1.0f + tanh(c * (z + 0.044715f * z * z * z)));
    }
  }
}
