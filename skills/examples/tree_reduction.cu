// One block per output row: threads stride over the row, then combine their sums with warp shuffles
// (no shared memory, no barrier inside a warp) and once across warps through shared memory.
extern "C" __global__ void row_sum(const float* __restrict__ x, float* __restrict__ y, int cols) {
  __shared__ float warp_sums[32];
  const float* row = x + (long long)blockIdx.x * cols;
  float sum = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) sum += row[c];
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = sum;
  __syncthreads();
  if (threadIdx.x < 32) {
    sum = threadIdx.x < blockDim.x / 32 ? warp_sums[threadIdx.x] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if (threadIdx.x == 0) y[blockIdx.x] = sum;
  }
}
