// Fused attention seed on tensor cores, float32 accuracy (flash attention, 3xTF32). A block of WARPS warps
// takes 16 * WARPS consecutive queries of one slice, 16 per warp; the keys and values advance in tiles of BKV
// rows, copied by cp.async into a double-buffered ring in shared memory (zero-padded to DMAX = 64 columns and
// beyond S, so that D may be anything up to 64 and S anything). For each tile a warp computes its 16 x BKV
// scores with mma.sync.m16n8k8 (TF32), updates the online softmax (running maximum and sum per query row;
// the accumulator is rescaled once per tile), and multiplies the probabilities by the value tile, again with
// mma.sync. The S x S scores never leave registers.
//
// Accuracy: TF32 keeps 11 significant bits, too few for the tolerance; each operand x is split into
// big = tf32(x) and small = tf32(x - big), and a product is taken as big*big + big*small + small*big
// (the dropped small*small and the pair's rounding are about 2^-22 of each product). Each tile's values
// product is accumulated from zero and added into the output accumulator on the CUDA cores, so that the
// tensor cores' truncating accumulation spans 3 * BKV / 8 instructions, not the whole sequence.
// The scores are kept in base 2 (the query is scaled by log2(e) / sqrt(D)), so exp2 gives the exponentials.
//
// Fragments: the scores' accumulator gives thread (group g = lane / 4, t = lane % 4) the keys 2t and 2t + 1
// of each 8-key slice, rows g and g + 8; the probabilities are fed back as the next product's A operand,
// whose k index t must then stand for key 2t and k index t + 4 for key 2t + 1: the value rows are read in
// that order, so no value moves between threads. Shared rows are padded to DMAX + 4 values, which keeps every
// fragment read free of bank conflicts. mma.sync runs on sm_80 and later, so one path serves every target.
// @tune WARPS = 8 in {2, 4, 8}
// @tune BKV = 64 in {32, 64}
// @require D <= 64
// @require 32 * WARPS <= MAX_THREADS_PER_BLOCK
// @require 2 * 2 * BKV * 68 * 4 <= SMEM_PER_BLOCK_OPTIN
// @launch attention<<<dim3(ceil_div(S, 16 * WARPS), B), 32 * WARPS, 2 * 2 * BKV * 68 * 4>>>(q, k, v, o, S, D)

#define DMAX 64
#define ROW (DMAX + 4)  // floats per shared row (see above: conflict-free fragment reads)
#define THREADS (32 * WARPS)
#define BQ (16 * WARPS)
#define STAGE_FLOATS (2 * BKV * ROW)  // one stage: the key tile, then the value tile

// NVRTC has no <math.h>: -infinity from its bits.
#define NEG_INFINITY (-__int_as_float(0x7f800000))

// x rounded to TF32 (to nearest, ties away from zero): the low 13 mantissa bits become zero.
__device__ __forceinline__ float to_tf32(float x) {
  unsigned bits;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(bits) : "f"(x));
  return __uint_as_float(bits);
}

// x = big + small, both TF32 (as the bit patterns mma.sync takes).
__device__ __forceinline__ void split(float x, unsigned& big, unsigned& small) {
  const float b = to_tf32(x);
  big = __float_as_uint(b);
  small = __float_as_uint(to_tf32(x - b));
}

