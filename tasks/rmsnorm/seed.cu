// RMS norm seed: one block of BLOCK threads per row. Pass 1 reads the row once and sums the squares,
// reduced with warp shuffles, then across warps through shared memory; pass 2 reads the row again (from
// L2: it was just read) with w and writes y. Rows whose length is a multiple of VEC use VEC-wide loads
// and stores.
// @tune BLOCK = 256 in {64, 128, 256, 512, 1024}
// @tune VEC = 4 in {1, 2, 4}
// @require BLOCK <= MAX_THREADS_PER_BLOCK
// @launch rmsnorm<<<M, BLOCK>>>(x, w, y, N)

template <int W> struct Vector;
template <> struct Vector<1> { using type = float; };
template <> struct Vector<2> { using type = float2; };
template <> struct Vector<4> { using type = float4; };

__device__ __forceinline__ float block_sum(float value) {
  __shared__ float warp_results[32];
  __shared__ float result;
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (lane == 0) warp_results[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = lane < BLOCK / 32 ? warp_results[lane] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
    if (lane == 0) result = value;
  }
  __syncthreads();
  return result;
}

extern "C" __global__ void __launch_bounds__(BLOCK)
rmsnorm(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int N) {
  using V = typename Vector<VEC>::type;
  const float* row = x + (long long)blockIdx.x * N;
  float* out = y + (long long)blockIdx.x * N;
  const bool vectorised = N % VEC == 0;
  float squares = 0.0f;
  if (vectorised) {
    for (int v = threadIdx.x; v < N / VEC; v += BLOCK) {
      const V values = reinterpret_cast<const V*>(row)[v];
      const float* lanes = reinterpret_cast<const float*>(&values);
#pragma unroll
      for (int lane = 0; lane < VEC; ++lane) squares += lanes[lane] * lanes[lane];
    }
  } else {
    for (int i = threadIdx.x; i < N; i += BLOCK) squares += row[i] * row[i];
  }
  const float inverse_rms = rsqrtf(block_sum(squares) / N + 1e-6f);
  if (vectorised) {
    for (int v = threadIdx.x; v < N / VEC; v += BLOCK) {
      V values = reinterpret_cast<const V*>(row)[v];
      const V weights = reinterpret_cast<const V*>(w)[v];
      float* lanes = reinterpret_cast<float*>(&values);
      const float* w_lanes = reinterpret_cast<const float*>(&weights);
#pragma unroll
      for (int lane = 0; lane < VEC; ++lane) lanes[lane] = lanes[lane] * inverse_rms * w_lanes[lane];
      reinterpret_cast<V*>(out)[v] = values;
    }
  } else {
    for (int i = threadIdx.x; i < N; i += BLOCK) out[i] = row[i] * inverse_rms * w[i];
  }
}
