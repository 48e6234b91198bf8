// GELU seed: each thread handles ITEMS groups of VEC consecutive elements. VEC = 4 uses 16-byte float4
// loads and stores when x and y are 16-byte aligned and N is a multiple of 4 (the scalar loop covers
// the rest); ITEMS > 1 keeps several independent loads in flight per thread.
// @tune BLOCK = 256 in {128, 256, 512, 1024}
// @tune ITEMS = 2 in {1, 2, 4, 8}
// @tune VEC = 4 in {1, 2, 4}
// @require BLOCK <= MAX_THREADS_PER_BLOCK
// @launch gelu<<<max(1, ceil_div(N, BLOCK * ITEMS * VEC)), BLOCK>>>(x, y, N)

__device__ __forceinline__ float gelu_tanh(float v) {
  const float k = 0.7978845608028654f;  // sqrt(2 / pi)
  return 0.5f * v * (1.0f + tanhf(k * (v + 0.044715f * v * v * v)));
}

template <int W> struct Vector;
template <> struct Vector<1> { using type = float; };
template <> struct Vector<2> { using type = float2; };
template <> struct Vector<4> { using type = float4; };

extern "C" __global__ void __launch_bounds__(BLOCK) gelu(const float* __restrict__ x, float* __restrict__ y, int N) {
  using V = typename Vector<VEC>::type;
  const bool aligned = ((reinterpret_cast<unsigned long long>(x) | reinterpret_cast<unsigned long long>(y)) %
                        (sizeof(float) * VEC)) == 0;
  const long long vectors = aligned ? N / VEC : 0;
  const long long stride = (long long)gridDim.x * BLOCK * ITEMS;
  // Grid-stride loop over chunks of BLOCK * ITEMS vectors; inside a chunk the loads come first.
  for (long long base = (long long)blockIdx.x * BLOCK * ITEMS + threadIdx.x; base < vectors; base += stride) {
    V values[ITEMS];
#pragma unroll
    for (int item = 0; item < ITEMS; ++item) {
      const long long v = base + (long long)item * BLOCK;
      if (v < vectors) values[item] = reinterpret_cast<const V*>(x)[v];
    }
#pragma unroll
    for (int item = 0; item < ITEMS; ++item) {
      const long long v = base + (long long)item * BLOCK;
      if (v < vectors) {
        float* lanes = reinterpret_cast<float*>(&values[item]);
#pragma unroll
        for (int lane = 0; lane < VEC; ++lane) lanes[lane] = gelu_tanh(lanes[lane]);
        reinterpret_cast<V*>(y)[v] = values[item];
      }
    }
  }
  // The tail (and everything when the pointers are not aligned for vectors).
  const long long done = vectors * VEC;
  for (long long i = done + (long long)blockIdx.x * BLOCK + threadIdx.x; i < N; i += (long long)gridDim.x * BLOCK) {
    y[i] = gelu_tanh(x[i]);
  }
}
