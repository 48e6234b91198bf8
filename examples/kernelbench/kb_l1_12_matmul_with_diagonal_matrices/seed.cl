// diag(A) @ B without the diagonal matrix, in OpenCL C: out[i, j] = A[i] * B[i, j], as the problem's
// A.unsqueeze(1) * B. A is (N), B and out are (N, M) row-major. Memory-bound: B is read once and out written
// once.
//
// The grid's first dimension covers the columns, one per work-item; its second covers the rows, ROWS per
// work-item: a work-item loads its ROWS values of B before it scales and stores any.
// @tune BLOCK = 64 in {16, 32, 64, 128, 256}
// @tune ROWS = 2 in {1, 2, 4, 8}
// @require BLOCK <= MAX_THREADS_PER_BLOCK
// @launch diag_matmul<<<dim3(ceil_div(M, BLOCK), ceil_div(N, ROWS)), BLOCK>>>(A, B, out, N, M)

__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void diag_matmul(__global const float* restrict A, __global const float* restrict B, __global float* restrict out,
    int N, int M) {
  const int column = get_global_id(0);
  const int first_row = get_group_id(1) * ROWS;
  if (column >= M) return;
  float values[ROWS];
  for (int r = 0; r < ROWS; ++r) {
    const int row = first_row + r;
    values[r] = row < N ? B[(long)row * M + column] : 0.0f;
  }
  for (int r = 0; r < ROWS; ++r) {
    const int row = first_row + r;
    if (row < N) out[(long)row * M + column] = A[row] * values[r];
  }
}
