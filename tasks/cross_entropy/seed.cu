// Cross-entropy seed: one block of BLOCK threads per row reads the row once. Each thread keeps a running
// (maximum, sum of exponentials) pair that rescales its sum when the maximum grows (online softmax);
// the pairs are merged with warp shuffles, then across warps through shared memory. Rows whose length
// is a multiple of VEC use VEC-wide loads.
// @tune BLOCK = 512 in {128, 256, 512, 1024}
// @tune VEC = 4 in {1, 2, 4}
// @require BLOCK <= MAX_THREADS_PER_BLOCK
// @launch cross_entropy<<<M, BLOCK>>>(logits, targets, loss, V)

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

__device__ __forceinline__ MaxSum warp_merge(MaxSum value) {
  for (int offset = 16; offset > 0; offset /= 2) {
    MaxSum other;
    other.max = __shfl_xor_sync(0xffffffffu, value.max, offset);
    other.sum = __shfl_xor_sync(0xffffffffu, value.sum, offset);
    value = merge(value, other);
  }
  return value;
}

extern "C" __global__ void __launch_bounds__(BLOCK)
cross_entropy(const float* __restrict__ logits, const int* __restrict__ targets, float* __restrict__ loss, int V) {
  using Vec = typename Vector<VEC>::type;
  __shared__ MaxSum warp_results[32];
  const float* row = logits + (long long)blockIdx.x * V;
  MaxSum acc{NEG_INFINITY, 0.0f};
  if (V % VEC == 0) {
    for (int v = threadIdx.x; v < V / VEC; v += BLOCK) {
      const Vec values = reinterpret_cast<const Vec*>(row)[v];
      const float* lanes = reinterpret_cast<const float*>(&values);
#pragma unroll
      for (int lane = 0; lane < VEC; ++lane) add(acc, lanes[lane]);
    }
  } else {
    for (int i = threadIdx.x; i < V; i += BLOCK) add(acc, row[i]);
  }
  acc = warp_merge(acc);
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (lane == 0) warp_results[warp] = acc;
  __syncthreads();
  if (warp == 0) {
    acc = warp_merge(lane < BLOCK / 32 ? warp_results[lane] : MaxSum{NEG_INFINITY, 0.0f});
    if (lane == 0) loss[blockIdx.x] = acc.max + logf(acc.sum) - row[targets[blockIdx.x]];
  }
}
