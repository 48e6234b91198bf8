// Inclusive scan seed: a single pass with decoupled look-back. Each block takes the next tile of
// BLOCK * ITEMS values from a ticket counter (so every tile it waits on belongs to a block that is
// already running). Inside the tile each warp owns a contiguous run of ITEMS / 4 chunks of 128 values;
// a lane reads 4 consecutive values of a chunk with one 16-byte load (int4, 512 contiguous bytes per
// warp and load), and all of a lane's loads are issued before any is used, so many bytes are in flight
// per SM. A chunk is scanned in registers: the lane's 4 values serially, then the lanes' totals with warp
// shuffles, carried from chunk to chunk: no shared-memory staging. The warps' totals meet in shared
// memory (one barrier); the last warp publishes the tile's sum and looks back over the predecessors'
// published sums, a warp-wide window at a time, until it meets an inclusive prefix; it then publishes
// the tile's inclusive prefix and hands each warp its offset (a second barrier). Stores are int4 too.
// The one vector that straddles the end of x is handled value by value (the tile is a multiple of 4
// values, so no vector straddles two tiles).
//
// A tile's state is one 64-bit word, written atomically: the flag in the high half (0 nothing yet,
// 1 the tile's own sum, 2 the inclusive prefix up to and including the tile), the value in the low half.
// The first kernel clears the states and the ticket counter.
// @tune BLOCK = 256 in {128, 256, 512, 1024}
// @tune ITEMS = 32 in {4, 8, 16, 32}
// @require BLOCK <= MAX_THREADS_PER_BLOCK
// @workspace states: int64[ceil_div(N, BLOCK * ITEMS)]
// @workspace ticket: int32[1]
// @launch clear_states<<<ceil_div(ceil_div(N, BLOCK * ITEMS), 256), 256>>>(states, ticket, ceil_div(N, BLOCK * ITEMS))
// @launch scan<<<ceil_div(N, BLOCK * ITEMS), BLOCK>>>(x, y, states, ticket, N)

#define TILE (BLOCK * ITEMS)
#define WARPS (BLOCK / 32)
#define CHUNKS (ITEMS / 4)  // chunks of 128 values per warp

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
  __shared__ int warp_values[WARPS];  // the warps' totals, then their offsets
  __shared__ int tile_index;
  const int tid = threadIdx.x;
  const int warp = tid / 32;
  const int lane = tid % 32;
  if (tid == 0) tile_index = atomicAdd(ticket, 1);
  __syncthreads();
  const int tile = tile_index;
  const long long warp_base = (long long)tile * TILE + (long long)warp * CHUNKS * 128 + lane * 4;

  int4 v[CHUNKS];
#pragma unroll
  for (int j = 0; j < CHUNKS; ++j) {
    const long long i = warp_base + j * 128;
    if (i + 3 < N) {
      v[j] = *reinterpret_cast<const int4*>(x + i);
    } else {
      v[j] = make_int4(i < N ? x[i] : 0, i + 1 < N ? x[i + 1] : 0, i + 2 < N ? x[i + 2] : 0, 0);
    }
  }

  int carry = 0;  // the sum of this warp's earlier chunks
#pragma unroll
  for (int j = 0; j < CHUNKS; ++j) {
    v[j].y += v[j].x;
    v[j].z += v[j].y;
    v[j].w += v[j].z;
    const int inclusive = warp_inclusive_scan(v[j].w);
    const int before = carry + inclusive - v[j].w;
    v[j].x += before;
    v[j].y += before;
    v[j].z += before;
    v[j].w += before;
    carry += __shfl_sync(0xffffffffu, inclusive, 31);
  }
  if (lane == 0) warp_values[warp] = carry;
  __syncthreads();

  // The last warp turns the warps' totals into exclusive offsets, publishes the tile's sum and looks back
  // over 32 predecessors at a time: when all 32 have published, the nearest inclusive prefix among them
  // (the lowest lane) ends the look-back, else all 32 sums are added and the window moves back.
  if (warp == WARPS - 1) {
    const int total = lane < WARPS ? warp_values[lane] : 0;
    const int scanned = warp_inclusive_scan(total);
    const int aggregate = __shfl_sync(0xffffffffu, scanned, 31);
    int prefix = 0;
    if (tile == 0) {
      if (lane == 0) atomicExch(&states[0], pack(2u, aggregate));
    } else {
      if (lane == 0) atomicExch(&states[tile], pack(1u, aggregate));
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
      if (lane == 0) atomicExch(&states[tile], pack(2u, prefix + aggregate));
    }
    if (lane < WARPS) warp_values[lane] = prefix + scanned - total;
  }
  __syncthreads();

  const int offset = warp_values[warp];
#pragma unroll
  for (int j = 0; j < CHUNKS; ++j) {
    const long long i = warp_base + j * 128;
    const int4 out = make_int4(v[j].x + offset, v[j].y + offset, v[j].z + offset, v[j].w + offset);
    if (i + 3 < N) {
      *reinterpret_cast<int4*>(y + i) = out;
    } else {
      if (i < N) y[i] = out.x;
      if (i + 1 < N) y[i + 1] = out.y;
      if (i + 2 < N) y[i + 2] = out.z;
    }
  }
}
