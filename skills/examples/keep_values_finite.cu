// exp() of large inputs overflows: subtract the row's maximum first (softmax), guard divisions and logs.
extern "C" __global__ void softmax_row(const float* __restrict__ x, float* __restrict__ y, int cols) {
  const float* row = x + (long long)blockIdx.x * cols;  // one thread per row, for brevity
  float* out = y + (long long)blockIdx.x * cols;
  if (threadIdx.x != 0) return;
  float largest = __int_as_float(0xff800000);  // -infinity
  for (int c = 0; c < cols; ++c) largest = fmaxf(largest, row[c]);
  float sum = 0.0f;
  for (int c = 0; c < cols; ++c) sum += __expf(row[c] - largest);
  const float inverse = sum > 0.0f ? 1.0f / sum : 0.0f;
  for (int c = 0; c < cols; ++c) out[c] = __expf(row[c] - largest) * inverse;
}
