// Transpose seed: a block of TILE x ROWS threads moves a TILE x TILE tile through shared memory, each
// thread handling TILE / ROWS elements. Reads walk rows of x and writes walk rows of y, so both are
// coalesced; the tile has one extra column so that reading it by columns hits distinct banks.
// @tune TILE = 32 in {16, 32, 64}
// @tune ROWS = 8 in {2, 4, 8, 16, 32}
// @require ROWS <= TILE
// @require TILE * ROWS <= MAX_THREADS_PER_BLOCK
// @require (TILE + 1) * TILE * 4 <= SMEM_PER_BLOCK
// @launch transpose<<<dim3(ceil_div(N, TILE), ceil_div(M, TILE)), dim3(TILE, ROWS)>>>(x, y, M, N)

extern "C" __global__ void __launch_bounds__(TILE * ROWS)
transpose(const float* __restrict__ x, float* __restrict__ y, int M, int N) {
  __shared__ float tile[TILE][TILE + 1];
  const int tx = threadIdx.x;
  const int ty = threadIdx.y;
  const int col = blockIdx.x * TILE + tx;  // column of x
#pragma unroll
  for (int r = ty; r < TILE; r += ROWS) {
    const int row = blockIdx.y * TILE + r;
    if (row < M && col < N) tile[r][tx] = x[(long long)row * N + col];
  }
  __syncthreads();
  const int out_col = blockIdx.y * TILE + tx;  // column of y = row of x
#pragma unroll
  for (int r = ty; r < TILE; r += ROWS) {
    const int out_row = blockIdx.x * TILE + r;  // row of y = column of x
    if (out_row < N && out_col < M) y[(long long)out_row * M + out_col] = tile[tx][r];
  }
}
