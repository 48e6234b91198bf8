// Fused linear + bias + GELU seed (float32 FMA; no TF32, which fails the tolerance).
// A block of (BM / 8) x (BN / 8) threads computes a BM x BN tile of y, each thread 8 x 8 values held in
// registers as 2 x 2 sub-tiles of 4 x 4 that lie BM / 2 rows and BN / 2 columns apart: each k step a thread
// reads two float4 of x and two of weight from shared memory (consecutive threads read consecutive float4,
// so the reads are free of bank conflicts) and does 64 multiply-adds with them.
// K advances BK at a time through two shared-memory buffers: the next tile's global loads are issued into
// registers before the multiply-adds on the current tile and stored into the other buffer after them, so
// their latency is hidden; one barrier per tile suffices, since a buffer is rewritten only after every
// thread has passed the barrier that follows its last reads.
// Both operands are K-major (x is M x K, weight N x K: "NT"), so both tiles are read along k and stored
// transposed (x_tile[k][m], w_tile[k][n]) so that a thread's four rows or columns are one float4; their
// rows are padded by 4 floats, which keeps the transposing stores free of bank conflicts for BK = 8.
// Global loads and the stores of y are float4 where the row length is a multiple of 4 and the base
// 16-byte aligned (tested at run time, the same for the whole grid); otherwise value by value. Values
// outside the matrices load as zeros and nothing is stored outside y, so every size is handled. Each
// sum runs in k order, as the reference's does.
// The epilogue adds the bias and applies GELU (tanh form, as the task defines it) before the only
// store of y.
// The OpenCL C twin of seed.maca (a work-group of THREADS work-items, local memory for shared memory),
// written from the same template by tools/generate-sgemm-seeds.py; edit the template there.
// @tune BM = 128 in {64, 128}
// @tune BN = 128 in {64, 128}
// @tune BK = 16 in {8, 16}
// @require (BM / 8) * (BN / 8) <= MAX_THREADS_PER_BLOCK
// @require 8 * BK * (BM + BN + 8) <= SMEM_PER_BLOCK
// @require BM * BK % (BM * BN / 16) == 0 && BK * BN % (BM * BN / 16) == 0
// @launch linear_gelu<<<dim3(ceil_div(N, BN), ceil_div(M, BM)), (BM / 8) * (BN / 8)>>>(x, weight, bias, y, M, N, K)

#define THREADS ((BM / 8) * (BN / 8))
#define A_LOADS (BM * BK / 4 / THREADS)  // float4 chunks of the first operand's tile per thread
#define B_LOADS (BK * BN / 4 / THREADS)  // and of the second's

inline bool aligned16(__global const float* pointer) {
  return ((ulong)pointer & 15) == 0;
}

// Values col .. col + 3 of row `row` of a row-major matrix of `rows` rows of `length` values, zeros outside
// it. With `vectors` (length % 4 == 0, 16-byte aligned base) the four are wholly inside or wholly outside.
inline float4 load4(__global const float* restrict matrix, int rows, int length, int row, int col,
    bool vectors) {
  __global const float* p = matrix + (long)row * length + col;
  if (vectors) {
    return row < rows && col < length ? vload4(0, p) : (float4)(0.0f);
  }
  return (float4)(row < rows && col < length ? p[0] : 0.0f, row < rows && col + 1 < length ? p[1] : 0.0f,
      row < rows && col + 2 < length ? p[2] : 0.0f, row < rows && col + 3 < length ? p[3] : 0.0f);
}

inline float gelu_tanh(float z) {
  const float c = 0.7978845608028654f;  // sqrt(2 / pi)
  return 0.5f * z * (1.0f + tanh(c * (z + 0.044715f * z * z * z)));
}

