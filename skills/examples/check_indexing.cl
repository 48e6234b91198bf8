// Row-major tensors: element (r, c) of an R x C matrix is at r * C + c; the column index varies fastest.
__kernel void add_row_bias(__global const float* restrict x, __global const float* restrict bias,
                           __global float* restrict y, int rows, int cols) {
  const int c = get_global_id(0);
  const int r = get_global_id(1);
  if (r < rows && c < cols) y[r * cols + c] = x[r * cols + c] + bias[c];  // bias has one value per column
}
