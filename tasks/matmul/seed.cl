// Matrix product seed: TILE x TILE work-items compute a TILE x TILE block of C, staging TILE x TILE
// tiles of A and B through local memory so that each value loaded from global memory is used TILE times.
// @tune TILE = 16 in {4, 8, 16}
// @require TILE * TILE <= MAX_THREADS_PER_BLOCK
// @launch matmul<<<dim3(ceil_div(N, TILE), ceil_div(M, TILE)), dim3(TILE, TILE)>>>(A, B, C, M, N, K)

__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1)))
void matmul(__global const float* restrict A, __global const float* restrict B, __global float* restrict C,
            int M, int N, int K) {
  __local float a_tile[TILE][TILE];
  __local float b_tile[TILE][TILE];
  const int tx = get_local_id(0);
  const int ty = get_local_id(1);
  const int row = get_group_id(1) * TILE + ty;
  const int col = get_group_id(0) * TILE + tx;
  float sum = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    // Out-of-range elements load as zero, so the edges need no special case in the inner loop.
    a_tile[ty][tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0.0f;
    b_tile[ty][tx] = (k0 + ty < K && col < N) ? B[(k0 + ty) * N + col] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TILE; ++k) {
      sum += a_tile[ty][k] * b_tile[k][tx];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (row < M && col < N) {
    C[row * N + col] = sum;
  }
}
