// Reference layer norm: one thread per row computes the mean (refined once), then the variance
// around it, then writes the normalised row.
// @launch layernorm<<<ceil_div(M, 64), 64>>>(x, gamma, beta, y, M, N)

extern "C" __global__ void layernorm(const float* x, const float* gamma, const float* beta, float* y, int M, int N) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M) {
    const float* r = x + (long long)row * N;
    // The mean, refined by the mean of the residuals: exact for a constant row (whose centred values
    // are then exactly 0, where rounding would be amplified by 1 / sqrt(1e-5)) and as accurate as a
    // plain sum elsewhere.
    float sum = 0.0f;
    for (int k = 0; k < N; ++k) sum += r[k];
    const float rough_mean = sum / N;
    float residuals = 0.0f;
    for (int k = 0; k < N; ++k) residuals += r[k] - rough_mean;
    const float mean = rough_mean + residuals / N;
    float squares = 0.0f;
    for (int k = 0; k < N; ++k) squares += (r[k] - mean) * (r[k] - mean);
    const float variance = squares / N;
    const float inverse_std = 1.0f / sqrtf(variance + 1e-5f);
    for (int k = 0; k < N; ++k) {
      y[(long long)row * N + k] = (r[k] - mean) * inverse_std * gamma[k] + beta[k];
    }
  }
}
