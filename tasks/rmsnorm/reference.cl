// Reference RMS norm: one work-item per row sums the squares, then writes the scaled row.
// @launch rmsnorm<<<ceil_div(M, 64), 64>>>(x, w, y, M, N)

__kernel void rmsnorm(__global const float* x, __global const float* w, __global float* y, int M, int N) {
  const int row = get_global_id(0);
  if (row < M) {
    __global const float* r = x + (long)row * N;
    float squares = 0.0f;
    for (int k = 0; k < N; ++k) squares += r[k] * r[k];
    const float inverse_rms = 1.0f / sqrt(squares / N + 1e-6f);
    for (int k = 0; k < N; ++k) y[(long)row * N + k] = r[k] * inverse_rms * w[k];
  }
}
