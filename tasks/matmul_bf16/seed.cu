// bfloat16 matrix product seed for Hopper tensor cores (sm_90a): warpgroup MMA (wgmma.mma_async, float32 accumulators)
// reading both operands from shared memory through matrix descriptors.
// A block of WARPGROUPS consumer warpgroups computes a (64 * WARPGROUPS) x BN tile of C; each warpgroup
// owns 64 rows and issues m64n256k16 instructions (BN = 256: A read once for all columns) or m64n128k16,
// accumulating in registers.
// K advances in 64-wide tiles through a STAGES-deep ring in shared memory, filled by cp.async 16-byte
// copies (global to shared without registers) STAGES - 2 tiles ahead; the tensor cores work on tile t
// while tile t - 1's instructions may still run (wgmma.wait_group 1), so the ring holds the tile being
// read, the one being finished and STAGES - 2 in flight.
// Shared tiles use the 128-byte swizzle (16-byte chunk c of 128-byte row r stored at chunk c ^ (r % 8)),
// the layout the descriptors name, which also keeps the copies and the tensor-core reads free of bank
// conflicts. A is K-major (rows of 64 values). The TMA path reads B as it is, N-major (64 x 64 boxes of B's own
// rows, the instructions' transpose-B flag set); elsewhere B is first transposed into a workspace (N x K), so
// that both operands are K-major (the transpose kernel is then one idle block on the TMA path).
// Edges: where the row length is a multiple of 8 every 16-byte chunk is wholly inside or outside the
// matrix and outside chunks are zero-filled by cp.async (source size 0); otherwise values are loaded
// one by one with zero fill. Blocks are numbered in groups of GROUP tile rows for L2 reuse.
// Warpgroup MMA exists on Hopper's architecture-specific target (sm_90a) only; compiled for another
// target (an A100's sm_80, or plain sm_90) the same tiles feed mma.sync.m16n8k16 through ldmatrix into
// the same accumulator layout: correct everywhere, fast on Hopper.
// TMA = 1 loads the tiles on Hopper with the copy engine instead (cp.async.bulk.tensor over the plan's
// tensor maps, which write the same 128-byte swizzle), with PRODUCER = 1 warp-specialised: a producer warpgroup beside the
// consumers, one thread of which issues each stage's two boxes onto the stage's `full` mbarrier as soon as
// the consumers have released the stage (its `empty` mbarrier); out-of-bounds rows and k values read as
// zeros, and the consumers wait on `full` only, with no block-wide barrier per tile and all STAGES stages
// in flight (PRODUCER = 0: thread 0 issues the boxes STAGES - 2 tiles ahead, a block barrier per tile). The
// maps and the producer exist where the plan's when(...) holds (Hopper, K % 8 == 0 and N % 8 == 0: TMA needs
// 16-byte row strides); the kernel decides the same way, and with TMA = 1 loads other sizes value by value.
// CLUSTER = 2 (there, with the producer) launches clusters of two blocks on consecutive tile rows of one tile
// column: each block's producer loads half of the shared B boxes into both blocks' stages (TMA multicast, B
// read once from L2 for the two), and a stage is refilled once both blocks' consumer warps have released it
// (each arrives on both blocks' `empty` barriers).
// @tune WARPGROUPS = 2 in {1, 2}
// @tune BN = 256 in {128, 256}
// @tune STAGES = 4 in {3, 4, 5, 6}
// @tune GROUP = 8 in {4, 8, 16}
// @tune TMA = 1 in {0, 1}
// @tune PRODUCER = 1 in {0, 1}
// @tune CLUSTER = 1 in {1, 2}
// @require STAGES * (64 * WARPGROUPS + BN) * 128 + 1024 <= SMEM_PER_BLOCK_OPTIN
// @require WARPGROUPS == 2 || BN == 128
// @workspace BT: bfloat16[N * K]
// @tensor_map a_tiles = A[K, M] box[64, 64 * WARPGROUPS] swizzle=128B when(TMA == 1 && COMPUTE_CAPABILITY == 90 && K % 8 == 0 && N % 8 == 0)
// @tensor_map b_tiles = B[N, K] box[64, 64] swizzle=128B when(TMA == 1 && COMPUTE_CAPABILITY == 90 && K % 8 == 0 && N % 8 == 0)
// @launch transpose_b<<<ceil_div(N, 64) * ceil_div(K, 64) * (1 - (TMA == 1 && COMPUTE_CAPABILITY == 90 && K % 8 == 0 && N % 8 == 0)) + (TMA == 1 && COMPUTE_CAPABILITY == 90 && K % 8 == 0 && N % 8 == 0), 256>>>(B, BT, K, N, (TMA == 1 && COMPUTE_CAPABILITY == 90 && K % 8 == 0 && N % 8 == 0))
// @launch matmul_bf16<<<(1 + (CLUSTER == 2 && PRODUCER == 1 && TMA == 1 && COMPUTE_CAPABILITY == 90 && K % 8 == 0 && N % 8 == 0)) * ceil_div(M, (1 + (CLUSTER == 2 && PRODUCER == 1 && TMA == 1 && COMPUTE_CAPABILITY == 90 && K % 8 == 0 && N % 8 == 0)) * 64 * WARPGROUPS) * ceil_div(N, BN), 128 * (WARPGROUPS + (PRODUCER == 1 && TMA == 1 && COMPUTE_CAPABILITY == 90 && K % 8 == 0 && N % 8 == 0)), STAGES * (64 * WARPGROUPS + BN) * 128 + 1024>>>(a_tiles, b_tiles, A, BT, C, M, N, K) cluster=dim3((1 + (CLUSTER == 2 && PRODUCER == 1 && TMA == 1 && COMPUTE_CAPABILITY == 90 && K % 8 == 0 && N % 8 == 0)), 1, 1)
#include <cuda_bf16.h>

