// Each thread computes 4 outputs of a row: a value of A read from shared memory feeds 4 multiply-adds,
// so more time goes to arithmetic and less to loads. (tb is filled like in the shared-memory tiling skill.)
#define TILE 64
extern "C" __global__ void matmul_row4(const float* __restrict__ a, const float* __restrict__ b,
                                       float* __restrict__ c, int m, int n, int k) {
  __shared__ float tb[16][TILE];  // launched with 16 x 16 threads; a block covers 16 rows x 64 columns
  const int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x * 4;
  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int t = 0; t < k; t += 16) {
    for (int j = 0; j < 4; ++j) {
      const int bc = blockIdx.x * TILE + threadIdx.x + 16 * j;
      tb[threadIdx.y][threadIdx.x + 16 * j] = t + threadIdx.y < k && bc < n ? b[(t + threadIdx.y) * n + bc] : 0.0f;
    }
    __syncthreads();
    for (int i = 0; i < 16 && t + i < k; ++i) {
      const float av = row < m ? a[row * k + t + i] : 0.0f;
      for (int j = 0; j < 4; ++j) acc[j] = fmaf(av, tb[i][threadIdx.x * 4 + j], acc[j]);
    }
    __syncthreads();
  }
  for (int j = 0; j < 4; ++j) {
    if (row < m && col + j < n) c[row * n + col + j] = acc[j];
  }
}
