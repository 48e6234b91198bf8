// Transpose seed: a block of (TILE / 4) x ROWS threads moves a TILE x TILE tile of x through shared
// memory. Reads are 16-byte vectors along rows of x (where N is a multiple of 4, so rows are 16-byte
// aligned; else guarded scalar loads), TILE / ROWS of them per thread issued back to back so that many
// bytes are in flight; writes walk rows of y with consecutive threads on consecutive addresses (128
// bytes per warp), reading the tile by columns. One padding column keeps those column reads on
// distinct banks. Edges are guarded element by element.
// @tune TILE = 64 in {32, 64}
// @tune ROWS = 32 in {4, 8, 16, 32}
// @require ROWS <= TILE
// @require (TILE / 4) * ROWS <= MAX_THREADS_PER_BLOCK
// @require (TILE / 4) * ROWS >= 32
// @require (TILE + 1) * TILE * 4 <= SMEM_PER_BLOCK
// @launch transpose<<<dim3(ceil_div(N, TILE), ceil_div(M, TILE)), dim3(TILE / 4, ROWS)>>>(x, y, M, N)

#define THREADS ((TILE / 4) * ROWS)

extern "C" __global__ void __launch_bounds__(THREADS)
transpose(const float* __restrict__ x, float* __restrict__ y, int M, int N) {
  __shared__ float tile[TILE][TILE + 1];
  const int tx = threadIdx.x;  // 4 columns of x each
  const int ty = threadIdx.y;
  const int row0 = blockIdx.y * TILE;  // first row of x in the tile
  const int col0 = blockIdx.x * TILE;  // first column of x in the tile
  const int col = col0 + 4 * tx;
  if (N % 4 == 0) {
    float4 loaded[TILE / ROWS];
#pragma unroll
    for (int j = 0; j < TILE / ROWS; ++j) {
      const int row = row0 + ty + j * ROWS;
      // N % 4 == 0 and col % 4 == 0: the vector is wholly inside or wholly outside the row.
      loaded[j] = row < M && col < N ? *reinterpret_cast<const float4*>(x + (long long)row * N + col)
                                     : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
#pragma unroll
    for (int j = 0; j < TILE / ROWS; ++j) {
      float* slot = &tile[ty + j * ROWS][4 * tx];
      slot[0] = loaded[j].x;
      slot[1] = loaded[j].y;
      slot[2] = loaded[j].z;
      slot[3] = loaded[j].w;
    }
  } else {
#pragma unroll
    for (int j = 0; j < TILE / ROWS; ++j) {
      const int row = row0 + ty + j * ROWS;
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        tile[ty + j * ROWS][4 * tx + e] = row < M && col + e < N ? x[(long long)row * N + col + e] : 0.0f;
      }
    }
  }
  __syncthreads();
  // Element t of the block's output: row c of the tile's part of y (a column of x), column r.
  const int tid = ty * (TILE / 4) + tx;
#pragma unroll
  for (int j = 0; j < TILE * TILE / THREADS; ++j) {
    const int e = tid + j * THREADS;
    const int c = e / TILE;
    const int r = e % TILE;
    const int out_row = col0 + c;  // row of y = column of x
    const int out_col = row0 + r;  // column of y = row of x
    if (out_row < N && out_col < M) y[(long long)out_row * M + out_col] = tile[r][c];
  }
}