__device__ __forceinline__ void mma_1688(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// c += a b in float32 accuracy from the split operands (small products first: they are the smallest terms).
__device__ __forceinline__ void mma_3xtf32(float (&c)[4], const unsigned (&a_big)[4], const unsigned (&a_small)[4],
                                           float b0, float b1) {
  unsigned b0_big, b0_small, b1_big, b1_small;
  split(b0, b0_big, b0_small);
  split(b1, b1_big, b1_small);
  mma_1688(c, a_small, b0_big, b1_big);
  mma_1688(c, a_big, b0_small, b1_small);
  mma_1688(c, a_big, b0_big, b1_big);
}

// Rows j0 .. j0 + BKV - 1 of a (S x D) slice into a BKV x ROW shared tile: columns beyond D and rows beyond S
// read as zeros (cp.async's source size 0). Rows are 16-byte aligned when D % 4 == 0: 16-byte copies;
// otherwise value by value.
__device__ __forceinline__ void load_tile(float* tile, const float* __restrict__ source, int j0, int S, int D) {
  const unsigned base = (unsigned)__cvta_generic_to_shared(tile);
  if (D % 4 == 0) {
    for (int c = threadIdx.x; c < BKV * DMAX / 4; c += THREADS) {
      const int r = c / (DMAX / 4), d = c % (DMAX / 4) * 4;
      const bool inside = j0 + r < S && d < D;
      const float* from = inside ? source + (long long)(j0 + r) * D + d : source;
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(base + 4 * (r * ROW + d)), "l"(from),
                   "r"(inside ? 16 : 0));
    }
  } else {
    for (int c = threadIdx.x; c < BKV * DMAX; c += THREADS) {
      const int r = c / DMAX, d = c % DMAX;
      const bool inside = j0 + r < S && d < D;
      const float* from = inside ? source + (long long)(j0 + r) * D + d : source;
      asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(base + 4 * (r * ROW + d)), "l"(from),
                   "r"(inside ? 4 : 0));
    }
  }
}

template <int SLICES>
__device__ __forceinline__ void clear(float (&fragments)[SLICES][4]) {
#pragma unroll
  for (int i = 0; i < SLICES; ++i) {
#pragma unroll
    for (int e = 0; e < 4; ++e) fragments[i][e] = 0.0f;
  }
}

__device__ __forceinline__ void load_stage(float* stage, const float* __restrict__ k, const float* __restrict__ v,
                                           int j0, int S, int D) {
  load_tile(stage, k, j0, S, D);
  load_tile(stage + BKV * ROW, v, j0, S, D);
  asm volatile("cp.async.commit_group;\n" ::);
}

extern "C" __global__ void __launch_bounds__(THREADS)
attention(const float* __restrict__ q, const float* __restrict__ k, const float* __restrict__ v,
          float* __restrict__ o, int S, int D) {
  extern __shared__ __align__(16) float tiles[];  // [2 stages][key tile, value tile][BKV][ROW]
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  const long long slice = (long long)blockIdx.y * S * D;
  const float* __restrict__ q_slice = q + slice;
  const float* __restrict__ k_slice = k + slice;
  const float* __restrict__ v_slice = v + slice;
  const int row0 = blockIdx.x * BQ + warp * 16;  // the warp's first query
  const int tile_count = (S + BKV - 1) / BKV;

  load_stage(tiles, k_slice, v_slice, 0, S, D);

  // The warp's 16 queries as A fragments, scaled and split once: fragment ks holds columns 8 ks .. 8 ks + 7,
  // value e at row g + 8 (e % 2), column t + 4 (e / 2). Rows beyond S and columns beyond D are zeros.
  const float scale = 1.4426950408889634f / sqrtf((float)D);
  unsigned q_big[DMAX / 8][4], q_small[DMAX / 8][4];
#pragma unroll
  for (int ks = 0; ks < DMAX / 8; ++ks) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int row = row0 + g + 8 * (e & 1), d = ks * 8 + t + 4 * (e >> 1);
      const float x = row < S && d < D ? q_slice[(long long)row * D + d] * scale : 0.0f;
      split(x, q_big[ks][e], q_small[ks][e]);
    }
  }

  float out[DMAX / 8][4];  // the output accumulator: value e of slice nt at row g + 8 (e / 2), column 8 nt + 2t + e % 2
  clear(out);
  float running_max[2] = {NEG_INFINITY, NEG_INFINITY};  // rows g and g + 8
  float running_sum[2] = {0.0f, 0.0f};                  // this thread's share; the quad's four add up at the end

  for (int j = 0; j < tile_count; ++j) {
    const int j0 = j * BKV;
    if (j + 1 < tile_count) {
      load_stage(tiles + ((j + 1) & 1) * STAGE_FLOATS, k_slice, v_slice, j0 + BKV, S, D);
      asm volatile("cp.async.wait_group 1;\n" ::);
    } else {
      asm volatile("cp.async.wait_group 0;\n" ::);
    }
    __syncthreads();
    const float* key_tile = tiles + (j & 1) * STAGE_FLOATS;
    const float* value_tile = key_tile + BKV * ROW;

    // Scores: slice nt holds keys j0 + 8 nt .. + 7 (the B operand: key 8 nt + g, columns 8 ks + t and + 4).
    float scores[BKV / 8][4];
    clear(scores);
#pragma unroll
    for (int nt = 0; nt < BKV / 8; ++nt) {
#pragma unroll
      for (int ks = 0; ks < DMAX / 8; ++ks) {
        const float* key = key_tile + (nt * 8 + g) * ROW + ks * 8 + t;
        mma_3xtf32(scores[nt], q_big[ks], q_small[ks], key[0], key[4]);
      }
    }
    if (j0 + BKV > S) {  // the last tile may reach beyond S: those keys get no weight
#pragma unroll
      for (int nt = 0; nt < BKV / 8; ++nt) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          if (j0 + nt * 8 + 2 * t + (e & 1) >= S) scores[nt][e] = NEG_INFINITY;
        }
      }
    }

    // Online softmax, per row: the quad (t = 0..3) shares the row, so the maximum goes round it. Every tile has
    // a key below S, so the new maximum is finite; the first tile's correction is exp2(-inf) = 0.
    float correction[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float tile_max = NEG_INFINITY;
#pragma unroll
      for (int nt = 0; nt < BKV / 8; ++nt) tile_max = fmaxf(tile_max, fmaxf(scores[nt][2 * h], scores[nt][2 * h + 1]));
      tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
      tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 2));
      const float new_max = fmaxf(running_max[h], tile_max);
      correction[h] = exp2f(running_max[h] - new_max);
      running_max[h] = new_max;
      running_sum[h] *= correction[h];
    }
