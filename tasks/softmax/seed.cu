// Softmax seed: one block of BLOCK threads per row. Pass 1 reads the row once, each thread keeping a
// running (maximum, sum of exponentials) pair that rescales its sum when the maximum grows (online
// softmax); the pairs are merged with warp shuffles, then across warps through shared memory. Pass 2
// reads the row again (from L2: it was just read) and writes exp(x - max) / sum. Rows whose length is
// a multiple of VEC use VEC-wide loads and stores.
// @tune BLOCK = 256 in {64, 128, 256, 512, 1024}
// @tune VEC = 4 in {1, 2, 4}
// @require BLOCK <= MAX_THREADS_PER_BLOCK
// @launch softmax<<<M, BLOCK>>>(x, y, N)

// NVRTC has no <math.h>: -infinity from its bits.
#define NEG_INFINITY (-__int_as_float(0x7f800000))

template <int W> struct Vector;
template <> struct Vector<1> { using type = float; };
template <> struct Vector<2> { using type = float2; };
template <> struct Vector<4> { using type = float4; };

struct MaxSum {
  float max;
  float sum;  // of exp(x - max); 0 for no elements yet
};

__device__ __forceinline__ void add(MaxSum& acc, float value) {
  if (value > acc.max) {
    acc.sum = acc.sum * expf(acc.max - value) + 1.0f;
    acc.max = value;
  } else {
    acc.sum += expf(value - acc.max);
  }
}

__device__ __forceinline__ MaxSum merge(MaxSum a, MaxSum b) {
  if (a.sum == 0.0f) return b;
  if (b.sum == 0.0f) return a;
  const float max = fmaxf(a.max, b.max);
  return {max, a.sum * expf(a.max - max) + b.sum * expf(b.max - max)};
}

__device__ __forceinline__ MaxSum block_merge(MaxSum value) {
  __shared__ MaxSum warp_results[32];
  __shared__ MaxSum result;
  for (int offset = 16; offset > 0; offset /= 2) {
    MaxSum other;
    other.max = __shfl_xor_sync(0xffffffffu, value.max, offset);
    other.sum = __shfl_xor_sync(0xffffffffu, value.sum, offset);
    value = merge(value, other);
  }
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (lane == 0) warp_results[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = lane < BLOCK / 32 ? warp_results[lane] : MaxSum{NEG_INFINITY, 0.0f};
    for (int offset = 16; offset > 0; offset /= 2) {
      MaxSum other;
      other.max = __shfl_xor_sync(0xffffffffu, value.max, offset);
      other.sum = __shfl_xor_sync(0xffffffffu, value.sum, offset);
      value = merge(value, other);
    }
    if (lane == 0) result = value;
  }
  __syncthreads();
  return result;
}

extern "C" __global__ void __launch_bounds__(BLOCK) softmax(const float* __restrict__ x, float* __restrict__ y, int N) {
  using V = typename Vector<VEC>::type;
  const float* row = x + (long long)blockIdx.x * N;
  float* out = y + (long long)blockIdx.x * N;
  const bool vectorised = N % VEC == 0;
  MaxSum acc{NEG_INFINITY, 0.0f};
  if (vectorised) {
    for (int v = threadIdx.x; v < N / VEC; v += BLOCK) {
      V values = reinterpret_cast<const V*>(row)[v];
      const float* lanes = reinterpret_cast<const float*>(&values);
#pragma unroll
      for (int lane = 0; lane < VEC; ++lane) add(acc, lanes[lane]);
    }
  } else {
    for (int i = threadIdx.x; i < N; i += BLOCK) add(acc, row[i]);
  }
  const MaxSum total = block_merge(acc);
  const float inverse = 1.0f / total.sum;
  if (vectorised) {
    for (int v = threadIdx.x; v < N / VEC; v += BLOCK) {
      V values = reinterpret_cast<const V*>(row)[v];
      float* lanes = reinterpret_cast<float*>(&values);
#pragma unroll
      for (int lane = 0; lane < VEC; ++lane) lanes[lane] = expf(lanes[lane] - total.max) * inverse;
      reinterpret_cast<V*>(out)[v] = values;
    }
  } else {
    for (int i = threadIdx.x; i < N; i += BLOCK) out[i] = expf(row[i] - total.max) * inverse;
  }
}
