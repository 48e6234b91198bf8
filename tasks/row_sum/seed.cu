// Row sum seed: one block of BLOCK threads per row. The threads read the row with coalesced strided
// loads, then combine their partial sums with a tree reduction in shared memory.
// @tune BLOCK = 256 in {32, 64, 128, 256, 512, 1024}
// @require BLOCK <= MAX_THREADS_PER_BLOCK
// @launch row_sum<<<M, BLOCK>>>(x, y, K)

extern "C" __global__ void __launch_bounds__(BLOCK) row_sum(const float* __restrict__ x, float* __restrict__ y, int K) {
  __shared__ float partial[BLOCK];
  const float* row = x + (size_t)blockIdx.x * K;
  float sum = 0.0f;
  for (int k = threadIdx.x; k < K; k += BLOCK) {
    sum += row[k];
  }
  partial[threadIdx.x] = sum;
  __syncthreads();
  // BLOCK is a power of two: halve the active threads each step.
  for (int stride = BLOCK / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) {
      partial[threadIdx.x] += partial[threadIdx.x + stride];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    y[blockIdx.x] = partial[0];
  }
}