#define BM (64 * WARPGROUPS)
#define BK 64
#define THREADS (128 * WARPGROUPS)
#define NPARTS (BN / 128)  // m64n128k16 instructions per k16 step and warpgroup
// Warpgroup MMA needs the architecture-specific target (sm_90a, what the evaluator compiles for on
// Hopper); elsewhere (sm_80, sm_89, plain sm_90) the same tiles feed mma.sync.
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define WARPGROUP_MMA 1
#else
#define WARPGROUP_MMA 0
#endif

// CUtensorMap (the plan's @tensor_map, passed by value): 128 bytes, 64-byte aligned.
struct __align__(64) TensorMap {
  unsigned long long opaque[16];
};

typedef __nv_bfloat16 element_t;
#define ZERO_ELEMENT __float2bfloat16(0.0f)

// B (K x N) -> BT (N x K) through a 64 x 64 shared tile; pairs of values per thread on both sides. The TMA
// path reads B's own rows (N-major tiles) and needs no BT: then (tma_path) one block that does nothing.
extern "C" __global__ void __launch_bounds__(256) transpose_b(const element_t* __restrict__ B, element_t* __restrict__ BT,
                                                           int K, int N, int tma_path) {
  if (tma_path) return;
  __shared__ element_t tile[64][64 + 2];
  const int tiles_n = (N + 63) / 64;
  const int n0 = (blockIdx.x % tiles_n) * 64;
  const int k0 = (blockIdx.x / tiles_n) * 64;
  const int tx = threadIdx.x % 32, ty = threadIdx.x / 32;
  for (int r = ty; r < 64; r += 8) {
    const int k = k0 + r;
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int n = n0 + 2 * tx + e;
      tile[r][2 * tx + e] = k < K && n < N ? B[(long long)k * N + n] : ZERO_ELEMENT;
    }
  }
  __syncthreads();
  for (int r = ty; r < 64; r += 8) {
    const int n = n0 + r;
    if (n >= N) continue;
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int k = k0 + 2 * tx + e;
      if (k < K) BT[(long long)n * K + k] = tile[2 * tx + e][r];
    }
  }
}

__device__ __forceinline__ void copy16(unsigned destination, const void* source, int bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(destination), "l"(source), "r"(bytes));
}

// 8 values one by one (rows not 16-byte aligned), zeros where !row_inside or beyond `left` values; each
// value goes straight to shared memory, so that this path holds few registers.
__device__ __forceinline__ void load8(unsigned destination, const element_t* __restrict__ matrix, long long offset,
                                      bool row_inside, int left) {
#pragma unroll
  for (int e = 0; e < 8; ++e) {
    const element_t value = row_inside && e < left ? matrix[offset + e] : ZERO_ELEMENT;
    asm volatile("st.shared.b16 [%0], %1;\n" ::"r"(destination + 2 * e), "h"(*reinterpret_cast<const unsigned short*>(&value)));
  }
}

