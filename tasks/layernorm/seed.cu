// Layer norm seed: one block of BLOCK threads per row, three passes over the row: the first (from
// memory) sums it for a rough mean m0; the second (from L1/L2: the row was just read) sums x - m0 and
// (x - m0)^2, which refine the mean and give the variance without the cancellation of a one-pass
// E[x^2] - E[x]^2 (m0 is already close to the mean); the third reads the row with gamma and beta and
// writes y. A constant row gets exactly beta, as in the reference. Sums go through warp shuffles, then
// across warps through shared memory. Rows whose length is a multiple of VEC use VEC-wide loads and
// stores.
// @tune BLOCK = 256 in {64, 128, 256, 512, 1024}
// @tune VEC = 4 in {1, 2, 4}
// @require BLOCK <= MAX_THREADS_PER_BLOCK
// @launch layernorm<<<M, BLOCK>>>(x, gamma, beta, y, N)

template <int W> struct Vector;
template <> struct Vector<1> { using type = float; };
template <> struct Vector<2> { using type = float2; };
template <> struct Vector<4> { using type = float4; };

// The block's sum of one value per thread; every thread gets it. Safe to call repeatedly: the barrier
// at the start keeps a new call from overwriting what threads of the previous one still read.
__device__ __forceinline__ float block_sum(float value) {
  __shared__ float warp_results[32];
  __shared__ float result;
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  __syncthreads();
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
layernorm(const float* __restrict__ x, const float* __restrict__ gamma, const float* __restrict__ beta,
          float* __restrict__ y, int N) {
  using V = typename Vector<VEC>::type;
  const float* row = x + (long long)blockIdx.x * N;
  float* out = y + (long long)blockIdx.x * N;
  const bool vectorised = N % VEC == 0;
  float sum = 0.0f;
  if (vectorised) {
    for (int v = threadIdx.x; v < N / VEC; v += BLOCK) {
      const V values = reinterpret_cast<const V*>(row)[v];
      const float* lanes = reinterpret_cast<const float*>(&values);
#pragma unroll
      for (int lane = 0; lane < VEC; ++lane) sum += lanes[lane];
    }
  } else {
    for (int i = threadIdx.x; i < N; i += BLOCK) sum += row[i];
  }
  const float rough_mean = block_sum(sum) / N;
  float residuals = 0.0f;
  float squares = 0.0f;
  if (vectorised) {
    for (int v = threadIdx.x; v < N / VEC; v += BLOCK) {
      const V values = reinterpret_cast<const V*>(row)[v];
      const float* lanes = reinterpret_cast<const float*>(&values);
#pragma unroll
      for (int lane = 0; lane < VEC; ++lane) {
        const float d = lanes[lane] - rough_mean;
        residuals += d;
        squares += d * d;
      }
    }
  } else {
    for (int i = threadIdx.x; i < N; i += BLOCK) {
      const float d = row[i] - rough_mean;
      residuals += d;
      squares += d * d;
    }
  }
  const float correction = block_sum(residuals) / N;
  const float mean = rough_mean + correction;
  const float variance = fmaxf(block_sum(squares) / N - correction * correction, 0.0f);
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
