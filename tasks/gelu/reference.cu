// Reference GELU (tanh approximation): one thread per element, the formula as written.
// @launch gelu<<<ceil_div(N, 256), 256>>>(x, y, N)

extern "C" __global__ void gelu(const float* x, float* y, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) {
    const float v = x[i];
    const float k = 0.7978845608028654f;  // sqrt(2 / pi)
    y[i] = 0.5f * v * (1.0f + tanhf(k * (v + 0.044715f * v * v * v)));
  }
}
