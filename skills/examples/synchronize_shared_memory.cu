// A barrier between writing shared memory and reading what other threads wrote, in every round.
extern "C" __global__ void block_sum(const float* __restrict__ x, float* __restrict__ sums, int n) {
  __shared__ float partial[256];  // launched with 256 threads per block
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  partial[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();  // outside the if: every thread of the block reaches it
  }
  if (threadIdx.x == 0) sums[blockIdx.x] = partial[0];
}
