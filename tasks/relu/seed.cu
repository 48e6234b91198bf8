// ReLU seed: each block covers BLOCK * ITEMS consecutive elements in ITEMS coalesced passes, so that
// every thread has several independent loads in flight.
// @tune BLOCK = 256 in {64, 128, 256, 512, 1024}
// @tune ITEMS = 4 in {1, 2, 4, 8, 16}
// @require BLOCK <= MAX_THREADS_PER_BLOCK
// @launch relu<<<ceil_div(N, BLOCK * ITEMS), BLOCK>>>(x, y, N)

extern "C" __global__ void __launch_bounds__(BLOCK) relu(const float* __restrict__ x, float* __restrict__ y, int N) {
  const int base = blockIdx.x * (BLOCK * ITEMS) + threadIdx.x;
#pragma unroll
  for (int item = 0; item < ITEMS; ++item) {
    const int i = base + item * BLOCK;
    if (i < N) {
      y[i] = fmaxf(x[i], 0.0f);
    }
  }
}
