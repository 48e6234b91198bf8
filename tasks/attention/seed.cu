// Fused attention seed (flash attention, float32): a block of BQ threads takes BQ consecutive queries
// of one slice, one query per thread, with the query row and the output accumulator in registers
// (zero-padded to DMAX = 64 columns, so D may be anything up to 64). The keys and values advance in
// tiles of BKV rows staged in shared memory; for each tile a thread computes its BKV scores, rescales
// its running sum and accumulator once if the running maximum grew (online softmax), then adds the
// weighted values. The S x S scores never reach global memory.
// @tune BQ = 64 in {32, 64, 128, 256}
// @tune BKV = 16 in {8, 16, 32}
// @require D <= 64
// @require BQ <= MAX_THREADS_PER_BLOCK
// @launch attention<<<dim3(ceil_div(S, BQ), B), BQ>>>(q, k, v, o, S, D)

// NVRTC has no <math.h>: -infinity from its bits.
#define NEG_INFINITY (-__int_as_float(0x7f800000))

#define DMAX 64

extern "C" __global__ void __launch_bounds__(BQ)
attention(const float* __restrict__ q, const float* __restrict__ k, const float* __restrict__ v,
          float* __restrict__ o, int S, int D) {
  __shared__ __align__(16) float k_tile[BKV][DMAX];
  __shared__ __align__(16) float v_tile[BKV][DMAX];
  const long long slice = (long long)blockIdx.y * S * D;
  const int row = blockIdx.x * BQ + threadIdx.x;
  const bool active = row < S;
  const float scale = 1.0f / sqrtf((float)D);
  float query[DMAX];
  float acc[DMAX];
#pragma unroll
  for (int d = 0; d < DMAX; ++d) {
    query[d] = active && d < D ? q[slice + (long long)row * D + d] * scale : 0.0f;
    acc[d] = 0.0f;
  }
  float running_max = NEG_INFINITY;
  float running_sum = 0.0f;
  for (int j0 = 0; j0 < S; j0 += BKV) {
    for (int i = threadIdx.x; i < BKV * DMAX; i += BQ) {
      const int r = i / DMAX;
      const int d = i % DMAX;
      const bool inside = j0 + r < S && d < D;
      k_tile[r][d] = inside ? k[slice + (long long)(j0 + r) * D + d] : 0.0f;
      v_tile[r][d] = inside ? v[slice + (long long)(j0 + r) * D + d] : 0.0f;
    }
    __syncthreads();
    float scores[BKV];
    float tile_max = NEG_INFINITY;
#pragma unroll
    for (int r = 0; r < BKV; ++r) {
      float dot = 0.0f;
#pragma unroll
      for (int d = 0; d < DMAX; d += 4) {
        const float4 key = *reinterpret_cast<const float4*>(&k_tile[r][d]);
        dot += query[d] * key.x + query[d + 1] * key.y + query[d + 2] * key.z + query[d + 3] * key.w;
      }
      scores[r] = j0 + r < S ? dot : NEG_INFINITY;
      tile_max = fmaxf(tile_max, scores[r]);
    }
    // The tile has at least one key, so new_max is finite; the first tile's correction is exp(-inf) = 0.
    const float new_max = fmaxf(running_max, tile_max);
    const float correction = expf(running_max - new_max);
    running_sum *= correction;
#pragma unroll
    for (int d = 0; d < DMAX; ++d) acc[d] *= correction;
#pragma unroll
    for (int r = 0; r < BKV; ++r) {
      const float p = expf(scores[r] - new_max);
      running_sum += p;
#pragma unroll
      for (int d = 0; d < DMAX; d += 4) {
        const float4 value = *reinterpret_cast<const float4*>(&v_tile[r][d]);
        acc[d] += p * value.x;
        acc[d + 1] += p * value.y;
        acc[d + 2] += p * value.z;
        acc[d + 3] += p * value.w;
      }
    }
    running_max = new_max;
    __syncthreads();
  }
  if (active) {
    const float inverse = 1.0f / running_sum;
#pragma unroll
    for (int d = 0; d < DMAX; ++d) {
      if (d < D) o[slice + (long long)row * D + d] = acc[d] * inverse;
    }
  }
}
