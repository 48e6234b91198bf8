// torch.nn.functional.cross_entropy(predictions, targets) with its default mean reduction: predictions is
// (batch_size, num_classes) float32 row-major, targets (batch_size) int64 class indices, out a 0-d float32:
// out = mean over rows r of log(sum over c of exp(predictions[r, c])) - predictions[r, targets[r]].
// Memory-bound: the fewest bytes are one read of predictions.
//
// Two kernels, so that the mean is summed in a fixed order (the same bits on every run, no float atomics):
//   1. cross_entropy_rows: a warp per row (WARPS rows per block) reads the row once, each lane keeping a
//      running maximum and a sum of exponentials rescaled to it; a batch of UNROLL float4 loads is folded in
//      at once (one new maximum and one rescale per batch), then the lanes are merged with shuffles. The
//      block's rows' losses are added in row order into partial[block].
//   2. cross_entropy_mean: one block adds the partials in a fixed tree and divides by batch_size.
// Rows whose length is not a multiple of 4 (odd sizes) are read one element at a time. A target outside
// [0, num_classes) gives NaN (PyTorch raises an error there) rather than a read out of bounds.
// @tune WARPS = 8 in {2, 4, 8, 16, 32}
// @tune UNROLL = 4 in {1, 2, 4, 8}
// @require 32 * WARPS <= MAX_THREADS_PER_BLOCK
// @workspace partial: float32[ceil_div(batch_size, WARPS)]
// @launch cross_entropy_rows<<<ceil_div(batch_size, WARPS), 32 * WARPS>>>(predictions, targets, partial, batch_size, num_classes)
// @launch cross_entropy_mean<<<1, 1024>>>(partial, out, ceil_div(batch_size, WARPS), batch_size)

// NVRTC has no <math.h>: the infinities and NaN from their bits.
#define NEG_INFINITY (-__int_as_float(0x7f800000))
#define QUIET_NAN __int_as_float(0x7fc00000)

// Lane state: the maximum seen and the sum of exp(x - maximum); maximum = -inf and sum = 0 before any value.
struct Running {
  float maximum;
  float sum;
};

__device__ __forceinline__ Running combine(Running a, Running b) {
  const float maximum = fmaxf(a.maximum, b.maximum);
  if (maximum == NEG_INFINITY) return a;  // neither has seen a value (or every value is -inf)
  return {maximum, a.sum * expf(a.maximum - maximum) + b.sum * expf(b.maximum - maximum)};
}

extern "C" __global__ void __launch_bounds__(32 * WARPS)
cross_entropy_rows(const float* __restrict__ predictions, const long long* __restrict__ targets,
                   float* __restrict__ partial, int batch_size, int num_classes) {
  __shared__ float losses[WARPS];
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int row = blockIdx.x * WARPS + warp;
  if (row < batch_size) {
    const float* x = predictions + (long long)row * num_classes;
    Running acc{NEG_INFINITY, 0.0f};
    if (num_classes % 4 == 0) {
      const float4* vectors = reinterpret_cast<const float4*>(x);
      const int count = num_classes / 4;
      for (int base = lane; base < count; base += 32 * UNROLL) {
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
          const int i = base + 32 * u;
          v[u] = i < count ? vectors[i] : make_float4(NEG_INFINITY, NEG_INFINITY, NEG_INFINITY, NEG_INFINITY);
        }
        float maximum = acc.maximum;
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) maximum = fmaxf(maximum, fmaxf(fmaxf(v[u].x, v[u].y), fmaxf(v[u].z, v[u].w)));
        if (maximum != NEG_INFINITY) {
          float sum = acc.sum * expf(acc.maximum - maximum);  // acc.maximum = -inf: exp gives 0
#pragma unroll
          for (int u = 0; u < UNROLL; ++u) {
            sum += (expf(v[u].x - maximum) + expf(v[u].y - maximum)) + (expf(v[u].z - maximum) + expf(v[u].w - maximum));
          }
          acc = {maximum, sum};
        }
      }
    } else {
      for (int i = lane; i < num_classes; i += 32) acc = combine(acc, Running{x[i], 1.0f});
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
      const Running other{__shfl_xor_sync(0xffffffffu, acc.maximum, offset), __shfl_xor_sync(0xffffffffu, acc.sum, offset)};
      acc = combine(acc, other);
    }
    if (lane == 0) {
      const long long target = targets[row];
      losses[warp] = target >= 0 && target < num_classes ? acc.maximum + logf(acc.sum) - x[target] : QUIET_NAN;
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    float total = 0.0f;
    for (int w = 0; w < WARPS && blockIdx.x * WARPS + w < batch_size; ++w) total += losses[w];
    partial[blockIdx.x] = total;
  }
}

extern "C" __global__ void __launch_bounds__(1024)
cross_entropy_mean(const float* __restrict__ partial, float* __restrict__ out, int count, int batch_size) {
  __shared__ float sums[1024];
  float total = 0.0f;
  for (int i = threadIdx.x; i < count; i += 1024) total += partial[i];
  sums[threadIdx.x] = total;
  __syncthreads();
  for (int half = 512; half > 0; half /= 2) {
    if (threadIdx.x < half) sums[threadIdx.x] += sums[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[0] = sums[0] / (float)batch_size;
}
