// Reference: one thread per element, after a loop whose result feeds the output (v - v is 0 for the
// finite values it takes, and not foldable under IEEE rules), so the compiler keeps it.
// @launch slow_scale_add<<<ceil_div(N, 128), 128>>>(a, b, y, N)

extern "C" __global__ void slow_scale_add(const float* a, const float* b, float* y, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= N) return;
  float v = a[i];
  for (int k = 0; k < 1000; ++k) v = v * 0.9999f + 0.0001f;
  y[i] = 2.0f * a[i] + b[i] + (v - v);
}
