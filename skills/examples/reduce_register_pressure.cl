// reqd_work_group_size tells the compiler the work-group size, so it can budget registers; fewer values
// kept alive at once (accumulate as you go) also frees registers and removes spills.
__kernel __attribute__((reqd_work_group_size(256, 1, 1)))
void dot_rows(__global const float* restrict a, __global const float* restrict b, __global float* restrict y,
              int rows, int cols) {
  const int r = get_global_id(0);
  if (r >= rows) return;
  float sum = 0.0f;  // one running sum instead of an unrolled array of partial sums
  for (int c = 0; c < cols; ++c) sum = fma(a[(long)r * cols + c], b[c], sum);
  y[r] = sum;
}