// One operand's tile for k values k0 .. k0 + 63: ROWS rows of 64 values (128 bytes, eight 16-byte
// chunks) from a K-major matrix of `rows` rows, starting at row `first_row`, chunk q of row r stored at
// chunk q ^ (r % 8) (the 128-byte swizzle). A and BT are both loaded this way.
template <int ROWS, bool VECTORS>
__device__ __forceinline__ void load_rows(unsigned tile, const element_t* __restrict__ matrix, int rows, int first_row,
                                          int k0, int K) {
#pragma unroll(VECTORS ? 16 : 1)  // the value-by-value path stays a loop: few registers
  for (int l = 0; l < ROWS * 8 / THREADS; ++l) {
    const int c = threadIdx.x + l * THREADS;
    const int r = c / 8, q = c % 8;
    const int row = first_row + r, k = k0 + q * 8;
    const unsigned destination = tile + r * 128 + ((q ^ (r & 7)) << 4);
    if (VECTORS) {
      const bool inside = row < rows && k < K;
      copy16(destination, inside ? matrix + (long long)row * K + k : matrix, inside ? 16 : 0);
    } else {
      load8(destination, matrix, (long long)row * K + k, row < rows, K - k);
    }
  }
}

// Shared-memory matrix descriptor: start address, leading and stride byte offsets (16-byte units), 128B swizzle.
__device__ __forceinline__ unsigned long long descriptor(unsigned address, unsigned leading, unsigned stride) {
  return (unsigned long long)((address & 0x3FFFF) >> 4) | ((unsigned long long)(leading >> 4) << 16) |
         ((unsigned long long)(stride >> 4) << 32) | (1ull << 62);
}

__device__ __forceinline__ void load_matrix_x4(unsigned (&r)[4], unsigned address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}

__device__ __forceinline__ void mma_16816(float* c, const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

#if WARPGROUP_MMA
template <bool TRANSPOSE_B>
__device__ __forceinline__ void mma_64x128x16(float (&d)[64], unsigned long long a, unsigned long long b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, %67;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(a), "l"(b), "r"(1), "n"(TRANSPOSE_B ? 1 : 0));
}


// Both parts' columns (BN = 256) in one instruction: the A tile is read once for all 256 columns.
template <bool TRANSPOSE_B>
__device__ __forceinline__ void mma_64x256x16(float (&d)[2][64], unsigned long long a, unsigned long long b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, p, 1, 1, 0, %131;\n}\n"
      : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[0][4]), "+f"(d[0][5]), "+f"(d[0][6]), "+f"(d[0][7]), "+f"(d[0][8]), "+f"(d[0][9]), "+f"(d[0][10]), "+f"(d[0][11]), "+f"(d[0][12]), "+f"(d[0][13]), "+f"(d[0][14]), "+f"(d[0][15]), "+f"(d[0][16]), "+f"(d[0][17]), "+f"(d[0][18]), "+f"(d[0][19]), "+f"(d[0][20]), "+f"(d[0][21]), "+f"(d[0][22]), "+f"(d[0][23]), "+f"(d[0][24]), "+f"(d[0][25]), "+f"(d[0][26]), "+f"(d[0][27]), "+f"(d[0][28]), "+f"(d[0][29]), "+f"(d[0][30]), "+f"(d[0][31]), "+f"(d[0][32]), "+f"(d[0][33]), "+f"(d[0][34]), "+f"(d[0][35]), "+f"(d[0][36]), "+f"(d[0][37]), "+f"(d[0][38]), "+f"(d[0][39]), "+f"(d[0][40]), "+f"(d[0][41]), "+f"(d[0][42]), "+f"(d[0][43]), "+f"(d[0][44]), "+f"(d[0][45]), "+f"(d[0][46]), "+f"(d[0][47]), "+f"(d[0][48]), "+f"(d[0][49]), "+f"(d[0][50]), "+f"(d[0][51]), "+f"(d[0][52]), "+f"(d[0][53]), "+f"(d[0][54]), "+f"(d[0][55]), "+f"(d[0][56]), "+f"(d[0][57]), "+f"(d[0][58]), "+f"(d[0][59]), "+f"(d[0][60]), "+f"(d[0][61]), "+f"(d[0][62]), "+f"(d[0][63]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[1][4]), "+f"(d[1][5]), "+f"(d[1][6]), "+f"(d[1][7]), "+f"(d[1][8]), "+f"(d[1][9]), "+f"(d[1][10]), "+f"(d[1][11]), "+f"(d[1][12]), "+f"(d[1][13]), "+f"(d[1][14]), "+f"(d[1][15]), "+f"(d[1][16]), "+f"(d[1][17]), "+f"(d[1][18]), "+f"(d[1][19]), "+f"(d[1][20]), "+f"(d[1][21]), "+f"(d[1][22]), "+f"(d[1][23]), "+f"(d[1][24]), "+f"(d[1][25]), "+f"(d[1][26]), "+f"(d[1][27]), "+f"(d[1][28]), "+f"(d[1][29]), "+f"(d[1][30]), "+f"(d[1][31]), "+f"(d[1][32]), "+f"(d[1][33]), "+f"(d[1][34]), "+f"(d[1][35]), "+f"(d[1][36]), "+f"(d[1][37]), "+f"(d[1][38]), "+f"(d[1][39]), "+f"(d[1][40]), "+f"(d[1][41]), "+f"(d[1][42]), "+f"(d[1][43]), "+f"(d[1][44]), "+f"(d[1][45]), "+f"(d[1][46]), "+f"(d[1][47]), "+f"(d[1][48]), "+f"(d[1][49]), "+f"(d[1][50]), "+f"(d[1][51]), "+f"(d[1][52]), "+f"(d[1][53]), "+f"(d[1][54]), "+f"(d[1][55]), "+f"(d[1][56]), "+f"(d[1][57]), "+f"(d[1][58]), "+f"(d[1][59]), "+f"(d[1][60]), "+f"(d[1][61]), "+f"(d[1][62]), "+f"(d[1][63])
      : "l"(a), "l"(b), "r"(1), "n"(TRANSPOSE_B ? 1 : 0));
}

