// Each work-item computes 4 outputs of a row: a value of A feeds 4 multiply-adds, so more time goes to
// arithmetic and less to loads. (tb is filled like in the local-memory tiling skill.)
#define TILE 64
__kernel void matmul_row4(__global const float* restrict a, __global const float* restrict b,
                          __global float* restrict c, int m, int n, int k) {
  __local float tb[16][TILE];  // launched with 16 x 16 work-items; a group covers 16 rows x 64 columns
  const int lx = get_local_id(0), ly = get_local_id(1);
  const int row = get_group_id(1) * 16 + ly, col = get_group_id(0) * TILE + lx * 4;
  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int t = 0; t < k; t += 16) {
    for (int j = 0; j < 4; ++j) {
      const int bc = get_group_id(0) * TILE + lx + 16 * j;
      tb[ly][lx + 16 * j] = t + ly < k && bc < n ? b[(t + ly) * n + bc] : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = 0; i < 16 && t + i < k; ++i) {
      const float av = row < m ? a[row * k + t + i] : 0.0f;
      for (int j = 0; j < 4; ++j) acc[j] = fma(av, tb[i][lx * 4 + j], acc[j]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int j = 0; j < 4; ++j) {
    if (row < m && col + j < n) c[row * n + col + j] = acc[j];
  }
}
