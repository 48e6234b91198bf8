// Inclusive scan seed: a single pass with decoupled look-back. Each block takes the next tile of
// BLOCK * ITEMS values from a ticket counter (so every tile it waits on belongs to a block that is
// already running), scans the tile in shared memory and registers, publishes its tile's sum, and looks
// back over the predecessors' published sums, a warp-wide window at a time, until it meets an
// inclusive prefix; then it publishes its own inclusive prefix and writes its tile. x is read once and
// y written once, both with 16-byte vectors (int4; the tile is a multiple of 4 values, so vectors
// never straddle tiles; the one vector that straddles the end of x is handled value by value): a
// thread's ITEMS / 4 loads are issued back to back, so many bytes are in flight per SM.
//
// A tile's state is one 64-bit word, written atomically: the flag in the high half (0 nothing yet,
// 1 the tile's own sum, 2 the inclusive prefix up to and including the tile), the value in the low half.
// The first kernel clears the states and the ticket counter.
// @tune BLOCK = 256 in {128, 256, 512}
// @tune ITEMS = 16 in {4, 8, 16, 32}
// @require BLOCK <= MAX_THREADS_PER_BLOCK
// @require BLOCK * ITEMS * 4 <= 32768
// @workspace states: int64[ceil_div(N, BLOCK * ITEMS)]
// @workspace ticket: int32[1]
// @launch clear_states<<<ceil_div(ceil_div(N, BLOCK * ITEMS), 256), 256>>>(states, ticket, ceil_div(N, BLOCK * ITEMS))
// @launch scan<<<ceil_div(N, BLOCK * ITEMS), BLOCK>>>(x, y, states, ticket, N)

#define TILE (BLOCK * ITEMS)
#define WARPS (BLOCK / 32)

extern "C" __global__ void clear_states(unsigned long long* states, int* ticket, int tiles) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < tiles) states[i] = 0ull;
  if (i == 0) *ticket = 0;
}

__device__ __forceinline__ unsigned long long pack(unsigned flag, int value) {
  return ((unsigned long long)flag << 32) | (unsigned)value;
}

__device__ __forceinline__ int warp_inclusive_scan(int value) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int offset = 1; offset < 32; offset *= 2) {
    const int other = __shfl_up_sync(0xffffffffu, value, offset);
    if (lane >= offset) value += other;
  }
  return value;
}

extern "C" __global__ void __launch_bounds__(BLOCK)
scan(const int* __restrict__ x, int* __restrict__ y, unsigned long long* states, int* ticket, int N) {
  // One padding slot per 32 values keeps the blocked reads (ITEMS consecutive values per thread) free
  // of bank conflicts.
  __shared__ int staged[TILE + TILE / 32];
  __shared__ int warp_totals[WARPS];
  __shared__ int tile_prefix;
  __shared__ int tile_index;
  const int tid = threadIdx.x;
  if (tid == 0) tile_index = atomicAdd(ticket, 1);
  __syncthreads();
  const int tile = tile_index;
  const long long base = (long long)tile * TILE;

  // Coalesced 16-byte loads into shared memory (zeros past the end), then ITEMS consecutive values per
  // thread.
  const int4* x4 = reinterpret_cast<const int4*>(x + base);
  int4 loaded[ITEMS / 4];
#pragma unroll
  for (int j = 0; j < ITEMS / 4; ++j) {
    const int q = j * BLOCK + tid;  // vector within the tile
    if (base + 4 * q + 3 < N) {
      loaded[j] = x4[q];
    } else {
      const long long i = base + 4 * q;
      loaded[j] = make_int4(i < N ? x[i] : 0, i + 1 < N ? x[i + 1] : 0, i + 2 < N ? x[i + 2] : 0, 0);
    }
  }
#pragma unroll
  for (int j = 0; j < ITEMS / 4; ++j) {
    const int i = 4 * (j * BLOCK + tid);
    staged[i + i / 32] = loaded[j].x;
    staged[i + 1 + (i + 1) / 32] = loaded[j].y;
    staged[i + 2 + (i + 2) / 32] = loaded[j].z;
    staged[i + 3 + (i + 3) / 32] = loaded[j].w;
  }
  __syncthreads();
  int values[ITEMS];
  int running = 0;
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const int i = tid * ITEMS + j;
    running += staged[i + i / 32];
    values[j] = running;
  }

  // Exclusive scan of the threads' totals across the block.
  const int warp = tid / 32;
  const int lane = tid % 32;
  const int inclusive = warp_inclusive_scan(running);
  if (lane == 31) warp_totals[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    const int total = lane < WARPS ? warp_totals[lane] : 0;
    const int scanned = warp_inclusive_scan(total);
    if (lane < WARPS) warp_totals[lane] = scanned - total;  // exclusive
  }
  __syncthreads();
  const int thread_prefix = warp_totals[warp] + inclusive - running;

  // The tile's sum is the last thread's inclusive value. The last warp publishes it and looks back
  // over 32 predecessors at a time: when all 32 have published, the nearest inclusive prefix among them
  // (the lowest lane) ends the look-back, else all 32 sums are added and the window moves back.
  if (warp == WARPS - 1) {
    const int aggregate = __shfl_sync(0xffffffffu, thread_prefix + running, 31);
    int prefix = 0;
    if (tile == 0) {
      if (lane == 31) atomicExch(&states[0], pack(2u, aggregate));
    } else {
      if (lane == 31) atomicExch(&states[tile], pack(1u, aggregate));
      int nearest = tile - 1;  // the predecessor lane 0 reads
      while (true) {
        const int predecessor = nearest - lane;
        // Before tile 0 there is nothing: an inclusive prefix of 0 (tile 0's lane ends the window first).
        const unsigned long long state =
            predecessor >= 0 ? *reinterpret_cast<volatile unsigned long long*>(&states[predecessor]) : pack(2u, 0);
        const unsigned flag = (unsigned)(state >> 32);
        if (__any_sync(0xffffffffu, flag == 0u)) continue;  // one is not published yet: read the window again
        const unsigned inclusive = __ballot_sync(0xffffffffu, flag == 2u);
        const int last = inclusive != 0u ? __ffs(inclusive) - 1 : 31;
        int value = lane <= last ? (int)(unsigned)(state & 0xffffffffull) : 0;
#pragma unroll
        for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
        prefix += value;
        if (inclusive != 0u) break;
        nearest -= 32;
      }
      if (lane == 31) atomicExch(&states[tile], pack(2u, prefix + aggregate));
    }
    if (lane == 31) tile_prefix = prefix;
  }
  __syncthreads();

  const int offset = tile_prefix + thread_prefix;
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const int i = tid * ITEMS + j;
    staged[i + i / 32] = values[j] + offset;
  }
  __syncthreads();
  int4* y4 = reinterpret_cast<int4*>(y + base);
#pragma unroll
  for (int j = 0; j < ITEMS / 4; ++j) {
    const int i = 4 * (j * BLOCK + tid);
    const int4 out = make_int4(staged[i + i / 32], staged[i + 1 + (i + 1) / 32], staged[i + 2 + (i + 2) / 32],
                               staged[i + 3 + (i + 3) / 32]);
    if (base + i + 3 < N) {
      y4[i / 4] = out;
    } else {
      if (base + i < N) y[base + i] = out.x;
      if (base + i + 1 < N) y[base + i + 1] = out.y;
      if (base + i + 2 < N) y[base + i + 2] = out.z;
    }
  }
}