// Step kk (k16) of the warpgroup's 64 x BN product from the stage's tiles; B_N_MAJOR: the B tile holds B's
// own rows (N-major: the half-precision products' TMA path), else BN rows of the K-major operand.
template <bool B_N_MAJOR>
__device__ __forceinline__ void mma_step(float (&d)[NPARTS][64], unsigned long long a_desc, unsigned b_tile, int kk) {
  // K-major B (BT's rows, 128 bytes each): step kk is 32 bytes into every row, groups of 8 rows 1024 bytes
  // apart. N-major B (TMA: B's own rows, one 64 x 64 box per 64 columns, 8192 bytes each): step kk is 16 rows
  // (2048 bytes) down, groups of 8 rows 1024 bytes apart, groups of 64 columns 8192 bytes apart.
  const unsigned long long b_desc =
      B_N_MAJOR ? descriptor(b_tile + kk * 2048, 8192, 1024) : descriptor(b_tile + kk * 32, 16, 1024);
#if NPARTS == 2
  mma_64x256x16<B_N_MAJOR>(d, a_desc, b_desc);
#else
  mma_64x128x16<B_N_MAJOR>(d[0], a_desc, b_desc);
#endif
}

// Pins the accumulators in place: no ordinary instruction may touch them while instructions are in flight
// (otherwise ptxas serializes the wgmma pipeline).
__device__ __forceinline__ void fence_accumulators(float (&d)[NPARTS][64]) {
#pragma unroll
  for (int j = 0; j < NPARTS; ++j) {
#pragma unroll
    for (int e = 0; e < 64; ++e) asm volatile("" : "+f"(d[j][e])::"memory");
  }
}

// One tile's instructions: the warpgroup's 64 x BN product of the stage's A tile and B tile, committed, then
// waiting for the tile before it to finish (wgmma.wait_group 1).
template <bool B_N_MAJOR>
__device__ __forceinline__ void mma_tile(float (&d)[NPARTS][64], unsigned a_tile, unsigned b_tile, int warpgroup) {
  fence_accumulators(d);
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
  for (int kk = 0; kk < BK / 16; ++kk) {
    const unsigned long long a_desc = descriptor(a_tile + warpgroup * 64 * 128 + kk * 32, 16, 1024);
    mma_step<B_N_MAJOR>(d, a_desc, b_tile, kk);
  }
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
  fence_accumulators(d);
}

