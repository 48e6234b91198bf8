// Matrix product seed: TILE x TILE threads compute a TILE x TILE block of C, staging TILE x TILE tiles
// of A and B through shared memory so that each value loaded from global memory is used TILE times.
// @tune TILE = 16 in {8, 16, 32}
// @require TILE * TILE <= MAX_THREADS_PER_BLOCK
// @launch matmul<<<dim3(ceil_div(N, TILE), ceil_div(M, TILE)), dim3(TILE, TILE)>>>(A, B, C, M, N, K)

extern "C" __global__ void __launch_bounds__(TILE * TILE)
matmul(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
  __shared__ float a_tile[TILE][TILE];
  __shared__ float b_tile[TILE][TILE];
  const int tx = threadIdx.x;
  const int ty = threadIdx.y;
  const int row = blockIdx.y * TILE + ty;
  const int col = blockIdx.x * TILE + tx;
  float sum = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    // Out-of-range elements load as zero, so the edges need no special case in the inner loop.
    a_tile[ty][tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0.0f;
    b_tile[ty][tx] = (k0 + ty < K && col < N) ? B[(k0 + ty) * N + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k) {
      sum += a_tile[ty][k] * b_tile[k][tx];
    }
    __syncthreads();
  }
  if (row < M && col < N) {
    C[row * N + col] = sum;
  }
}
