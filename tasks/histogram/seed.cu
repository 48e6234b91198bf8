// Histogram seed: a fixed grid of SM_COUNT * WAVES blocks walks the input with a grid-stride loop and
// VEC-wide loads. Each block counts into COPIES private copies of the 1024 bins in shared memory (warp w
// uses copy w % COPIES, which spreads the contention of shared atomics), then adds its copies into the
// global bins with one atomic per non-zero bin. The first kernel zeroes the global bins.
// @tune BLOCK = 512 in {128, 256, 512, 1024}
// @tune WAVES = 4 in {1, 2, 4, 8, 16}
// @tune COPIES = 2 in {1, 2, 4, 8}
// @tune VEC = 4 in {1, 2, 4}
// @require BLOCK <= MAX_THREADS_PER_BLOCK
// @require COPIES * 1024 * 4 <= SMEM_PER_BLOCK
// @require COPIES <= BLOCK / 32
// @launch zero_counts<<<4, 256>>>(counts)
// @launch histogram<<<max(1, min(SM_COUNT * WAVES, ceil_div(N, BLOCK * VEC))), BLOCK>>>(x, counts, N)

template <int W> struct Vector;
template <> struct Vector<1> { using type = int; };
template <> struct Vector<2> { using type = int2; };
template <> struct Vector<4> { using type = int4; };

extern "C" __global__ void zero_counts(int* counts) {
  const int bin = blockIdx.x * blockDim.x + threadIdx.x;
  if (bin < 1024) counts[bin] = 0;
}

extern "C" __global__ void __launch_bounds__(BLOCK) histogram(const int* __restrict__ x, int* __restrict__ counts, int N) {
  using V = typename Vector<VEC>::type;
  __shared__ int bins[COPIES][1024];
  for (int i = threadIdx.x; i < COPIES * 1024; i += BLOCK) (&bins[0][0])[i] = 0;
  __syncthreads();
  int* mine = bins[(threadIdx.x / 32) % COPIES];
  const int vectors = N / VEC;
  const int stride = gridDim.x * BLOCK;
  for (int v = blockIdx.x * BLOCK + threadIdx.x; v < vectors; v += stride) {
    const V values = reinterpret_cast<const V*>(x)[v];
    const int* lanes = reinterpret_cast<const int*>(&values);
#pragma unroll
    for (int lane = 0; lane < VEC; ++lane) atomicAdd(&mine[lanes[lane]], 1);
  }
  // The last N % VEC values.
  for (int i = vectors * VEC + blockIdx.x * BLOCK + threadIdx.x; i < N; i += stride) atomicAdd(&mine[x[i]], 1);
  __syncthreads();
  for (int bin = threadIdx.x; bin < 1024; bin += BLOCK) {
    int total = 0;
#pragma unroll
    for (int copy = 0; copy < COPIES; ++copy) total += bins[copy][bin];
    if (total != 0) atomicAdd(&counts[bin], total);
  }
}