// One box of a tensor map at coordinates (k, row) into shared memory, completing on `barrier`.
__device__ __forceinline__ void load_box(unsigned destination, const TensorMap& map, int k, int row, unsigned barrier) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
      ::"r"(destination), "l"(reinterpret_cast<unsigned long long>(&map)), "r"(k), "r"(row), "r"(barrier)
      : "memory");
}

// Waits until the barrier's phase `parity` has completed (the stage's boxes have landed).
__device__ __forceinline__ void wait_barrier(unsigned barrier, unsigned parity) {
  asm volatile(
      "{\n.reg .pred done;\nWAIT_%=:\nmbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n@!done bra WAIT_%=;\n}\n"
      ::"r"(barrier), "r"(parity)
      : "memory");
}

// The same box into the same shared-memory offset of every block of the cluster in `blocks` (a bit per rank),
// completing on each block's barrier at `barrier`'s offset: read once from L2 for all of them (multicast).
__device__ __forceinline__ void load_box_to_cluster(unsigned destination, const TensorMap& map, int k, int row,
                                                    unsigned barrier, unsigned short blocks) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n"
      ::"r"(destination), "l"(reinterpret_cast<unsigned long long>(&map)), "r"(k), "r"(row), "r"(barrier), "h"(blocks)
      : "memory");
}

// Arrives on the barrier at `barrier`'s shared-memory offset in block `rank` of the cluster. The arrival has
// the default (CTA-scope) release, as the local one: a cluster-scope release would also wait for this warp's
// warpgroup MMA still in flight, serialising the tensor cores with every release.
__device__ __forceinline__ void arrive_in_block(unsigned barrier, unsigned rank) {
  asm volatile(
      "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n"
      ::"r"(barrier), "r"(rank)
      : "memory");
}
#endif

// VECTORS: every row of A and BT is 16-byte aligned (K % 8 == 0: cp.async); otherwise values are loaded one
// by one. TMA_LOADS (Hopper, VECTORS): the copy engine loads the stages through the tensor maps.
// Separate instantiations keep the slow paths' code out of the fast main loop.
template <bool VECTORS, bool TMA_LOADS>
__device__ __forceinline__ void product(const TensorMap& a_tiles, const TensorMap& b_tiles,
                                        const element_t* __restrict__ A, const element_t* __restrict__ B,
                                        element_t* __restrict__ C, int M, int N, int K, unsigned char* shared_bytes) {
  // The swizzle is a function of the address bits, so tiles start on 1024-byte boundaries.
  const unsigned shared_base = (static_cast<unsigned>(__cvta_generic_to_shared(shared_bytes)) + 1023u) & ~1023u;
  // Blocks per cluster: CLUSTER on the TMA path with the producer (where the plan asks for clusters of it), else 1.
  constexpr int cluster = TMA_LOADS && PRODUCER == 1 ? CLUSTER : 1;

  // A cluster's blocks take `cluster` consecutive tile rows of one tile column (they share its B tiles), so
  // the tiles are numbered by cluster rows; rank is the block's place in its (cluster, 1, 1) cluster. Rows of
  // a last cluster row beyond M read as zeros and are not stored.
  const int tiles_m = (M + BM * cluster - 1) / (BM * cluster);
  const int tiles_n = (N + BN - 1) / BN;
  const int blocks_per_group = GROUP * tiles_n;
  const unsigned tile = blockIdx.x / cluster;  // unsigned, as blockIdx.x: the divisions below stay unsigned
  const int rank = blockIdx.x % cluster;
  const int group = tile / blocks_per_group;
  const int first_tile_m = group * GROUP;
  const int group_rows = min(tiles_m - first_tile_m, GROUP);
  const int in_group = tile % blocks_per_group;
  const int block_m = ((first_tile_m + in_group % group_rows) * cluster + rank) * BM;
  const int block_n = (in_group / group_rows) * BN;
  const int k_tiles = (K + BK - 1) / BK;

  const int tid = threadIdx.x;
  const int warpgroup = tid / 128;
  constexpr int STAGE_BYTES = (BM + BN) * BK * 2;

  // The TMA path (Hopper) is warp-specialised: the block has one warpgroup more than WARPGROUPS, the
  // producer, one thread of which issues every tile's copies into the ring as soon as its stage is free.
  // Stage s has two mbarriers: `full`, whose phase n completes when the boxes of the stage's n-th tile have
  // landed, and `empty`, whose phase n completes when every consumer warp has finished reading that tile.
  // The consumers wait for `full` only: no block-wide barrier per tile, and all STAGES stages in flight.
  __shared__ __align__(8) unsigned long long stage_full[STAGES], stage_empty[STAGES];
  const unsigned full_base = static_cast<unsigned>(__cvta_generic_to_shared(stage_full));
  const unsigned empty_base = static_cast<unsigned>(__cvta_generic_to_shared(stage_empty));

  // Tile t of the reduction into stage `stage`: the A rows at a_tile, the B rows at a_tile + BM * 128.
  // With TMA_LOADS the calling thread issues the copies onto the stage's `full` barrier; otherwise every
  // thread issues its cp.async share.
  auto load_stage = [&](int stage, int t) {
    const unsigned a_tile = shared_base + stage * STAGE_BYTES;
    const int k0 = t * BK;
    if (TMA_LOADS) {
#if WARPGROUP_MMA
      const unsigned barrier = full_base + 8 * stage;
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(barrier), "r"(STAGE_BYTES)
                   : "memory");
      load_box(a_tile, a_tiles, k0, block_m, barrier);
      // B's own rows k0 .. k0 + 63, one box of 64 columns at a time (N-major); in a cluster each block
      // loads its share of the boxes into every block's stage.
#pragma unroll
      for (int i = rank * (BN / 64 / cluster); i < (rank + 1) * (BN / 64 / cluster); ++i) {
        const unsigned destination = a_tile + BM * 128 + i * 8192;
        if (cluster > 1) {
          load_box_to_cluster(destination, b_tiles, block_n + 64 * i, k0, barrier, (1u << cluster) - 1);
        } else {
          load_box(destination, b_tiles, block_n + 64 * i, k0, barrier);
        }
      }
#endif
      return;
    }
    load_rows<BM, VECTORS>(a_tile, A, M, block_m, k0, K);
    load_rows<BN, VECTORS>(a_tile + BM * 128, B, N, block_n, k0, K);  // B is BT here (N x K)
  };

  float d[NPARTS][64];
