// Example candidate (OpenCL C 1.2) for the built-in task `matmul`: C = A B with TILE x TILE tiles in
// local memory. @specialize turns the sizes into the compile-time constants KS_M, KS_N and KS_K, so the
// kernel takes no size arguments and the compiler can unroll and fold the index arithmetic.
//
// @specialize
// @tune TILE = 16 in {4, 8, 16}
// @require TILE * TILE <= MAX_THREADS_PER_BLOCK
// @launch matmul<<<dim3(ceil_div(N, TILE), ceil_div(M, TILE)), dim3(TILE, TILE)>>>(A, B, C)

__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1)))
void matmul(__global const float* restrict A, __global const float* restrict B, __global float* restrict C) {
  __local float a_tile[TILE][TILE];
  __local float b_tile[TILE][TILE];
  const int tx = get_local_id(0);
  const int ty = get_local_id(1);
  const int row = get_group_id(1) * TILE + ty;
  const int col = get_group_id(0) * TILE + tx;
  float sum = 0.0f;
  for (int k0 = 0; k0 < KS_K; k0 += TILE) {
    a_tile[ty][tx] = (row < KS_M && k0 + tx < KS_K) ? A[row * KS_K + k0 + tx] : 0.0f;
    b_tile[ty][tx] = (k0 + ty < KS_K && col < KS_N) ? B[(k0 + ty) * KS_N + col] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TILE; ++k) {
      sum += a_tile[ty][k] * b_tile[k][tx];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (row < KS_M && col < KS_N) {
    C[row * KS_N + col] = sum;
  }
}
