// Softmax seed: one block of BLOCK threads per row. Rows that fit in registers (a multiple of 4 floats,
// at most BLOCK * ITEMS * 4 of them) are read once with 16-byte loads into ITEMS float4 registers per
// thread; the row's maximum and then the sum of exponentials are block reductions (warp shuffles, then
// one value per warp through shared memory); each exponential is computed once, kept in registers,
// scaled by 1 / sum and written with 16-byte stores. x is read once and y written once.
// Other rows (too long or not a multiple of 4) take a two-pass path: an online (maximum, sum) pass,
// then a pass that reads the row again (mostly from L2) and writes the result.
// @tune BLOCK = 256 in {128, 256, 512, 1024}
// @tune ITEMS = 4 in {1, 2, 4, 8, 16}
// @require BLOCK <= MAX_THREADS_PER_BLOCK
// @launch softmax<<<M, BLOCK>>>(x, y, N)

// NVRTC has no <math.h>: -infinity from its bits.
#define NEG_INFINITY (-__int_as_float(0x7f800000))
#define WARPS (BLOCK / 32)

__device__ __forceinline__ float warp_max(float value) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, offset));
  return value;
}

__device__ __forceinline__ float warp_sum(float value) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

// Block-wide maximum or sum; `slots` must not be reused before the next barrier of the caller.
template <bool IS_MAX>
__device__ __forceinline__ float block_reduce(float value, float* slots) {
  value = IS_MAX ? warp_max(value) : warp_sum(value);
  if (threadIdx.x % 32 == 0) slots[threadIdx.x / 32] = value;
  __syncthreads();
  float total = slots[0];
#pragma unroll
  for (int w = 1; w < WARPS; ++w) total = IS_MAX ? fmaxf(total, slots[w]) : total + slots[w];
  return total;
}

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

extern "C" __global__ void __launch_bounds__(BLOCK) softmax(const float* __restrict__ x, float* __restrict__ y, int N) {
  __shared__ float max_slots[WARPS];
  __shared__ float sum_slots[WARPS];
  __shared__ MaxSum pair_slots[WARPS];
  const float* row = x + (long long)blockIdx.x * N;
  float* out = y + (long long)blockIdx.x * N;
  const int tid = threadIdx.x;

  if (N % 4 == 0 && N <= BLOCK * ITEMS * 4) {
    const int count = N / 4;
    const float4* in4 = reinterpret_cast<const float4*>(row);
    float4* out4 = reinterpret_cast<float4*>(out);
    float4 v[ITEMS];
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      const int i = j * BLOCK + tid;
      v[j] = i < count ? in4[i] : make_float4(NEG_INFINITY, NEG_INFINITY, NEG_INFINITY, NEG_INFINITY);
    }
    float max = NEG_INFINITY;
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) max = fmaxf(max, fmaxf(fmaxf(v[j].x, v[j].y), fmaxf(v[j].z, v[j].w)));
    max = block_reduce<true>(max, max_slots);
    float sum = 0.0f;
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      // Padding lanes hold -infinity: exp gives 0 and they are never stored.
      v[j].x = expf(v[j].x - max);
      v[j].y = expf(v[j].y - max);
      v[j].z = expf(v[j].z - max);
      v[j].w = expf(v[j].w - max);
      sum += (v[j].x + v[j].y) + (v[j].z + v[j].w);
    }
    sum = block_reduce<false>(sum, sum_slots);
    const float inverse = 1.0f / sum;
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      const int i = j * BLOCK + tid;
      if (i < count) out4[i] = make_float4(v[j].x * inverse, v[j].y * inverse, v[j].z * inverse, v[j].w * inverse);
    }
    return;
  }

  // Fallback: online (maximum, sum) pass, merged across the block, then a second pass.
  MaxSum acc{NEG_INFINITY, 0.0f};
  for (int i = tid; i < N; i += BLOCK) add(acc, row[i]);
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    MaxSum other;
    other.max = __shfl_xor_sync(0xffffffffu, acc.max, offset);
    other.sum = __shfl_xor_sync(0xffffffffu, acc.sum, offset);
    acc = merge(acc, other);
  }
  if (tid % 32 == 0) pair_slots[tid / 32] = acc;
  __syncthreads();
  MaxSum total = pair_slots[0];
  for (int w = 1; w < WARPS; ++w) total = merge(total, pair_slots[w]);
  const float inverse = 1.0f / total.sum;
  for (int i = tid; i < N; i += BLOCK) out[i] = expf(row[i] - total.max) * inverse;
}
