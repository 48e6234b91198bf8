// bfloat16 matrix product seed on tensor cores with PTX mma.sync.m16n8k16 (float32 accumulators, C rounded
// once to bfloat16).
// A block of WARPS_M x WARPS_N warps computes a BM x BN tile of C; each warp owns a (BM / WARPS_M) x
// (BN / WARPS_N) part of it as m16n8 accumulator fragments held in registers. K advances in steps of 32
// through a STAGES-deep ring of shared-memory tiles filled by cp.async (global to shared without
// registers), so up to STAGES - 1 tiles are in flight while the tensor cores work on the current one;
// one barrier per step. Fragments come from shared memory with ldmatrix (B, stored k-major as in
// global memory, with ldmatrix.trans). Shared rows are padded by 8 values (16 bytes), which makes every
// ldmatrix phase hit 32 distinct banks. Blocks are numbered in groups of GROUP tile rows so that the
// blocks running together share their A and B tiles in L2.
// Edges: where K (for A) or N (for B) is a multiple of 8, every 16-byte chunk is either wholly inside
// the matrix or wholly outside, and outside chunks are zero-filled by cp.async with a source size of 0;
// otherwise rows are not 16-byte aligned and the tiles are loaded element by element with zero fill.
// Stores round to bfloat16 and are guarded per element (pairs where N is even).
// @tune BM = 128 in {64, 128, 256}
// @tune BN = 128 in {64, 128, 256}
// @tune WARPS_M = 2 in {1, 2, 4}
// @tune WARPS_N = 4 in {1, 2, 4}
// @tune STAGES = 4 in {2, 3, 4, 5}
// @tune GROUP = 8 in {1, 4, 8, 16}
// @require (BM / WARPS_M) % 16 == 0 && (BN / WARPS_N) % 16 == 0
// @require (BM / WARPS_M) * (BN / WARPS_N) <= 4096
// @require WARPS_M * WARPS_N >= 4
// @require STAGES * (BM * 40 + 32 * (BN + 8)) * 2 <= SMEM_PER_BLOCK_OPTIN
// @launch matmul_bf16<<<ceil_div(M, BM) * ceil_div(N, BN), WARPS_M * WARPS_N * 32, STAGES * (BM * 40 + 32 * (BN + 8)) * 2>>>(A, B, C, M, N, K)
#include <cuda_bf16.h>

#define BK 32
#define THREADS (WARPS_M * WARPS_N * 32)
#define WM (BM / WARPS_M)            // rows of C per warp
#define WN (BN / WARPS_N)            // columns of C per warp
#define MI (WM / 16)                 // m16 fragments per warp
#define NI (WN / 8)                  // n8 fragments per warp
#define A_STRIDE (BK + 8)            // values per row of an A tile in shared memory
#define B_STRIDE (BN + 8)            // values per row of a B tile
#define A_TILE (BM * A_STRIDE)       // values
#define B_TILE (BK * B_STRIDE)       // values
#define STAGE_HALVES (A_TILE + B_TILE)
#define A_CHUNKS (BM * BK / 8)       // 16-byte chunks per A tile
#define B_CHUNKS (BK * BN / 8)

typedef __nv_bfloat16 element_t;
#define ZERO_ELEMENT __float2bfloat16(0.0f)

__device__ __forceinline__ unsigned shared_address(const void* pointer) {
  return static_cast<unsigned>(__cvta_generic_to_shared(pointer));
}

// 16 bytes global -> shared; bytes = 0 reads nothing and writes zeros.
__device__ __forceinline__ void copy16(unsigned destination, const void* source, int bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(destination), "l"(source), "r"(bytes));
}

__device__ __forceinline__ void commit_copies() { asm volatile("cp.async.commit_group;\n" ::); }

template <int PENDING>
__device__ __forceinline__ void wait_copies() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING));
}

__device__ __forceinline__ void load_matrix_x4(unsigned (&r)[4], unsigned address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}

__device__ __forceinline__ void load_matrix_x4_trans(unsigned (&r)[4], unsigned address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}

