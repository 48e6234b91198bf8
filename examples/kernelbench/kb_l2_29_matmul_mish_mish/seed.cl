// mish(mish(x @ linear_weight.T + linear_bias)) (the kernel's M, N, K are the task's sizes batch_size,
// out_features, in_features), in OpenCL C.
//
// Tiled float32 matrix product with fused multiply-adds, each sum in k order as the reference's. A is (M, K)
// row-major; B is stored (N, K) row-major (the product reads its transpose); out is (M, N) row-major.
//
// A work-group of TILE x (TILE / WPT) work-items computes a TILE x TILE tile of out, each work-item WPT
// values of one column, TILE / WPT rows apart. K advances TILE at a time: the group stages a TILE x TILE tile
// of A and one of B in local memory (zeros outside the matrices, so every size works), then each work-item
// reads its column of B's tile once per k and its WPT rows of A's.
//
// Fused epilogue: Mish twice, mish(z) = z * tanh(log1p(exp(z))) as PyTorch computes it, before the only
// store.
// @tune TILE = 16 in {8, 16, 32}
// @tune WPT = 4 in {1, 2, 4, 8}
// @require TILE % WPT == 0
// @require TILE * (TILE / WPT) <= MAX_THREADS_PER_BLOCK
// @launch matmul<<<dim3(ceil_div(out_features, TILE), ceil_div(batch_size, TILE)), dim3(TILE, TILE / WPT)>>>(x, linear_weight, linear_bias, out, batch_size, out_features, in_features)

#define RS (TILE / WPT)  // rows between a work-item's values

inline float epilogue(float v, float b) {
  const float z = v + b;
  const float once = z * tanh(log1p(exp(z)));
  return once * tanh(log1p(exp(once)));
}

__kernel __attribute__((reqd_work_group_size(TILE, RS, 1)))
void matmul(__global const float* restrict A, __global const float* restrict B, __global const float* restrict bias, __global float* restrict out,
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
      b_tile[r][tx] = k0 + r < K && column < N ? B[(long)(column) * K + (k0 + r)] : 0.0f;
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
      const float value = epilogue(acc[w], bias[column]);
      out[(long)row * N + column] = value;
    }
  }
}
