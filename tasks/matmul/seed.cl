// Matrix product seed (float32 FMA; no TF32, which fails the tolerance).
// A block of (BM / 8) x (BN / 8) threads computes a BM x BN tile of C, each thread 8 x 8 values held in
// registers as 2 x 2 sub-tiles of 4 x 4 that lie BM / 2 rows and BN / 2 columns apart: each k step a thread
// reads two float4 of A and two of B from shared memory (consecutive threads read consecutive float4,
// so the reads are free of bank conflicts) and does 64 multiply-adds with them.
// K advances BK at a time through two shared-memory buffers: the next tile's global loads are issued into
// registers before the multiply-adds on the current tile and stored into the other buffer after them, so
// their latency is hidden; one barrier per tile suffices, since a buffer is rewritten only after every
// thread has passed the barrier that follows its last reads.
// The A tile is stored transposed (k-major, a_tile[k][m]) so that a thread's four rows are one float4;
// its rows are padded by 4 floats, which keeps the transposing stores free of bank conflicts for BK = 8.
// B is stored as it is (b_tile[k][n]).
// Global loads and the stores of C are float4 where the row length is a multiple of 4 and the base
// 16-byte aligned (tested at run time, the same for the whole grid); otherwise value by value. Values
// outside the matrices load as zeros and nothing is stored outside C, so every size is handled. Each
// sum runs in k order, as the reference's does.
// The OpenCL C twin of seed.maca (a work-group of THREADS work-items, local memory for shared memory),
// written from the same template by tools/generate-sgemm-seeds.py; edit the template there.
// @tune BM = 128 in {64, 128}
// @tune BN = 128 in {64, 128}
// @tune BK = 8 in {8, 16}
// @require (BM / 8) * (BN / 8) <= MAX_THREADS_PER_BLOCK
// @require 8 * BK * (BM + 4 + BN) <= SMEM_PER_BLOCK
// @require BM * BK % (BM * BN / 16) == 0 && BK * BN % (BM * BN / 16) == 0
// @launch matmul<<<dim3(ceil_div(N, BN), ceil_div(M, BM)), (BM / 8) * (BN / 8)>>>(A, B, C, M, N, K)

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

__kernel __attribute__((reqd_work_group_size(THREADS, 1, 1)))
void matmul(__global const float* restrict A, __global const float* restrict B,
    __global float* restrict C, int M, int N, int K) {
  __local float a_tile[2][BK][BM + 4];
  __local float b_tile[2][BK][BN];
  const int tx = (int)get_local_id(0) % (BN / 8);
  const int ty = (int)get_local_id(0) / (BN / 8);
  const int block_m = (int)get_group_id(1) * BM;
  const int block_n = (int)get_group_id(0) * BN;
  const bool a_vectors = K % 4 == 0 && aligned16(A);
  const bool b_vectors = N % 4 == 0 && aligned16(B);
  const bool c_vectors = N % 4 == 0 && aligned16(C);
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
    a_next[l] = load4(A, M, K, block_m + c / (BK / 4), (c % (BK / 4)) * 4, a_vectors);
  }
#pragma unroll
  for (int l = 0; l < B_LOADS; ++l) {
    const int c = (int)get_local_id(0) + l * THREADS;
    b_next[l] = load4(B, K, N, c / (BN / 4), block_n + (c % (BN / 4)) * 4, b_vectors);
  }
  for (int t = 0; t < tiles; ++t) {
    const int buffer = t & 1;
    // Tile t into the buffer read two tiles ago: every thread has passed the barrier after those reads.
#pragma unroll
    for (int l = 0; l < A_LOADS; ++l) {
      const int c = (int)get_local_id(0) + l * THREADS;
      const int r = c / (BK / 4);
      const int k = (c % (BK / 4)) * 4;
      a_tile[buffer][k][r] = a_next[l].x;
      a_tile[buffer][k + 1][r] = a_next[l].y;
      a_tile[buffer][k + 2][r] = a_next[l].z;
      a_tile[buffer][k + 3][r] = a_next[l].w;
    }
#pragma unroll
    for (int l = 0; l < B_LOADS; ++l) {
      const int c = (int)get_local_id(0) + l * THREADS;
      vstore4(b_next[l], 0, &b_tile[buffer][c / (BN / 4)][(c % (BN / 4)) * 4]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t + 1 < tiles) {  // in flight during the multiply-adds below
#pragma unroll
      for (int l = 0; l < A_LOADS; ++l) {
        const int c = (int)get_local_id(0) + l * THREADS;
        a_next[l] = load4(A, M, K, block_m + c / (BK / 4), (t + 1) * BK + (c % (BK / 4)) * 4, a_vectors);
      }
#pragma unroll
      for (int l = 0; l < B_LOADS; ++l) {
        const int c = (int)get_local_id(0) + l * THREADS;
        b_next[l] = load4(B, K, N, (t + 1) * BK + c / (BN / 4), block_n + (c % (BN / 4)) * 4, b_vectors);
      }
    }
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      const float4 a0 = vload4(0, &a_tile[buffer][k][ty * 4]);
      const float4 a1 = vload4(0, &a_tile[buffer][k][BM / 2 + ty * 4]);
      const float4 b0 = vload4(0, &b_tile[buffer][k][tx * 4]);
      const float4 b1 = vload4(0, &b_tile[buffer][k][BN / 2 + tx * 4]);
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
  for (int i = 0; i < 8; ++i) {
    const int row = block_m + (i / 4) * (BM / 2) + ty * 4 + i % 4;
    if (row >= M) continue;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int col = block_n + h * (BN / 2) + tx * 4;
      __global float* out = C + (long)row * N + col;
      if (c_vectors) {
        if (col < N) {
          vstore4((float4)(acc[i][h * 4], acc[i][h * 4 + 1], acc[i][h * 4 + 2], acc[i][h * 4 + 3]), 0, out);
        }
      } else {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          if (col + e < N) out[e] = acc[i][h * 4 + e];
        }
      }
    }
  }
}
