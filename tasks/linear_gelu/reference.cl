// Reference fused linear + bias + GELU: one work-item per element of y, the dot product in order over
// k, then the bias and the GELU formula as written.
// @launch linear_gelu<<<dim3(ceil_div(N, 16), ceil_div(M, 16)), dim3(16, 16)>>>(x, weight, bias, y, M, N, K)

__kernel void linear_gelu(__global const float* x, __global const float* weight, __global const float* bias,
                          __global float* y, int M, int N, int K) {
  const int col = get_global_id(0);
  const int row = get_global_id(1);
  if (row < M && col < N) {
    float z = bias[col];
    for (int k = 0; k < K; ++k) z += x[(long)row * K + k] * weight[(long)col * K + k];
    const float c = 0.7978845608028654f;  // sqrt(2 / pi)
    y[(long)row * N + col] = 0.5f * z * (1.0f + tanh(c * (z + 0.044715f * z * z * z)));
  }
}
