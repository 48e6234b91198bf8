// Layer norm seed: one block of BLOCK threads per row. Pass 1 reads the row once and sums d = x - x[0]
// and d * d (shifting by the row's first value keeps the one-pass variance accurate when the mean is
// far from zero); the sums are reduced with warp shuffles, then across warps through shared memory.
// Pass 2 reads the row again (from L2: it was just read) with gamma and beta and writes y. Rows whose
// length is a multiple of VEC use VEC-wide loads and stores.
// @tune BLOCK = 256 in {64, 128, 256, 512, 1024}
// @tune VEC = 4 in {1, 2, 4}
// @require BLOCK <= MAX_THREADS_PER_BLOCK
// @launch layernorm<<<M, BLOCK>>>(x, gamma, beta, y, N)

template <int W> struct Vector;
template <> struct Vector<1> { using type = float; };
template <> struct Vector<2> { using type = float2; };
template <> struct Vector<4> { using type = float4; };

__device__ __forceinline__ float2 block_sum2(float2 value) {
  __shared__ float2 warp_results[32];
  __shared__ float2 result;
  for (int offset = 16; offset > 0; offset /= 2) {
    value.x += __shfl_xor_sync(0xffffffffu, value.x, offset);
    value.y += __shfl_xor_sync(0xffffffffu, value.y, offset);
  }
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (lane == 0) warp_results[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = lane < BLOCK / 32 ? warp_results[lane] : make_float2(0.0f, 0.0f);
    for (int offset = 16; offset > 0; offset /= 2) {
      value.x += __shfl_xor_sync(0xffffffffu, value.x, offset);
      value.y += __shfl_xor_sync(0xffffffffu, value.y, offset);
    }
    if (lane == 0) result = value;
  }
  __syncthreads();
  return result;
}

extern "C" __global__ void __launch_bounds__(BLOCK)
layernorm(const float* __restrict__ x, const float* __restrict__ gamma, const float* __restrict__ beta,
          float* __restrict__ y, int N) {
  using V = typename Vector<VEC>::type;
  const float* row = x + (long long)blockIdx.x * N;
  float* out = y + (long long)blockIdx.x * N;
  const bool vectorised = N % VEC == 0;
  const float shift = row[0];
  float2 sums = make_float2(0.0f, 0.0f);  // (sum of d, sum of d * d)
  if (vectorised) {
    for (int v = threadIdx.x; v < N / VEC; v += BLOCK) {
      V values = reinterpret_cast<const V*>(row)[v];
      const float* lanes = reinterpret_cast<const float*>(&values);
#pragma unroll
      for (int lane = 0; lane < VEC; ++lane) {
        const float d = lanes[lane] - shift;
        sums.x += d;
        sums.y += d * d;
      }
    }
  } else {
    for (int i = threadIdx.x; i < N; i += BLOCK) {
      const float d = row[i] - shift;
      sums.x += d;
      sums.y += d * d;
    }
  }
  const float2 total = block_sum2(sums);
  const float mean_d = total.x / N;
  const float variance = fmaxf(total.y / N - mean_d * mean_d, 0.0f);
  const float mean = shift + mean_d;
  const float inverse_std = rsqrtf(variance + 1e-5f);
  if (vectorised) {
    for (int v = threadIdx.x; v < N / VEC; v += BLOCK) {
      V values = reinterpret_cast<const V*>(row)[v];
      const V g = reinterpret_cast<const V*>(gamma)[v];
      const V b = reinterpret_cast<const V*>(beta)[v];
      float* lanes = reinterpret_cast<float*>(&values);
      const float* g_lanes = reinterpret_cast<const float*>(&g);
      const float* b_lanes = reinterpret_cast<const float*>(&b);
#pragma unroll
      for (int lane = 0; lane < VEC; ++lane) {
        lanes[lane] = (lanes[lane] - mean) * inverse_std * g_lanes[lane] + b_lanes[lane];
      }
      reinterpret_cast<V*>(out)[v] = values;
    }
  } else {
    for (int i = threadIdx.x; i < N; i += BLOCK) out[i] = (row[i] - mean) * inverse_std * gamma[i] + beta[i];
  }
}