#pragma unroll
  for (int j = 0; j < NPARTS; ++j) {
#pragma unroll
    for (int e = 0; e < 64; ++e) d[j][e] = 0.0f;
  }

#if WARPGROUP_MMA
  if (TMA_LOADS) {
    if (tid == 0) {
      for (int s = 0; s < STAGES; ++s) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(full_base + 8 * s));
        // In a cluster every block's producer writes the stage in every block: it waits for all their warps.
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(empty_base + 8 * s), "r"(THREADS / 32 * cluster));
      }
      asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    if (cluster > 1) {
      // The launch must have made the clusters the tiles assume; and no block may copy into another or
      // arrive on its barriers before that block has initialised them.
      unsigned blocks;
      asm("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(blocks));
      if (blocks != cluster) __trap();
      asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
    } else {
      __syncthreads();
    }
  }
  if (TMA_LOADS && PRODUCER == 1) {
    if (warpgroup == WARPGROUPS) {
      // The producer: tile t goes into stage t % STAGES once the consumers have released the tile before it
      // there (t - STAGES).
      if (tid == THREADS) {
        for (int t = 0; t < k_tiles; ++t) {
          if (t >= STAGES) wait_barrier(empty_base + 8 * (t % STAGES), (t / STAGES - 1) & 1);
          load_stage(t % STAGES, t);
        }
      }
      return;
    }
    for (int kt = 0; kt < k_tiles; ++kt) {
      // The copy engine wrote the stage through the async proxy, which the tensor cores read too: the
      // barrier's phase is all there is to wait for.
      wait_barrier(full_base + 8 * (kt % STAGES), (kt / STAGES) & 1);
      const unsigned a_tile = shared_base + (kt % STAGES) * STAGE_BYTES;
      mma_tile<true>(d, a_tile, a_tile + BM * 128, warpgroup);
      // wait_group 1: tile kt - 1's instructions are done, so each warp releases its stage to the producer.
      if (kt > 0 && tid % 32 == 0) {
        const unsigned released = empty_base + 8 * ((kt - 1) % STAGES);
        if (cluster > 1) {
#pragma unroll
          for (int r = 0; r < cluster; ++r) arrive_in_block(released, r);
        } else {
          asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(released) : "memory");
        }
      }
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    // The other blocks may still arrive on this block's barriers: it must not exit before they are done
    // with them (their arrival here, this block's wait after the epilogue).
    if (cluster > 1) asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
  } else
