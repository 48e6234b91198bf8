// Histogram seed: GROUPS work-groups walk the input with a grid-stride loop. Each work-group counts into
// its own copy of the 1024 bins in local memory with local atomics, then adds it into the global bins
// with one atomic per non-zero bin. The first kernel zeroes the global bins.
// @tune BLOCK = 256 in {64, 128, 256, 512}
// @tune GROUPS = 32 in {4, 8, 16, 32, 64, 128}
// @require BLOCK <= MAX_THREADS_PER_BLOCK
// @launch zero_counts<<<4, 256>>>(counts)
// @launch histogram<<<max(1, min(GROUPS, ceil_div(N, BLOCK))), BLOCK>>>(x, counts, N)

__kernel void zero_counts(__global int* counts) {
  const int bin = get_global_id(0);
  if (bin < 1024) counts[bin] = 0;
}

__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void histogram(__global const int* restrict x, __global int* restrict counts, int N) {
  __local int bins[1024];
  const int lid = get_local_id(0);
  for (int bin = lid; bin < 1024; bin += BLOCK) bins[bin] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  const int stride = get_num_groups(0) * BLOCK;
  for (int i = get_group_id(0) * BLOCK + lid; i < N; i += stride) atomic_inc(&bins[x[i]]);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int bin = lid; bin < 1024; bin += BLOCK) {
    if (bins[bin] != 0) atomic_add(&counts[bin], bins[bin]);
  }
}
