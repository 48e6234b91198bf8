// Each block loads a tile of A and of B into shared memory once and every thread reuses it TILE times,
// instead of each thread reading its whole row and column from global memory.
#define TILE 16
extern "C" __global__ void matmul(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                                  int m, int n, int k) {
  __shared__ float ta[TILE][TILE], tb[TILE][TILE];
  const int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
  float sum = 0.0f;
  for (int t = 0; t < k; t += TILE) {
    ta[threadIdx.y][threadIdx.x] = row < m && t + threadIdx.x < k ? a[row * k + t + threadIdx.x] : 0.0f;
    tb[threadIdx.y][threadIdx.x] = col < n && t + threadIdx.y < k ? b[(t + threadIdx.y) * n + col] : 0.0f;
    __syncthreads();
    for (int i = 0; i < TILE; ++i) sum = fmaf(ta[threadIdx.y][i], tb[i][threadIdx.x], sum);
    __syncthreads();
  }
  if (row < m && col < n) c[row * n + col] = sum;
}
