// Inclusive scan seed, reduce then scan: the first kernel sums each tile of BLOCK * ITEMS values; the
// second (one work-group) turns the tile sums into exclusive offsets; the third scans each tile in
// local memory from its offset. x is read twice; the work-groups never wait on each other.
// @tune BLOCK = 128 in {32, 64, 128, 256}
// @tune ITEMS = 4 in {1, 2, 4, 8, 16}
// @require BLOCK <= MAX_THREADS_PER_BLOCK
// @workspace tile_offsets: int32[ceil_div(N, BLOCK * ITEMS)]
// @launch tile_sums<<<ceil_div(N, BLOCK * ITEMS), BLOCK>>>(x, tile_offsets, N)
// @launch scan_offsets<<<1, BLOCK>>>(tile_offsets, ceil_div(N, BLOCK * ITEMS))
// @launch scan_tiles<<<ceil_div(N, BLOCK * ITEMS), BLOCK>>>(x, tile_offsets, y, N)

#define TILE (BLOCK * ITEMS)

// Inclusive scan of one value per work-item (Hillis-Steele in local memory); returns this work-item's.
int group_inclusive_scan(int value, __local int* scratch) {
  const int lid = get_local_id(0);
  scratch[lid] = value;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int offset = 1; offset < BLOCK; offset *= 2) {
    const int other = lid >= offset ? scratch[lid - offset] : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    scratch[lid] += other;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const int result = scratch[lid];
  barrier(CLK_LOCAL_MEM_FENCE);
  return result;
}

__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void tile_sums(__global const int* restrict x, __global int* restrict tile_offsets, int N) {
  __local int scratch[BLOCK];
  const long base = (long)get_group_id(0) * TILE;
  int sum = 0;
  for (int j = 0; j < ITEMS; ++j) {
    const long i = base + j * BLOCK + get_local_id(0);
    if (i < N) sum += x[i];
  }
  const int total = group_inclusive_scan(sum, scratch);
  if (get_local_id(0) == BLOCK - 1) tile_offsets[get_group_id(0)] = total;
}

// Replaces each tile's sum by the sum of the tiles before it, BLOCK tiles per step.
__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void scan_offsets(__global int* tile_offsets, int tiles) {
  __local int scratch[BLOCK];
  __local int carry;
  const int lid = get_local_id(0);
  if (lid == 0) carry = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int start = 0; start < tiles; start += BLOCK) {
    const int i = start + lid;
    const int sum = i < tiles ? tile_offsets[i] : 0;
    const int inclusive = group_inclusive_scan(sum, scratch);
    const int before = carry;
    if (i < tiles) tile_offsets[i] = before + inclusive - sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == BLOCK - 1) carry = before + inclusive;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}

__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void scan_tiles(__global const int* restrict x, __global const int* restrict tile_offsets, __global int* restrict y,
                int N) {
  __local int staged[TILE];
  __local int scratch[BLOCK];
  const int lid = get_local_id(0);
  const long base = (long)get_group_id(0) * TILE;
  for (int j = 0; j < ITEMS; ++j) {
    const int i = j * BLOCK + lid;
    staged[i] = base + i < N ? x[base + i] : 0;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  // ITEMS consecutive values per work-item, scanned in private memory.
  int values[ITEMS];
  int running = 0;
  for (int j = 0; j < ITEMS; ++j) {
    running += staged[lid * ITEMS + j];
    values[j] = running;
  }
  const int inclusive = group_inclusive_scan(running, scratch);
  const int offset = tile_offsets[get_group_id(0)] + inclusive - running;
  for (int j = 0; j < ITEMS; ++j) staged[lid * ITEMS + j] = values[j] + offset;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int j = 0; j < ITEMS; ++j) {
    const int i = j * BLOCK + lid;
    if (base + i < N) y[base + i] = staged[i];
  }
}
