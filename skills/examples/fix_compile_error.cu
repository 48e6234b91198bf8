// Device code only: an extern "C" __global__ kernel, no host code, no host headers.
extern "C" __global__ void scale(const float* __restrict__ x, float* __restrict__ y, float alpha, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = alpha * x[i];  // float literals and built-ins of device code: 2.0f, fmaxf, __expf
}
