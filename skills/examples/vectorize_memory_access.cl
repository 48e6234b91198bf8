// vload4/vstore4 move four floats per instruction; the tail that is not a multiple of 4 is handled element
// by element.
__kernel void scale4(__global const float* restrict x, __global float* restrict y, float alpha, int n) {
  const int i = get_global_id(0);
  const int vectors = n / 4;
  if (i < vectors) vstore4(alpha * vload4(i, x), i, y);
  const int tail = vectors * 4 + i;
  if (i < n - vectors * 4) y[tail] = alpha * x[tail];
}
