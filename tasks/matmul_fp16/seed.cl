// Half-precision matrix product seed: TILE x TILE work-items compute a TILE x (TILE * WPT) block of C,
// each work-item WPT columns TILE apart, staging tiles of A and B through local memory as float
// (converted once by vload_half) so that each value loaded from global memory is reused; float32
// accumulation and output.
// @tune TILE = 16 in {4, 8, 16}
// @tune WPT = 2 in {1, 2, 4}
// @require TILE * TILE <= MAX_THREADS_PER_BLOCK
// @launch matmul_fp16<<<dim3(ceil_div(N, TILE * WPT), ceil_div(M, TILE)), dim3(TILE, TILE)>>>(A, B, C, M, N, K)

__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1)))
void matmul_fp16(__global const half* restrict A, __global const half* restrict B, __global float* restrict C,
                 int M, int N, int K) {
  __local float a_tile[TILE][TILE];
  __local float b_tile[TILE][TILE * WPT];
  const int tx = get_local_id(0);
  const int ty = get_local_id(1);
  const int row = get_group_id(1) * TILE + ty;
  const int col0 = get_group_id(0) * TILE * WPT + tx;
  float sums[WPT];
  for (int w = 0; w < WPT; ++w) sums[w] = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    // Out-of-range elements load as zero, so the edges need no special case in the inner loop.
    a_tile[ty][tx] = (row < M && k0 + tx < K) ? vload_half((long)row * K + k0 + tx, A) : 0.0f;
    for (int w = 0; w < WPT; ++w) {
      const int col = col0 + w * TILE;
      b_tile[ty][tx + w * TILE] = (k0 + ty < K && col < N) ? vload_half((long)(k0 + ty) * N + col, B) : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TILE; ++k) {
      const float a = a_tile[ty][k];
      for (int w = 0; w < WPT; ++w) sums[w] += a * b_tile[k][tx + w * TILE];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int w = 0; w < WPT; ++w) {
    const int col = col0 + w * TILE;
    if (row < M && col < N) C[(long)row * N + col] = sums[w];
  }
}
