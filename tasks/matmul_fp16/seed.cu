// Half-precision matrix product seed on tensor cores (WMMA, 16x16x16 fragments, float32 accumulators).
// A block of (BM / WM) x (BN / WN) warps computes a BM x BN tile of C; each warp owns a WM x WN part of
// it, (WM / 16) x (WN / 16) accumulator fragments. The K dimension advances in steps of 32: the next
// step's A and B tiles are loaded from global memory into registers (16-byte vectors where rows are
// aligned) while the tensor cores work on the current one from shared memory, which is double-buffered
// so one barrier per step suffices. Rows in shared memory are padded by 8 halves against bank
// conflicts. Edges load as zeros; the epilogue goes through a per-warp scratch tile to store only the
// elements inside C.
// @tune BM = 128 in {64, 128, 256}
// @tune BN = 128 in {64, 128, 256}
// @tune WM = 64 in {32, 64}
// @tune WN = 32 in {32, 64}
// @require BM % WM == 0 && BN % WN == 0
// @require (BM / WM) * (BN / WN) * 32 <= MAX_THREADS_PER_BLOCK
// @require (BM / WM) * (BN / WN) >= 2
// @require 2 * 2 * (BM * 40 + 32 * (BN + 8)) <= SMEM_PER_BLOCK
// @launch matmul_fp16<<<dim3(ceil_div(N, BN), ceil_div(M, BM)), (BM / WM) * (BN / WN) * 32>>>(A, B, C, M, N, K)
#include <cuda_fp16.h>
#include <mma.h>

using namespace nvcuda;

#define BK 32
#define WARPS ((BM / WM) * (BN / WN))
#define THREADS (WARPS * 32)
#define A_STRIDE (BK + 8)  // halves per row of the A tile in shared memory
#define B_STRIDE (BN + 8)  // halves per row of the B tile
#define A_VECTORS (BM * BK / 8)  // 8 halves (16 bytes) per vector
#define B_VECTORS (BK * BN / 8)
#define A_LOADS ((A_VECTORS + THREADS - 1) / THREADS)
#define B_LOADS ((B_VECTORS + THREADS - 1) / THREADS)
#define FRAGS_M (WM / 16)
#define FRAGS_N (WN / 16)

// 8 consecutive halves of a row starting at (row, col) of a rows x cols matrix, zeros outside it.
__device__ __forceinline__ uint4 load8(const __half* __restrict__ matrix, int rows, int cols, int row, int col,
                                       bool aligned) {
  if (row < rows && aligned && col + 8 <= cols) {
    return *reinterpret_cast<const uint4*>(matrix + (long long)row * cols + col);
  }
  union {
    uint4 vector;
    __half values[8];
  } out;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    out.values[i] = row < rows && col + i < cols ? matrix[(long long)row * cols + col + i] : __float2half(0.0f);
  }
  return out.vector;
}

