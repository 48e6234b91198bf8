// Long sums lose digits in float: compensated (Kahan) summation keeps the error of one rounding.
__kernel void row_sum(__global const float* restrict x, __global float* restrict y, int rows, int cols) {
  const int r = get_global_id(0);
  if (r >= rows) return;
  float sum = 0.0f, carry = 0.0f;
  for (int c = 0; c < cols; ++c) {
    const float term = x[(long)r * cols + c] - carry;
    const float next = sum + term;
    carry = (next - sum) - term;
    sum = next;
  }
  y[r] = sum;
}
