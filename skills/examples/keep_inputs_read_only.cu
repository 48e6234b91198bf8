// @workspace scratch: float32[N]
// Inputs are const; intermediate values go to a declared workspace, never into an input tensor.
extern "C" __global__ void square_then_add(const float* __restrict__ x, float* __restrict__ scratch,
                                           float* __restrict__ y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  scratch[i] = x[i] * x[i];
  y[i] = scratch[i] + x[i];
}