__device__ __forceinline__ void mma_16816(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Element-wise load of 8 values of a row starting at (row, col), zeros outside the rows x cols matrix,
// stored as one 16-byte chunk in shared memory: for matrices whose rows are not 16-byte aligned.
__device__ __forceinline__ void load8_slow(element_t* destination, const element_t* __restrict__ matrix, int rows,
                                           int cols, int row, int col) {
  union {
    uint4 vector;
    element_t values[8];
  } chunk;
#pragma unroll
  for (int e = 0; e < 8; ++e) {
    chunk.values[e] = row < rows && col + e < cols ? matrix[(long long)row * cols + col + e] : ZERO_ELEMENT;
  }
  *reinterpret_cast<uint4*>(destination) = chunk.vector;
}

extern "C" __global__ void __launch_bounds__(THREADS)
matmul_bf16(const element_t* __restrict__ A, const element_t* __restrict__ B, element_t* __restrict__ C, int M, int N,
            int K) {
  extern __shared__ __align__(128) unsigned char shared_bytes[];
  element_t* stages = reinterpret_cast<element_t*>(shared_bytes);

  // Block -> tile, in groups of GROUP tile rows (column-major inside a group) for L2 reuse.
  const int tiles_m = (M + BM - 1) / BM;
  const int tiles_n = (N + BN - 1) / BN;
  const int blocks_per_group = GROUP * tiles_n;
  const int group = blockIdx.x / blocks_per_group;
  const int first_tile_m = group * GROUP;
  const int group_rows = min(tiles_m - first_tile_m, GROUP);
  const int in_group = blockIdx.x % blocks_per_group;
  const int block_m = (first_tile_m + in_group % group_rows) * BM;
  const int block_n = (in_group / group_rows) * BN;

  const int tid = threadIdx.x;
  const int warp = tid / 32;
  const int lane = tid % 32;
  const int warp_m0 = (warp / WARPS_N) * WM;
  const int warp_n0 = (warp % WARPS_N) * WN;
  const bool a_vector = K % 8 == 0;
  const bool b_vector = N % 8 == 0;
  const int k_tiles = (K + BK - 1) / BK;

  auto load_stage = [&](int stage, int k0) {
    element_t* a_tile = stages + stage * STAGE_HALVES;
    element_t* b_tile = a_tile + A_TILE;
#pragma unroll
    for (int l = 0; l < (A_CHUNKS + THREADS - 1) / THREADS; ++l) {
      const int c = tid + l * THREADS;
      if (A_CHUNKS % THREADS != 0 && c >= A_CHUNKS) break;
      const int r = c / (BK / 8);
      const int col = (c % (BK / 8)) * 8;
      const int row = block_m + r;
      const int k = k0 + col;
      element_t* destination = a_tile + r * A_STRIDE + col;
      if (a_vector) {
        const bool inside = row < M && k < K;
        copy16(shared_address(destination), inside ? A + (long long)row * K + k : A, inside ? 16 : 0);
      } else {
        load8_slow(destination, A, M, K, row, k);
      }
    }
#pragma unroll
    for (int l = 0; l < (B_CHUNKS + THREADS - 1) / THREADS; ++l) {
      const int c = tid + l * THREADS;
      if (B_CHUNKS % THREADS != 0 && c >= B_CHUNKS) break;
      const int r = c / (BN / 8);
      const int col = (c % (BN / 8)) * 8;
      const int k = k0 + r;
      const int n = block_n + col;
      element_t* destination = b_tile + r * B_STRIDE + col;
      if (b_vector) {
        const bool inside = k < K && n < N;
        copy16(shared_address(destination), inside ? B + (long long)k * N + n : B, inside ? 16 : 0);
      } else {
        load8_slow(destination, B, K, N, k, n);
      }
    }
  };

  float acc[MI][NI][4];
#pragma unroll
  for (int i = 0; i < MI; ++i) {
#pragma unroll
    for (int j = 0; j < NI; ++j) {
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;
    }
  }

  // Prologue: tiles 0 .. STAGES - 2 in flight, one commit group each (empty groups keep the count).
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < k_tiles) load_stage(s, s * BK);
    commit_copies();
  }

  // Per-lane ldmatrix offsets (values) inside a stage: A rows lane % 16, k half (lane / 16) * 8; B k-rows
  // lane % 16, n half (lane / 16) * 8.
  const int a_lane_offset = (warp_m0 + lane % 16) * A_STRIDE + (lane / 16) * 8;
  const int b_lane_offset = A_TILE + (lane % 16) * B_STRIDE + warp_n0 + (lane / 16) * 8;
  const unsigned stages_address = shared_address(stages);

  for (int kt = 0; kt < k_tiles; ++kt) {
    // Tile kt has landed for this thread's copies; the barrier makes everyone's visible and also
    // guarantees that every warp finished reading the stage that the next load overwrites (kt - 1).
    wait_copies<STAGES - 2>();
    __syncthreads();
    const int next = kt + STAGES - 1;
    if (next < k_tiles) load_stage(next % STAGES, next * BK);
    commit_copies();

    const unsigned stage_address = stages_address + (kt % STAGES) * STAGE_HALVES * 2;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      unsigned a_frag[MI][4];
      unsigned b_frag[NI][2];
#pragma unroll
      for (int i = 0; i < MI; ++i) {
        load_matrix_x4(a_frag[i], stage_address + (a_lane_offset + i * 16 * A_STRIDE + kk) * 2);
      }
#pragma unroll
      for (int j = 0; j < NI / 2; ++j) {
        unsigned r[4];
        load_matrix_x4_trans(r, stage_address + (b_lane_offset + kk * B_STRIDE + j * 16) * 2);
        b_frag[2 * j][0] = r[0];
        b_frag[2 * j][1] = r[1];
        b_frag[2 * j + 1][0] = r[2];
        b_frag[2 * j + 1][1] = r[3];
      }
#pragma unroll
      for (int i = 0; i < MI; ++i) {
#pragma unroll
        for (int j = 0; j < NI; ++j) mma_16816(acc[i][j], a_frag[i], b_frag[j][0], b_frag[j][1]);
      }
    }
  }
  wait_copies<0>();  // nothing real is pending (only empty groups), but leave no copy behind

  // Epilogue straight from the accumulators: c[0..1] at (lane / 4, 2 * (lane % 4) + 0..1), c[2..3] eight
  // rows below.
  const bool pairs = N % 2 == 0;
#pragma unroll
  for (int i = 0; i < MI; ++i) {
#pragma unroll
    for (int j = 0; j < NI; ++j) {
      const int col = block_n + warp_n0 + j * 8 + 2 * (lane % 4);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = block_m + warp_m0 + i * 16 + lane / 4 + h * 8;
        if (row < M) {
          element_t* out = C + (long long)row * N + col;
          if (pairs && col + 1 < N) {
            *reinterpret_cast<__nv_bfloat162*>(out) = __floats2bfloat162_rn(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
          } else {
            if (col < N) out[0] = __float2bfloat16_rn(acc[i][j][2 * h]);
            if (col + 1 < N) out[1] = __float2bfloat16_rn(acc[i][j][2 * h + 1]);
          }
        }
      }
    }
  }
}