extern "C" __global__ void __launch_bounds__(THREADS)
matmul_fp16(const __half* __restrict__ A, const __half* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
  // Two stages of A and B tiles; the epilogue reuses the space as per-warp float scratch tiles.
  constexpr int kStageHalves = BM * A_STRIDE + BK * B_STRIDE;
  constexpr int kPipelineBytes = 2 * kStageHalves * 2;
  constexpr int kScratchBytes = WARPS * 16 * 16 * 4;
  __shared__ __align__(128) unsigned char shared[kPipelineBytes > kScratchBytes ? kPipelineBytes : kScratchBytes];
  __half* stages = reinterpret_cast<__half*>(shared);

  const int tid = threadIdx.x;
  const int warp = tid / 32;
  const int lane = tid % 32;
  const int warp_m = warp / (BN / WN);
  const int warp_n = warp % (BN / WN);
  const int block_m = blockIdx.y * BM;
  const int block_n = blockIdx.x * BN;
  const bool a_aligned = K % 8 == 0;
  const bool b_aligned = N % 8 == 0;
  const bool c_aligned = N % 4 == 0;

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[FRAGS_M][FRAGS_N];
#pragma unroll
  for (int i = 0; i < FRAGS_M; ++i) {
#pragma unroll
    for (int j = 0; j < FRAGS_N; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
  }

  uint4 a_regs[A_LOADS];
  uint4 b_regs[B_LOADS];
  auto load_tiles = [&](int k0) {
#pragma unroll
    for (int l = 0; l < A_LOADS; ++l) {
      const int v = tid + l * THREADS;
      if (v < A_VECTORS) {
        const int r = v / (BK / 8);
        const int c = (v % (BK / 8)) * 8;
        a_regs[l] = load8(A, M, K, block_m + r, k0 + c, a_aligned);
      }
    }
#pragma unroll
    for (int l = 0; l < B_LOADS; ++l) {
      const int v = tid + l * THREADS;
      if (v < B_VECTORS) {
        const int r = v / (BN / 8);
        const int c = (v % (BN / 8)) * 8;
        b_regs[l] = load8(B, K, N, k0 + r, block_n + c, b_aligned);
      }
    }
  };
  auto store_tiles = [&](int stage) {
    __half* a_tile = stages + stage * kStageHalves;
    __half* b_tile = a_tile + BM * A_STRIDE;
#pragma unroll
    for (int l = 0; l < A_LOADS; ++l) {
      const int v = tid + l * THREADS;
      if (v < A_VECTORS) {
        const int r = v / (BK / 8);
        const int c = (v % (BK / 8)) * 8;
        *reinterpret_cast<uint4*>(a_tile + r * A_STRIDE + c) = a_regs[l];
      }
    }
#pragma unroll
    for (int l = 0; l < B_LOADS; ++l) {
      const int v = tid + l * THREADS;
      if (v < B_VECTORS) {
        const int r = v / (BN / 8);
        const int c = (v % (BN / 8)) * 8;
        *reinterpret_cast<uint4*>(b_tile + r * B_STRIDE + c) = b_regs[l];
      }
    }
  };

  const int steps = (K + BK - 1) / BK;
  load_tiles(0);
  store_tiles(0);
  __syncthreads();
  for (int step = 0; step < steps; ++step) {
    const int stage = step % 2;
    if (step + 1 < steps) load_tiles((step + 1) * BK);
    const __half* a_tile = stages + stage * kStageHalves;
    const __half* b_tile = a_tile + BM * A_STRIDE;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a_frag[FRAGS_M];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b_frag[FRAGS_N];
#pragma unroll
      for (int i = 0; i < FRAGS_M; ++i) {
        wmma::load_matrix_sync(a_frag[i], a_tile + (warp_m * WM + i * 16) * A_STRIDE + kk, A_STRIDE);
      }
#pragma unroll
      for (int j = 0; j < FRAGS_N; ++j) {
        wmma::load_matrix_sync(b_frag[j], b_tile + kk * B_STRIDE + warp_n * WN + j * 16, B_STRIDE);
      }
#pragma unroll
      for (int i = 0; i < FRAGS_M; ++i) {
#pragma unroll
        for (int j = 0; j < FRAGS_N; ++j) wmma::mma_sync(acc[i][j], a_frag[i], b_frag[j], acc[i][j]);
      }
    }
    // The other stage was last read in the previous step, before this step's barrier: safe to fill.
    if (step + 1 < steps) store_tiles((step + 1) % 2);
    __syncthreads();
  }

  // Epilogue: each fragment goes through the warp's scratch tile; lane l stores 8 floats of row l / 2
  // (two 16-byte stores where the row is inside C and aligned).
  float* scratch = reinterpret_cast<float*>(shared) + warp * 256;
  const int r = lane / 2;
  const int c0 = (lane % 2) * 8;
#pragma unroll
  for (int i = 0; i < FRAGS_M; ++i) {
#pragma unroll
    for (int j = 0; j < FRAGS_N; ++j) {
      wmma::store_matrix_sync(scratch, acc[i][j], 16, wmma::mem_row_major);
      __syncwarp();
      const int row = block_m + warp_m * WM + i * 16 + r;
      const int col = block_n + warp_n * WN + j * 16 + c0;
      if (row < M) {
        if (c_aligned && col + 8 <= N) {
          float4* out = reinterpret_cast<float4*>(C + (long long)row * N + col);
          out[0] = *reinterpret_cast<const float4*>(scratch + r * 16 + c0);
          out[1] = *reinterpret_cast<const float4*>(scratch + r * 16 + c0 + 4);
        } else {
#pragma unroll
          for (int e = 0; e < 8; ++e) {
            if (col + e < N) C[(long long)row * N + col + e] = scratch[r * 16 + c0 + e];
          }
        }
      }
      __syncwarp();
    }
  }
}
