// Reference ReLU: one thread per element. Plain and obviously correct; it is also the baseline.
// @launch relu<<<ceil_div(N, 256), 256>>>(x, y, N)

extern "C" __global__ void relu(const float* x, float* y, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) {
    y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  }
}
