// Histogram seed: a fixed grid of SM_COUNT * WAVES blocks walks the input with a grid-stride loop of
// 16-byte loads (int4), UNROLL of them issued back to back before their values are counted, so that
// enough bytes are in flight per SM while the shared-memory atomics run. Each block counts into COPIES
// private copies of the 1024 bins in shared memory (warp w uses copy w % COPIES, which spreads the
// contention of shared atomics), then adds its copies into the global bins with one atomic per
// non-zero bin. The first kernel zeroes the global bins.
// @tune BLOCK = 1024 in {256, 512, 1024}
// @tune WAVES = 1 in {1, 2, 4, 8}
// @tune COPIES = 2 in {1, 2, 4, 8}
// @tune UNROLL = 4 in {1, 2, 4, 8}
// @require BLOCK <= MAX_THREADS_PER_BLOCK
// @require COPIES * 1024 * 4 <= SMEM_PER_BLOCK
// @require COPIES <= BLOCK / 32
// @launch zero_counts<<<4, 256>>>(counts)
// @launch histogram<<<max(1, min(SM_COUNT * WAVES, ceil_div(N, BLOCK * 4 * UNROLL))), BLOCK>>>(x, counts, N)

extern "C" __global__ void zero_counts(int* counts) {
  const int bin = blockIdx.x * blockDim.x + threadIdx.x;
  if (bin < 1024) counts[bin] = 0;
}

extern "C" __global__ void __launch_bounds__(BLOCK) histogram(const int* __restrict__ x, int* __restrict__ counts, int N) {
  __shared__ int bins[COPIES][1024];
  for (int i = threadIdx.x; i < COPIES * 1024; i += BLOCK) (&bins[0][0])[i] = 0;
  __syncthreads();
  int* mine = bins[(threadIdx.x / 32) % COPIES];
  const int vectors = N / 4;
  const int4* x4 = reinterpret_cast<const int4*>(x);
  const int stride = gridDim.x * BLOCK;
  int v = blockIdx.x * BLOCK + threadIdx.x;
  // Full batches: UNROLL vectors per thread, all in range.
  for (; v + (UNROLL - 1) * stride < vectors; v += UNROLL * stride) {
    int4 loaded[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) loaded[u] = x4[v + u * stride];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      atomicAdd(&mine[loaded[u].x], 1);
      atomicAdd(&mine[loaded[u].y], 1);
      atomicAdd(&mine[loaded[u].z], 1);
      atomicAdd(&mine[loaded[u].w], 1);
    }
  }
  for (; v < vectors; v += stride) {
    const int4 loaded = x4[v];
    atomicAdd(&mine[loaded.x], 1);
    atomicAdd(&mine[loaded.y], 1);
    atomicAdd(&mine[loaded.z], 1);
    atomicAdd(&mine[loaded.w], 1);
  }
  // The last N % 4 values.
  const int tail = vectors * 4 + blockIdx.x * BLOCK + threadIdx.x;
  if (tail < N) atomicAdd(&mine[x[tail]], 1);
  __syncthreads();
  for (int bin = threadIdx.x; bin < 1024; bin += BLOCK) {
    int total = 0;
#pragma unroll
    for (int copy = 0; copy < COPIES; ++copy) total += bins[copy][bin];
    if (total != 0) atomicAdd(&counts[bin], total);
  }
}
