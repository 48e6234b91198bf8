// @launch add<<<ceil_div(N, 256), 256>>>(a, b, c, N)
// The arguments follow the parameters in order: tensors by name, sizes as expressions; the grid covers N.
__kernel void add(__global const float* a, __global const float* b, __global float* c, int n) {
  const int i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}
