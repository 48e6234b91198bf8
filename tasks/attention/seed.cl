// Fused attention seed (flash attention, float32): a work-group of BQ work-items takes BQ consecutive
// queries of one slice, one query per work-item, with the query row and the output accumulator in
// private memory (zero-padded to DMAX = 64 columns, so D may be anything up to 64). The keys and values
// advance in tiles of BKV rows staged in local memory; for each tile a work-item computes its BKV
// scores, rescales its running sum and accumulator once if the running maximum grew (online softmax),
// then adds the weighted values.
// @tune BQ = 32 in {8, 16, 32, 64}
// @tune BKV = 16 in {4, 8, 16, 32}
// @require D <= 64
// @require BQ <= MAX_THREADS_PER_BLOCK
// @launch attention<<<dim3(ceil_div(S, BQ), B), BQ>>>(q, k, v, o, S, D)

#define DMAX 64

__kernel __attribute__((reqd_work_group_size(BQ, 1, 1)))
void attention(__global const float* restrict q, __global const float* restrict k, __global const float* restrict v,
               __global float* restrict o, int S, int D) {
  __local float k_tile[BKV][DMAX];
  __local float v_tile[BKV][DMAX];
  const int lid = get_local_id(0);
  const long slice = (long)get_group_id(1) * S * D;
  const int row = get_group_id(0) * BQ + lid;
  const bool active = row < S;
  const float scale = 1.0f / sqrt((float)D);
  float query[DMAX];
  float acc[DMAX];
  for (int d = 0; d < DMAX; ++d) {
    query[d] = active && d < D ? q[slice + (long)row * D + d] * scale : 0.0f;
    acc[d] = 0.0f;
  }
  float running_max = -INFINITY;
  float running_sum = 0.0f;
  for (int j0 = 0; j0 < S; j0 += BKV) {
    for (int i = lid; i < BKV * DMAX; i += BQ) {
      const int r = i / DMAX;
      const int d = i % DMAX;
      const bool inside = j0 + r < S && d < D;
      k_tile[r][d] = inside ? k[slice + (long)(j0 + r) * D + d] : 0.0f;
      v_tile[r][d] = inside ? v[slice + (long)(j0 + r) * D + d] : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    float scores[BKV];
    float tile_max = -INFINITY;
    for (int r = 0; r < BKV; ++r) {
      float dot = 0.0f;
      for (int d = 0; d < DMAX; ++d) dot += query[d] * k_tile[r][d];
      scores[r] = j0 + r < S ? dot : -INFINITY;
      tile_max = fmax(tile_max, scores[r]);
    }
    // The tile has at least one key, so new_max is finite; the first tile's correction is exp(-inf) = 0.
    const float new_max = fmax(running_max, tile_max);
    const float correction = exp(running_max - new_max);
    running_sum *= correction;
    for (int d = 0; d < DMAX; ++d) acc[d] *= correction;
    for (int r = 0; r < BKV; ++r) {
      const float p = exp(scores[r] - new_max);
      running_sum += p;
      for (int d = 0; d < DMAX; ++d) acc[d] += p * v_tile[r][d];
    }
    running_max = new_max;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (active) {
    const float inverse = 1.0f / running_sum;
    for (int d = 0; d < D; ++d) o[slice + (long)row * D + d] = acc[d] * inverse;
  }
}
