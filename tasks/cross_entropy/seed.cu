// Cross-entropy seed: one block of BLOCK threads per row reads the row once with 16-byte loads (rows
// whose length is a multiple of 4 floats). Each thread issues UNROLL independent loads, then folds the
// whole batch into its running (maximum, sum of exponentials) pair at once: one new maximum per batch
// and one rescale of the sum, so the exponentials of a batch are independent of each other (no
// per-element branch or dependency chain). The pairs are merged with warp shuffles, then across warps
// through shared memory. Other row lengths use scalar loads and a per-element online update.
// @tune BLOCK = 512 in {128, 256, 512, 1024}
// @tune UNROLL = 8 in {1, 2, 4, 8}
// @require BLOCK <= MAX_THREADS_PER_BLOCK
// @launch cross_entropy<<<M, BLOCK>>>(logits, targets, loss, V)

// NVRTC has no <math.h>: -infinity from its bits.
#define NEG_INFINITY (-__int_as_float(0x7f800000))

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
#pragma unroll
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
  __shared__ MaxSum warp_results[32];
  const float* row = logits + (long long)blockIdx.x * V;
  const int tid = threadIdx.x;
  MaxSum acc{NEG_INFINITY, 0.0f};
  if (V % 4 == 0) {
    const float4* vectors = reinterpret_cast<const float4*>(row);
    const int count = V / 4;
    for (int base = 0; base < count; base += BLOCK * UNROLL) {
      float4 v[UNROLL];
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        const int i = base + u * BLOCK + tid;
        v[u] = i < count ? vectors[i] : make_float4(NEG_INFINITY, NEG_INFINITY, NEG_INFINITY, NEG_INFINITY);
      }
      float max = acc.max;
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) max = fmaxf(max, fmaxf(fmaxf(v[u].x, v[u].y), fmaxf(v[u].z, v[u].w)));
      if (max != NEG_INFINITY) {  // else this thread has seen no element yet
        float sum = acc.sum * expf(acc.max - max);  // acc.max = -inf: exp gives 0
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
          sum += (expf(v[u].x - max) + expf(v[u].y - max)) + (expf(v[u].z - max) + expf(v[u].w - max));
        }
        acc.max = max;
        acc.sum = sum;
      }
    }
  } else {
    for (int i = tid; i < V; i += BLOCK) add(acc, row[i]);
  }
  acc = warp_merge(acc);
  const int warp = tid / 32;
  const int lane = tid % 32;
  if (lane == 0) warp_results[warp] = acc;
  __syncthreads();
  if (warp == 0) {
    acc = warp_merge(lane < BLOCK / 32 ? warp_results[lane] : MaxSum{NEG_INFINITY, 0.0f});
    if (lane == 0) loss[blockIdx.x] = acc.max + logf(acc.sum) - row[targets[blockIdx.x]];
  }
}
