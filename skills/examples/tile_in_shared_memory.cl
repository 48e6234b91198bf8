// Each work-group loads a tile of A and of B into local memory once and every work-item reuses it TILE
// times, instead of each reading its whole row and column from global memory.
#define TILE 16
__kernel void matmul(__global const float* restrict a, __global const float* restrict b, __global float* restrict c,
                     int m, int n, int k) {
  __local float ta[TILE][TILE], tb[TILE][TILE];
  const int lx = get_local_id(0), ly = get_local_id(1);
  const int row = get_group_id(1) * TILE + ly, col = get_group_id(0) * TILE + lx;
  float sum = 0.0f;
  for (int t = 0; t < k; t += TILE) {
    ta[ly][lx] = row < m && t + lx < k ? a[row * k + t + lx] : 0.0f;
    tb[ly][lx] = col < n && t + ly < k ? b[(t + ly) * n + col] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = 0; i < TILE; ++i) sum = fma(ta[ly][i], tb[i][lx], sum);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (row < m && col < n) c[row * n + col] = sum;
}
