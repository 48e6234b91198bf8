// Reference GELU (tanh approximation): one work-item per element, the formula as written.
// @launch gelu<<<ceil_div(N, 256), 256>>>(x, y, N)

__kernel void gelu(__global const float* x, __global float* y, int N) {
  const int i = get_global_id(0);
  if (i < N) {
    const float v = x[i];
    const float k = 0.7978845608028654f;  // sqrt(2 / pi)
    y[i] = 0.5f * v * (1.0f + tanh(k * (v + 0.044715f * v * v * v)));
  }
}
