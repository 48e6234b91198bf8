// Transpose seed: a work-group of TILE x ROWS work-items moves a TILE x TILE tile through local memory,
// each work-item handling TILE / ROWS elements. Reads walk rows of x and writes walk rows of y; the
// tile has one extra column so that reading it by columns hits distinct banks.
// @tune TILE = 16 in {8, 16, 32}
// @tune ROWS = 4 in {1, 2, 4, 8, 16}
// @require ROWS <= TILE
// @require TILE * ROWS <= MAX_THREADS_PER_BLOCK
// @launch transpose<<<dim3(ceil_div(N, TILE), ceil_div(M, TILE)), dim3(TILE, ROWS)>>>(x, y, M, N)

__kernel __attribute__((reqd_work_group_size(TILE, ROWS, 1)))
void transpose(__global const float* restrict x, __global float* restrict y, int M, int N) {
  __local float tile[TILE][TILE + 1];
  const int tx = get_local_id(0);
  const int ty = get_local_id(1);
  const int col = get_group_id(0) * TILE + tx;  // column of x
  for (int r = ty; r < TILE; r += ROWS) {
    const int row = get_group_id(1) * TILE + r;
    if (row < M && col < N) tile[r][tx] = x[(long)row * N + col];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const int out_col = get_group_id(1) * TILE + tx;  // column of y = row of x
  for (int r = ty; r < TILE; r += ROWS) {
    const int out_row = get_group_id(0) * TILE + r;  // row of y = column of x
    if (out_row < N && out_col < M) y[(long)out_row * M + out_col] = tile[tx][r];
  }
}
