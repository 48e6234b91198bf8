// mish(mish(x @ linear_weight.T + linear_bias)) (the kernel's M, N, K are the task's sizes batch_size,
// out_features, in_features).
//
// Register-blocked float32 matrix product with plain fused multiply-adds (exact float32: no TF32). A is
// (M, K) row-major; B is stored (N, K) row-major (the product reads its transpose); out is (M, N) row-major.
//
// A block of (BM / TM) x (BN / TN) threads computes a BM x BN tile of out, each thread a TM x TN sub-tile
// held in registers, taken as 4 x 4 pieces spread over the tile so that its shared-memory reads are float4
// and conflict-free. K advances BK at a time through two shared-memory buffers: the next tiles of A and B are
// loaded into registers while the current ones are multiplied, then stored k-major (As[k][m], Bs[k][n]; 4
// floats of padding per row) into the other buffer, one barrier per step. Blocks are numbered in groups of
// GROUP tile rows, so that blocks running together share rows of A and columns of B in L2. Every load and
// store is bounds-checked: elements outside the matrices load as zeros, and stores are float4 where the row
// length is a multiple of 4.
//
// Fused epilogue: Mish twice, mish(z) = z * tanh(log1p(exp(z))) as PyTorch computes it, in registers before
// the only store.
// @tune BM = 256 in {32, 64, 128, 256}
// @tune BN = 128 in {32, 64, 128, 256}
// @tune BK = 16 in {8, 16, 32}
// @tune TM = 8 in {4, 8}
// @tune TN = 8 in {4, 8}
// @tune GROUP = 8 in {1, 4, 8, 16}
// @require (BM / TM) * (BN / TN) >= 32 && (BM / TM) * (BN / TN) <= MAX_THREADS_PER_BLOCK
// @require BM * BK % ((BM / TM) * (BN / TN)) == 0 && BN * BK % ((BM / TM) * (BN / TN)) == 0
// @require 8 * BK * (BM + BN + 8) <= SMEM_PER_BLOCK_OPTIN
// @launch matmul<<<ceil_div(batch_size, BM) * ceil_div(out_features, BN), (BM / TM) * (BN / TN), 8 * BK * (BM + BN + 8)>>>(x, linear_weight, linear_bias, out, batch_size, out_features, in_features)

#define THREADS ((BM / TM) * (BN / TN))
#define A_LOADS (BM * BK / THREADS)
#define B_LOADS (BN * BK / THREADS)
#define A_STRIDE (BM + 4)  // floats per k-row of the shared A tile
#define B_STRIDE (BN + 4)

__device__ __forceinline__ float epilogue(float v, float b) {
  const float z = v + b;
  const float once = z * tanhf(log1pf(expf(z)));
  return once * tanhf(log1pf(expf(once)));
}

// Thread tid's elements e = tid + i * THREADS of the A and B tiles starting at k0, from global memory into
// registers; elements outside the matrices (or past k_end) are zeros.
__device__ __forceinline__ void load_tiles(const float* __restrict__ A, const float* __restrict__ B,
                                           float (&a_next)[A_LOADS], float (&b_next)[B_LOADS], int m0, int n0,
                                           int k0, int k_end, int M, int N, int K) {
  const int tid = threadIdx.x;
#pragma unroll
  for (int i = 0; i < A_LOADS; ++i) {
    const int e = tid + i * THREADS;
    const int r = e / BK, kk = e % BK;
    a_next[i] = m0 + r < M && k0 + kk < k_end ? A[(long long)(m0 + r) * K + k0 + kk] : 0.0f;
  }
#pragma unroll
  for (int i = 0; i < B_LOADS; ++i) {
    const int e = tid + i * THREADS;
    const int r = e / BK, kk = e % BK;
    b_next[i] = n0 + r < N && k0 + kk < k_end ? B[(long long)(n0 + r) * K + k0 + kk] : 0.0f;
  }
}

// A thread's COUNT values of one k-row of a shared tile: COUNT / 4 float4s, SPREAD floats apart.
template <int COUNT, int SPREAD>
__device__ __forceinline__ void load_fragment(const float* row, float (&values)[COUNT]) {
#pragma unroll
  for (int c = 0; c < COUNT / 4; ++c) {
    const float4 v = *reinterpret_cast<const float4*>(row + c * SPREAD);
    values[4 * c] = v.x;
    values[4 * c + 1] = v.y;
    values[4 * c + 2] = v.z;
    values[4 * c + 3] = v.w;
  }
}