#endif
  {
    // Without the producer (cp.async, or TMA with PRODUCER = 0): the block's threads load each tile STAGES - 2
    // tiles ahead, every thread its cp.async share, or thread 0 the TMA boxes; the tensor cores work on tile t
    // while tile t - 1's instructions may still run (wgmma.wait_group 1), so the ring holds the tile being
    // read, the one being finished and STAGES - 2 in flight. The block is WARPGROUPS warpgroups here (the
    // plan adds the producer only where it runs): another shape would copy past the tiles.
    if (blockDim.x != THREADS) __trap();
    constexpr int AHEAD = STAGES - 2;
#pragma unroll
    for (int s = 0; s < AHEAD; ++s) {
      if (s < k_tiles && (!TMA_LOADS || tid == 0)) load_stage(s, s);
      asm volatile("cp.async.commit_group;\n" ::);
    }

    for (int kt = 0; kt < k_tiles; ++kt) {
      // Tile kt has landed: the TMA stage's barrier phase, or this thread's copies, whose writes are then made
      // visible to the tensor cores' (async) proxy, and the barrier makes everyone's visible. The barrier also
      // follows every warpgroup's wgmma.wait_group 1 of the last step, so tile kt - 2's stage is free for the
      // next copies.
      if (TMA_LOADS) {
#if WARPGROUP_MMA
        wait_barrier(full_base + 8 * (kt % STAGES), (kt / STAGES) & 1);
#endif
      } else {
        asm volatile("cp.async.wait_group %0;\n" ::"n"(AHEAD - 1));
#if WARPGROUP_MMA
        asm volatile("fence.proxy.async.shared::cta;\n" ::);
#endif
      }
      __syncthreads();
      const int next = kt + AHEAD;
      if (next < k_tiles && (!TMA_LOADS || tid == 0)) load_stage(next % STAGES, next);
      asm volatile("cp.async.commit_group;\n" ::);

      const unsigned a_tile = shared_base + (kt % STAGES) * STAGE_BYTES;
      const unsigned b_tile = a_tile + BM * 128;
#if WARPGROUP_MMA
      mma_tile<TMA_LOADS>(d, a_tile, b_tile, warpgroup);
#else
      // mma.sync into the same accumulator layout: warp w of the warpgroup computes its 16 rows across all
      // BN columns, fragments from the swizzled tiles with ldmatrix (B is K-major: no transpose).
      const int lane = tid % 32;
#pragma unroll
      for (int kk = 0; kk < BK / 16; ++kk) {
        unsigned a[4];
        const int r = warpgroup * 64 + ((tid % 128) / 32) * 16 + lane % 16;
        load_matrix_x4(a, a_tile + r * 128 + (((kk * 2 + lane / 16) ^ (r & 7)) << 4));
#pragma unroll
        for (int n16 = 0; n16 < BN / 16; ++n16) {
          unsigned b[4];
          const int n = n16 * 16 + lane % 8 + 8 * (lane / 16);
          load_matrix_x4(b, b_tile + n * 128 + (((kk * 2 + (lane / 8) % 2) ^ (n & 7)) << 4));
          mma_16816(&d[n16 / 8][(2 * n16 % 16) * 4], a, b[0], b[1]);
          mma_16816(&d[n16 / 8][(2 * n16 % 16) * 4 + 4], a, b[2], b[3]);
        }
      }
#endif
    }
#if WARPGROUP_MMA
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#endif
    asm volatile("cp.async.wait_group 0;\n" ::);
  }

  // Accumulator layout: warp w of the warpgroup holds rows 16 w + lane / 4 (+ 8); register 4 q + e of part
  // j is column j * 128 + 8 q + 2 (lane % 4) + (e % 2), row + 8 when e >= 2.
  // The tile goes to C through shared memory, so that the global stores are whole 16-byte chunks of C's
  // rows, a warp writing contiguous bytes (straight from the registers a warp's store would touch 8 rows,
  // a part of a sector in each). The ring is free once every consumer warp is past its last instruction:
  // a barrier among the consumers (THREADS; the producer warpgroup has left). Chunk c of tile row r is
  // stored at chunk c ^ (r % 8) of its row, which keeps both the fragment writes and the chunk reads free
  // of bank conflicts.
  constexpr int OUT_CHUNK = 16 / sizeof(element_t);  // values per 16-byte chunk
  constexpr int ROW_CHUNKS = BN / OUT_CHUNK;
  constexpr int ROW_BYTES = BN * sizeof(element_t);
  static_assert(BM * ROW_BYTES <= STAGES * STAGE_BYTES, "the C tile fits in the ring");
  const int lane = tid % 32;
  const int fragment_row = warpgroup * 64 + ((tid % 128) / 32) * 16 + lane / 4;
  asm volatile("bar.sync 1, %0;\n" ::"n"(THREADS) : "memory");
