// exp() of large inputs overflows: subtract the row's maximum first (softmax), guard divisions and logs.
__kernel void softmax_row(__global const float* restrict x, __global float* restrict y, int cols) {
  __global const float* row = x + (long)get_group_id(0) * cols;  // one work-item per row, for brevity
  __global float* out = y + (long)get_group_id(0) * cols;
  if (get_local_id(0) != 0) return;
  float largest = -INFINITY;
  for (int c = 0; c < cols; ++c) largest = fmax(largest, row[c]);
  float sum = 0.0f;
  for (int c = 0; c < cols; ++c) sum += exp(row[c] - largest);
  const float inverse = sum > 0.0f ? 1.0f / sum : 0.0f;
  for (int c = 0; c < cols; ++c) out[c] = exp(row[c] - largest) * inverse;
}
