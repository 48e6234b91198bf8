// Long sums lose digits in float: accumulate in double (or compensate), round once at the end.
extern "C" __global__ void row_sum(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  double sum = 0.0;
  for (int c = 0; c < cols; ++c) sum += x[(long long)r * cols + c];
  y[r] = (float)sum;
}
