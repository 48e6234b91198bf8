// @launch add<<<ceil_div(N, 256), 256>>>(a, b, c, N)
// The arguments follow the parameters in order: tensors by name, sizes as expressions; the grid covers N.
extern "C" __global__ void add(const float* a, const float* b, float* c, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
