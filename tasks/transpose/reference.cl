// Reference transpose: one work-item per element of x reads it and writes it to its transposed place.
// @launch transpose<<<dim3(ceil_div(N, 16), ceil_div(M, 16)), dim3(16, 16)>>>(x, y, M, N)

__kernel void transpose(__global const float* x, __global float* y, int M, int N) {
  const int col = get_global_id(0);
  const int row = get_global_id(1);
  if (row < M && col < N) {
    y[(long)col * M + row] = x[(long)row * N + col];
  }
}
