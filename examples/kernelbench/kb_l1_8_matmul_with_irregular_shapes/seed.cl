// C = A @ B with A (M, K) and B (K, N) of odd sizes, in OpenCL C.
//
// Tiled float32 matrix product with fused multiply-adds, each sum in k order as the reference's. A is (M, K)
// row-major; B is (K, N) row-major; out is (M, N) row-major.
//
// A work-group of TILE x (TILE / WPT) work-items computes a TILE x TILE tile of out, each work-item WPT
// values of one column, TILE / WPT rows apart. K advances TILE at a time: the group stages a TILE x TILE tile
// of A and one of B in local memory (zeros outside the matrices, so every size works), then each work-item
// reads its column of B's tile once per k and its WPT rows of A's.
// @tune TILE = 16 in {8, 16, 32}
// @tune WPT = 4 in {1, 2, 4, 8}
// @require TILE % WPT == 0
// @require TILE * (TILE / WPT) <= MAX_THREADS_PER_BLOCK
// @launch matmul<<<dim3(ceil_div(N, TILE), ceil_div(M, TILE)), dim3(TILE, TILE / WPT)>>>(A, B, out, M, N, K)

#define RS (TILE / WPT)  // rows between a work-item's values

inline float epilogue(float v, float b) {
  return v;
}

__kernel __attribute__((reqd_work_group_size(TILE, RS, 1)))
void matmul(__global const float* restrict A, __global const float* restrict B, __global float* restrict out,
    int M, int N, int K) {
  __local float a_tile[TILE][TILE];
  __local float b_tile[TILE][TILE];
  const int tx = get_local_id(0);
  const int ty = get_local_id(1);
  const int m0 = get_group_id(1) * TILE;
  const int n0 = get_group_id(0) * TILE;
  const int column = n0 + tx;
  const int k_begin = 0;
  const int k_end = K;
  float acc[WPT];
  for (int w = 0; w < WPT; ++w) acc[w] = 0.0f;
  for (int k0 = k_begin; k0 < k_end; k0 += TILE) {
    for (int w = 0; w < WPT; ++w) {
      const int r = ty + w * RS;
      a_tile[r][tx] = m0 + r < M && k0 + tx < K ? A[(long)(m0 + r) * K + (k0 + tx)] : 0.0f;
      b_tile[r][tx] = k0 + r < K && column < N ? B[(long)(k0 + r) * N + (column)] : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TILE; ++k) {
      const float b = b_tile[k][tx];
      for (int w = 0; w < WPT; ++w) acc[w] = fma(a_tile[ty + w * RS][k], b, acc[w]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int w = 0; w < WPT; ++w) {
    const int row = m0 + ty + w * RS;
    if (row < M && column < N) {
      const float value = epilogue(acc[w], 0.0f);
      out[(long)row * N + column] = value;
    }
  }
}