#pragma unroll
    for (int nt = 0; nt < BKV / 8; ++nt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        scores[nt][e] = exp2f(scores[nt][e] - running_max[e >> 1]);
        running_sum[e >> 1] += scores[nt][e];
      }
    }

    // Values: k step ks covers keys j0 + 8 ks .. + 7, its index t standing for key 2t and t + 4 for key 2t + 1
    // (see above), so the probabilities are the A fragment as they lie: {p[0], p[2], p[1], p[3]}.
    float tile_out[DMAX / 8][4];
    clear(tile_out);
#pragma unroll
    for (int ks = 0; ks < BKV / 8; ++ks) {
      unsigned p_big[4], p_small[4];
      split(scores[ks][0], p_big[0], p_small[0]);
      split(scores[ks][2], p_big[1], p_small[1]);
      split(scores[ks][1], p_big[2], p_small[2]);
      split(scores[ks][3], p_big[3], p_small[3]);
#pragma unroll
      for (int nt = 0; nt < DMAX / 8; ++nt) {
        const float* value = value_tile + (ks * 8 + 2 * t) * ROW + nt * 8 + g;
        mma_3xtf32(tile_out[nt], p_big, p_small, value[0], value[ROW]);
      }
    }
#pragma unroll
    for (int nt = 0; nt < DMAX / 8; ++nt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) out[nt][e] = out[nt][e] * correction[e >> 1] + tile_out[nt][e];
    }
    __syncthreads();  // the stage is refilled next iteration
  }

#pragma unroll
  for (int h = 0; h < 2; ++h) {
    running_sum[h] += __shfl_xor_sync(0xffffffffu, running_sum[h], 1);
    running_sum[h] += __shfl_xor_sync(0xffffffffu, running_sum[h], 2);
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = row0 + g + 8 * h;
    if (row >= S) continue;
    const float inverse = 1.0f / running_sum[h];
    float* out_row = o + slice + (long long)row * D;
#pragma unroll
    for (int nt = 0; nt < DMAX / 8; ++nt) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int d = nt * 8 + 2 * t + e;
        if (d < D) out_row[d] = out[nt][2 * h + e] * inverse;
      }
    }
  }
}
