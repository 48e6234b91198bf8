// Reference fused linear + bias + GELU: one thread per element of y, the dot product in order over k,
// then the bias and the GELU formula as written.
// @launch linear_gelu<<<dim3(ceil_div(N, 16), ceil_div(M, 16)), dim3(16, 16)>>>(x, weight, bias, y, M, N, K)

extern "C" __global__ void linear_gelu(const float* x, const float* weight, const float* bias, float* y, int M, int N,
                                       int K) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < M && col < N) {
    float z = bias[col];
    for (int k = 0; k < K; ++k) z += x[(long long)row * K + k] * weight[(long long)col * K + k];
    const float c = 0.7978845608028654f;  // sqrt(2 / pi)
    y[(long long)row * N + col] = 0.5f * z * (1.0f + tanhf(c * (z + 0.044715f * z * z * z)));
  }
}