#pragma unroll
  for (int j = 0; j < NPARTS; ++j) {
#pragma unroll
    for (int q = 0; q < 16; ++q) {
      const int col = j * 128 + q * 8 + 2 * (lane % 4);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = fragment_row + h * 8;
        const unsigned address = shared_base + row * ROW_BYTES + (((col / OUT_CHUNK) ^ (row % 8)) << 4) +
                                 (col % OUT_CHUNK) * sizeof(element_t);
        const float v0 = d[j][4 * q + 2 * h], v1 = d[j][4 * q + 2 * h + 1];
        const __nv_bfloat162 pair = __floats2bfloat162_rn(v0, v1);
        asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(address), "r"(*reinterpret_cast<const unsigned*>(&pair)) : "memory");
      }
    }
  }
  asm volatile("bar.sync 1, %0;\n" ::"n"(THREADS) : "memory");
  const bool whole_chunks = N % OUT_CHUNK == 0;  // rows 16-byte aligned
#pragma unroll 4
  for (int i = tid; i < BM * ROW_CHUNKS; i += THREADS) {
    const int r = i / ROW_CHUNKS, c = i % ROW_CHUNKS;
    const int row = block_m + r, col = block_n + c * OUT_CHUNK;
    if (row >= M || col >= N) continue;
    uint4 chunk;
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(chunk.x), "=r"(chunk.y), "=r"(chunk.z), "=r"(chunk.w)
                 : "r"(shared_base + r * ROW_BYTES + ((c ^ (r % 8)) << 4)));
    element_t* out = C + (long long)row * N + col;
    if (whole_chunks) {
      *reinterpret_cast<uint4*>(out) = chunk;
    } else {
      const element_t* values = reinterpret_cast<const element_t*>(&chunk);
      for (int e = 0; e < OUT_CHUNK && col + e < N; ++e) out[e] = values[e];
    }
  }
#if WARPGROUP_MMA
  if (cluster > 1) asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
#endif
}

// The TMA path's block has a producer warpgroup beside the WARPGROUPS consumers (only the bound: with TMA = 0
// a tighter one leaves the cp.async path more registers).
extern "C" __global__ void __launch_bounds__(THREADS + 128 * (WARPGROUP_MMA && TMA == 1 && PRODUCER == 1), 1)
matmul_bf16(const __grid_constant__ TensorMap a_tiles, const __grid_constant__ TensorMap b_tiles,
            const element_t* __restrict__ A, const element_t* __restrict__ B, element_t* __restrict__ C, int M, int N,
            int K) {
  extern __shared__ unsigned char shared_bytes[];
#if WARPGROUP_MMA
  // The plan builds the maps under the same condition (its when(...)).
  if (TMA == 1 && K % 8 == 0 && N % 8 == 0) {
    product<true, true>(a_tiles, b_tiles, A, B, C, M, N, K, shared_bytes);
    return;
  }
  // With TMA = 1 only sizes the maps cannot take (odd rows) come here: the value-by-value path, whose few
  // registers fit beside the producer's launch bound (the cp.async instance does not, and is left out).
  if (TMA == 1) {
    product<false, false>(a_tiles, b_tiles, A, B, C, M, N, K, shared_bytes);
    return;
  }
#endif
  if (K % 8 == 0) {
    product<true, false>(a_tiles, b_tiles, A, B, C, M, N, K, shared_bytes);
  } else {
    product<false, false>(a_tiles, b_tiles, A, B, C, M, N, K, shared_bytes);
  }
}
