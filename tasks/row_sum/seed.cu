// Row sum seed: one block of BLOCK threads per row. Rows whose length is a multiple of 4 floats start
// 16-byte aligned and are read with 16-byte loads (float4), the others with scalar loads; either way the
// loads of a warp are contiguous. Partial sums are combined with warp shuffles, then the warps' sums
// through shared memory (one barrier).
// @tune BLOCK = 256 in {128, 256, 512, 1024}
// @require BLOCK <= MAX_THREADS_PER_BLOCK
// @launch row_sum<<<M, BLOCK>>>(x, y, K)

__device__ __forceinline__ float warp_sum(float value) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

extern "C" __global__ void __launch_bounds__(BLOCK) row_sum(const float* __restrict__ x, float* __restrict__ y, int K) {
  __shared__ float warp_sums[BLOCK / 32];
  const float* row = x + (long long)blockIdx.x * K;
  float sum = 0.0f;
  if (K % 4 == 0) {
    const float4* vectors = reinterpret_cast<const float4*>(row);
    for (int i = threadIdx.x; i < K / 4; i += BLOCK) {
      const float4 v = vectors[i];
      sum += (v.x + v.y) + (v.z + v.w);
    }
  } else {
    for (int i = threadIdx.x; i < K; i += BLOCK) sum += row[i];
  }
  sum = warp_sum(sum);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = sum;
  __syncthreads();
  if (threadIdx.x < 32) {
    sum = warp_sum(threadIdx.x < BLOCK / 32 ? warp_sums[threadIdx.x] : 0.0f);
    if (threadIdx.x == 0) y[blockIdx.x] = sum;
  }
}