__kernel __attribute__((reqd_work_group_size(THREADS, 1, 1)))
void linear_gelu(__global const float* restrict x, __global const float* restrict weight,
    __global const float* restrict bias, __global float* restrict y, int M, int N, int K) {
  __local float x_tile[2][BK][BM + 4];
  __local float w_tile[2][BK][BN + 4];
  const int tx = (int)get_local_id(0) % (BN / 8);
  const int ty = (int)get_local_id(0) / (BN / 8);
  const int block_m = (int)get_group_id(1) * BM;
  const int block_n = (int)get_group_id(0) * BN;
  const bool load_vectors = K % 4 == 0 && aligned16(x) && aligned16(weight);
  const bool store_vectors = N % 4 == 0 && aligned16(y);
  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i) {
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;
  }
  float4 a_next[A_LOADS];
  float4 b_next[B_LOADS];
  const int tiles = (K + BK - 1) / BK;
#pragma unroll
  for (int l = 0; l < A_LOADS; ++l) {
    const int c = (int)get_local_id(0) + l * THREADS;
    a_next[l] = load4(x, M, K, block_m + c / (BK / 4), (c % (BK / 4)) * 4, load_vectors);
  }
#pragma unroll
  for (int l = 0; l < B_LOADS; ++l) {
    const int c = (int)get_local_id(0) + l * THREADS;
    b_next[l] = load4(weight, N, K, block_n + c / (BK / 4), (c % (BK / 4)) * 4, load_vectors);
  }
  for (int t = 0; t < tiles; ++t) {
    const int buffer = t & 1;
    // Tile t into the buffer read two tiles ago: every thread has passed the barrier after those reads.
#pragma unroll
    for (int l = 0; l < A_LOADS; ++l) {
      const int c = (int)get_local_id(0) + l * THREADS;
      const int r = c / (BK / 4);
      const int k = (c % (BK / 4)) * 4;
      x_tile[buffer][k][r] = a_next[l].x;
      x_tile[buffer][k + 1][r] = a_next[l].y;
      x_tile[buffer][k + 2][r] = a_next[l].z;
      x_tile[buffer][k + 3][r] = a_next[l].w;
    }
#pragma unroll
    for (int l = 0; l < B_LOADS; ++l) {
      const int c = (int)get_local_id(0) + l * THREADS;
      const int r = c / (BK / 4);
      const int k = (c % (BK / 4)) * 4;
      w_tile[buffer][k][r] = b_next[l].x;
      w_tile[buffer][k + 1][r] = b_next[l].y;
      w_tile[buffer][k + 2][r] = b_next[l].z;
      w_tile[buffer][k + 3][r] = b_next[l].w;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t + 1 < tiles) {  // in flight during the multiply-adds below
#pragma unroll
      for (int l = 0; l < A_LOADS; ++l) {
        const int c = (int)get_local_id(0) + l * THREADS;
        a_next[l] = load4(x, M, K, block_m + c / (BK / 4), (t + 1) * BK + (c % (BK / 4)) * 4, load_vectors);
      }
#pragma unroll
      for (int l = 0; l < B_LOADS; ++l) {
        const int c = (int)get_local_id(0) + l * THREADS;
        b_next[l] = load4(weight, N, K, block_n + c / (BK / 4), (t + 1) * BK + (c % (BK / 4)) * 4, load_vectors);
      }
    }
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      const float4 a0 = vload4(0, &x_tile[buffer][k][ty * 4]);
      const float4 a1 = vload4(0, &x_tile[buffer][k][BM / 2 + ty * 4]);
      const float4 b0 = vload4(0, &w_tile[buffer][k][tx * 4]);
      const float4 b1 = vload4(0, &w_tile[buffer][k][BN / 2 + tx * 4]);
      const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < 8; ++i) {
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] += a[i] * b[j];
      }
    }
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int col = block_n + h * (BN / 2) + tx * 4;
    float b[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) b[e] = col + e < N ? bias[col + e] : 0.0f;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const int row = block_m + (i / 4) * (BM / 2) + ty * 4 + i % 4;
      if (row >= M) continue;
      float v[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) v[e] = gelu_tanh(acc[i][h * 4 + e] + b[e]);
      __global float* out = y + (long)row * N + col;
      if (store_vectors) {
        if (col < N) vstore4((float4)(v[0], v[1], v[2], v[3]), 0, out);
      } else {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          if (col + e < N) out[e] = v[e];
        }
      }
    }
  }
}
