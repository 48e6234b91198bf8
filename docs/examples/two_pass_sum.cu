// Example candidate (CUDA): the sum of N floats in two passes, y[0] = x[0] + ... + x[N-1].
// Pass 1 has at most 4 blocks per SM reduce grid-strided slices into the workspace `partial`;
// pass 2 has one block add the partials. Both kernels share one block-level tree reduction.
//
// @tune BLOCK = 256 in {128, 256, 512, 1024}
// @require BLOCK <= MAX_THREADS_PER_BLOCK
// @workspace partial: float32[min(ceil_div(N, BLOCK), 4 * SM_COUNT)]
// @launch partial_sums<<<min(ceil_div(N, BLOCK), 4 * SM_COUNT), BLOCK, BLOCK * 4>>>(x, partial, N)
// @launch final_sum<<<1, BLOCK, BLOCK * 4>>>(partial, y, min(ceil_div(N, BLOCK), 4 * SM_COUNT))

// Sums `value` over the block; the result is valid in thread 0. BLOCK is a power of two.
__device__ float block_sum(float value) {
  extern __shared__ float scratch[];
  scratch[threadIdx.x] = value;
  __syncthreads();
  for (int stride = BLOCK / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) {
      scratch[threadIdx.x] += scratch[threadIdx.x + stride];
    }
    __syncthreads();
  }
  return scratch[0];
}

extern "C" __global__ void partial_sums(const float* x, float* partial, int n) {
  float sum = 0.0f;
  for (int i = blockIdx.x * BLOCK + threadIdx.x; i < n; i += gridDim.x * BLOCK) {
    sum += x[i];
  }
  const float total = block_sum(sum);
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = total;
  }
}

extern "C" __global__ void final_sum(const float* partial, float* y, int count) {
  float sum = 0.0f;
  for (int i = threadIdx.x; i < count; i += BLOCK) {
    sum += partial[i];
  }
  const float total = block_sum(sum);
  if (threadIdx.x == 0) {
    y[0] = total;
  }
}
