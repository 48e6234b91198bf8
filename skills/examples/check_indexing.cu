// Row-major tensors: element (r, c) of an R x C matrix is at r * C + c; the column index varies fastest.
extern "C" __global__ void add_row_bias(const float* __restrict__ x, const float* __restrict__ bias,
                                        float* __restrict__ y, int rows, int cols) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int r = blockIdx.y;
  if (r < rows && c < cols) y[r * cols + c] = x[r * cols + c] + bias[c];  // bias has one value per column
}
