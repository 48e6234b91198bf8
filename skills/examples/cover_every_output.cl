// A grid-stride loop writes every element whatever the global size, odd sizes and tails included.
__kernel void fill_relu(__global const float* restrict x, __global float* restrict y, int n) {
  for (int i = get_global_id(0); i < n; i += get_global_size(0)) {
    y[i] = fmax(x[i], 0.0f);
  }
}