// The registers of load_tiles into shared buffer 0 or 1, k-major.
__device__ __forceinline__ void store_tiles(float* a_shared, float* b_shared, const float (&a_next)[A_LOADS],
                                            const float (&b_next)[B_LOADS], int buffer) {
  const int tid = threadIdx.x;
#pragma unroll
  for (int i = 0; i < A_LOADS; ++i) {
    const int e = tid + i * THREADS;
    const int r = e / BK, kk = e % BK;
    a_shared[(buffer * BK + kk) * A_STRIDE + r] = a_next[i];
  }
#pragma unroll
  for (int i = 0; i < B_LOADS; ++i) {
    const int e = tid + i * THREADS;
    const int r = e / BK, kk = e % BK;
    b_shared[(buffer * BK + kk) * B_STRIDE + r] = b_next[i];
  }
}

extern "C" __global__ void __launch_bounds__(THREADS)
matmul(const float* __restrict__ A, const float* __restrict__ B, const float* __restrict__ bias, float* __restrict__ out, int M, int N,
       int K) {
  extern __shared__ float4 shared_memory[];
  float* const a_shared = reinterpret_cast<float*>(shared_memory);  // [2][BK][A_STRIDE]
  float* const b_shared = a_shared + 2 * BK * A_STRIDE;              // [2][BK][B_STRIDE]
  const int tid = threadIdx.x;
  const int tiles_m = (M + BM - 1) / BM;
  const int tiles_n = (N + BN - 1) / BN;
  const int per_group = GROUP * tiles_n;
  const int first_m = (blockIdx.x / per_group) * GROUP;
  const int group_rows = min(tiles_m - first_m, GROUP);
  const int in_group = blockIdx.x % per_group;
  const int m0 = (first_m + in_group % group_rows) * BM;
  const int n0 = (in_group / group_rows) * BN;
  const int tx = tid % (BN / TN);
  const int ty = tid / (BN / TN);
  const int k_begin = 0;
  const int k_end = K;

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i) {
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
  }
  float a_next[A_LOADS];
  float b_next[B_LOADS];
  const int steps = k_end > k_begin ? (k_end - k_begin + BK - 1) / BK : 0;
  if (steps > 0) {
    load_tiles(A, B, a_next, b_next, m0, n0, k_begin, k_end, M, N, K);
    store_tiles(a_shared, b_shared, a_next, b_next, 0);
  }
  __syncthreads();
  for (int step = 0; step < steps; ++step) {
    const int buffer = step & 1;
    if (step + 1 < steps) load_tiles(A, B, a_next, b_next, m0, n0, k_begin + (step + 1) * BK, k_end, M, N, K);
    const float* a_tile = a_shared + buffer * BK * A_STRIDE + ty * 4;
    const float* b_tile = b_shared + buffer * BK * B_STRIDE + tx * 4;
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float a[TM];
      float b[TN];
      load_fragment<TM, BM / (TM / 4)>(a_tile + kk * A_STRIDE, a);
      load_fragment<TN, BN / (TN / 4)>(b_tile + kk * B_STRIDE, b);
#pragma unroll
      for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
      }
    }
    if (step + 1 < steps) store_tiles(a_shared, b_shared, a_next, b_next, buffer ^ 1);
    __syncthreads();
  }

  // Row i of the sub-tile is row (i / 4) * (BM / (TM / 4)) + 4 ty + i % 4 of the block's tile; likewise columns.
  const bool vector_rows = (N & 3) == 0;
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int row = m0 + (i / 4) * (BM / (TM / 4)) + ty * 4 + i % 4;
    if (row >= M) continue;
    float* const out_row = out + (long long)row * N;
#pragma unroll
    for (int c = 0; c < TN / 4; ++c) {
      const int col = n0 + c * (BN / (TN / 4)) + tx * 4;
      float values[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float value = col + e < N ? epilogue(acc[i][4 * c + e], bias[col + e]) : 0.0f;
        values[e] = value;
      }
      if (vector_rows && col + 3 < N) {
        *reinterpret_cast<float4*>(out_row + col) = make_float4(values[0], values[1], values[2], values[3]);
      } else {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          if (col + e < N) out_row[col + e] = values[e];
        }
      }
    }
  }
}
