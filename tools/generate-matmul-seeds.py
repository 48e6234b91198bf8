"""Writes the tensor-core matrix-product CUDA seeds from one template, so that they stay the same kernel on
three element types (each candidate must be one self-contained file): matmul_fp16 and matmul_bf16, and the
float32 products matmul and linear_gelu on TF32 (3xTF32, see TF32X3_DESIGN below).

usage: python3 tools/generate-matmul-seeds.py [TASKS_DIR]   (default: tasks/ of this checkout)

The seeds: Hopper warpgroup MMA (wgmma m64n128k16, or k8 for TF32) from 128-byte-swizzled shared tiles, both
operands K-major (the half-precision B transposed once into a workspace, the float32 operands split into
workspaces); mma.sync on the same tiles where wgmma is not available; with TMA = 1 on Hopper the stages are
loaded by the copy engine through the plan's tensor maps. Edit the template here, regenerate, and run the
task suite's tests.
"""
import sys
from dataclasses import dataclass
from pathlib import Path

OUT = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "tasks"

ACC = ", ".join(f"%{i}" for i in range(64))
ACC_OPERANDS = ", ".join(f'"+f"(d[{i}])' for i in range(64))
WIDE_ACC = ", ".join(f"%{i}" for i in range(128))
WIDE_ACC_OPERANDS = ", ".join(f'"+f"(d[{i // 64}][{i % 64}])' for i in range(128))


# Where the TMA path runs (the maps' and the kernel's condition): Hopper, and rows of 16-byte multiples in A and B.
HALF_TMA_PATH = "TMA == 1 && COMPUTE_CAPABILITY == 90 && K % 8 == 0 && N % 8 == 0"


def half_plan(task):
    tma = HALF_TMA_PATH
    cl = f"(1 + (CLUSTER == 2 && PRODUCER == 1 && {tma}))"  # blocks per cluster: 2 only where the kernel multicasts
    return (f"// @workspace BT: {'float16' if 'fp16' in task else 'bfloat16'}[N * K]\n"
              f"// @tensor_map a_tiles = A[K, M] box[64, 64 * WARPGROUPS] swizzle=128B when({tma})\n"
              f"// @tensor_map b_tiles = B[N, K] box[64, 64] swizzle=128B when({tma})\n"
              f"// @launch transpose_b<<<ceil_div(N, 64) * ceil_div(K, 64) * (1 - ({tma})) + ({tma}), 256>>>(B, BT, K, N, ({tma}))\n"
              f"// @launch {task}<<<{cl} * ceil_div(M, {cl} * 64 * WARPGROUPS) * ceil_div(N, BN), 128 * (WARPGROUPS + (PRODUCER == 1 && {tma})), STAGES * (64 * WARPGROUPS + BN) * 128 + 1024>>>(a_tiles, b_tiles, A, BT, C, M, N, K) cluster=dim3({cl}, 1, 1)")


HALF_TRANSPOSE = """
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
"""

HALF_DESIGN = """\
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
"""


HALF_TUNES = """\
// @tune WARPGROUPS = 2 in {1, 2}
// @tune BN = 256 in {128, 256}
// @tune STAGES = 4 in {3, 4, 5, 6}
// @tune GROUP = 8 in {4, 8, 16}
// @tune TMA = 1 in {0, 1}
// @tune PRODUCER = 1 in {0, 1}
// @tune CLUSTER = 1 in {1, 2}
// @require STAGES * (64 * WARPGROUPS + BN) * 128 + 1024 <= SMEM_PER_BLOCK_OPTIN
// @require WARPGROUPS == 2 || BN == 128
"""

# The float32 products keep a second set of accumulators (the running total), so one instruction's columns
# (BN = 128) is what the registers hold.
TF32X3_TUNES = """\
// @tune WARPGROUPS = 2 in {1, 2}
// @tune STAGES = 4 in {3, 4, 5, 6}
// @tune GROUP = 8 in {4, 8, 16}
// @tune TMA = 1 in {0, 1}
// @tune PRODUCER = 1 in {0, 1}
// @tune PROMOTE = 4 in {1, 2, 4}
// @require STAGES * (64 * WARPGROUPS + 128) * 128 + 1024 <= SMEM_PER_BLOCK_OPTIN
"""

# Promotion (float32 products): the tensor cores add each instruction's products into the accumulators
# with truncation, an error of up to an ulp of the accumulator per instruction, which over 3 KP / 8
# instructions grows far past float32 FMA's; every PROMOTE tiles the accumulators are added into a float32
# total on the CUDA cores (round to nearest) and restart from zero, so they only ever hold a few tiles' sum.
PROMOTE_DECLARE = """  float total[NPARTS][64];
#pragma unroll
  for (int j = 0; j < NPARTS; ++j) {
#pragma unroll
    for (int e = 0; e < 64; ++e) total[j][e] = 0.0f;
  }
"""

PROMOTE_STEP = """      // Every PROMOTE tiles, and after the last: the accumulators into the total (once their instructions
      // are done), then from zero again.
      if ((kt + 1) % PROMOTE == 0 || kt + 1 == k_tiles) {
#if WARPGROUP_MMA
        asm volatile("wgmma.wait_group.sync.aligned 0;\\n" ::: "memory");
        fence_accumulators(d);
#endif
#pragma unroll
        for (int j = 0; j < NPARTS; ++j) {
#pragma unroll
          for (int e = 0; e < 64; ++e) {
            total[j][e] += d[j][e];
            d[j][e] = 0.0f;
          }
        }
      }
"""


# The kernel's choice of loads: 16-byte chunks where K allows them (TMA on Hopper as the plan says), value by
# value elsewhere.
HALF_DISPATCH = """\
#if WARPGROUP_MMA
  // The plan builds the maps under the same condition (its when(...)).
  if (TMA == 1 && K % 8 == 0 && N % 8 == 0) {
    product<true, true>(ARGUMENTS);
    return;
  }
  // With TMA = 1 only sizes the maps cannot take (odd rows) come here: the value-by-value path, whose few
  // registers fit beside the producer's launch bound (the cp.async instance does not, and is left out).
  if (TMA == 1) {
    product<false, false>(ARGUMENTS);
    return;
  }
#endif
  if (K % 8 == 0) {
    product<true, false>(ARGUMENTS);
  } else {
    product<false, false>(ARGUMENTS);
  }
""".replace("{", "{{").replace("}", "}}").replace("ARGUMENTS", "{arguments}")

# The float32 products' workspaces have rows of a multiple of 32 values: 16-byte chunks always, so the
# value-by-value instance is never compiled.
TF32X3_DISPATCH = """\
#if WARPGROUP_MMA
  // The plan builds the maps under the same condition (its when(...)).
  if (TMA == 1) {
    product<true, true>(ARGUMENTS);
    return;
  }
#endif
  // The workspaces' rows are multiples of 16 bytes: cp.async chunks everywhere.
  product<true, false>(ARGUMENTS);
""".replace("{", "{{").replace("}", "}}").replace("ARGUMENTS", "{arguments}")


def source(seed):
    """The seed's text: `seed` gives what differs between the element types (see Seed)."""
    return f"""// {seed.title} seed for Hopper tensor cores (sm_90a): warpgroup MMA (wgmma.mma_async, float32 accumulators)
{seed.design}{seed.tunes}{seed.plan}
{seed.include}
#define BM (64 * WARPGROUPS)
{seed.defines}#define BK {128 // seed.bytes}
#define THREADS (128 * WARPGROUPS)
#define NPARTS (BN / 128)  // m64n128k{seed.k_mma} instructions per k{seed.k_mma} step and warpgroup
// Warpgroup MMA needs the architecture-specific target (sm_90a, what the evaluator compiles for on
// Hopper); elsewhere (sm_80, sm_89, plain sm_90) the same tiles feed mma.sync.
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define WARPGROUP_MMA 1
#else
#define WARPGROUP_MMA 0
#endif

// CUtensorMap (the plan's @tensor_map, passed by value): 128 bytes, 64-byte aligned.
struct __align__(64) TensorMap {{
  unsigned long long opaque[16];
}};

typedef {seed.element} element_t;
#define ZERO_ELEMENT {seed.zero}
{seed.prepass}
__device__ __forceinline__ void copy16(unsigned destination, const void* source, int bytes) {{
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\\n" ::"r"(destination), "l"(source), "r"(bytes));
}}

// {seed.chunk} values one by one (rows not 16-byte aligned), zeros where !row_inside or beyond `left` values; each
// value goes straight to shared memory, so that this path holds few registers.
__device__ __forceinline__ void load{seed.chunk}(unsigned destination, const element_t* __restrict__ matrix, long long offset,
                                      bool row_inside, int left) {{
#pragma unroll
  for (int e = 0; e < {seed.chunk}; ++e) {{
    const element_t value = row_inside && e < left ? matrix[offset + e] : ZERO_ELEMENT;
    asm volatile("st.shared.b{8 * seed.bytes} [%0], %1;\\n" ::"r"(destination + {seed.bytes} * e), "{seed.store_constraint}"(*reinterpret_cast<const {seed.store_bits}*>(&value)));
  }}
}}

// One operand's tile for k values k0 .. k0 + {128 // seed.bytes - 1}: ROWS rows of {128 // seed.bytes} values (128 bytes, eight 16-byte
// chunks) from a K-major matrix of `rows` rows, starting at row `first_row`, chunk q of row r stored at
// chunk q ^ (r % 8) (the 128-byte swizzle). A and BT are both loaded this way.
template <int ROWS, bool VECTORS>
__device__ __forceinline__ void load_rows(unsigned tile, const element_t* __restrict__ matrix, int rows, int first_row,
                                          int k0, int K) {{
#pragma unroll(VECTORS ? 16 : 1)  // the value-by-value path stays a loop: few registers
  for (int l = 0; l < ROWS * 8 / THREADS; ++l) {{
    const int c = threadIdx.x + l * THREADS;
    const int r = c / 8, q = c % 8;
    const int row = first_row + r, k = k0 + q * {seed.chunk};
    const unsigned destination = tile + r * 128 + ((q ^ (r & 7)) << 4);
    if (VECTORS) {{
      const bool inside = row < rows && k < K;
      copy16(destination, inside ? matrix + (long long)row * K + k : matrix, inside ? 16 : 0);
    }} else {{
      load{seed.chunk}(destination, matrix, (long long)row * K + k, row < rows, K - k);
    }}
  }}
}}

// Shared-memory matrix descriptor: start address, leading and stride byte offsets (16-byte units), 128B swizzle.
__device__ __forceinline__ unsigned long long descriptor(unsigned address, unsigned leading, unsigned stride) {{
  return (unsigned long long)((address & 0x3FFFF) >> 4) | ((unsigned long long)(leading >> 4) << 16) |
         ((unsigned long long)(stride >> 4) << 32) | (1ull << 62);
}}

__device__ __forceinline__ void load_matrix_x4(unsigned (&r)[4], unsigned address) {{
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{%0, %1, %2, %3}}, [%4];\\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}}

__device__ __forceinline__ void mma_168{seed.k_mma}(float* c, const unsigned (&a)[4], unsigned b0, unsigned b1) {{
  asm volatile(
      "mma.sync.aligned.m16n8k{seed.k_mma}.row.col.f32.{seed.mma_type}.{seed.mma_type}.f32 {{%0, %1, %2, %3}}, {{%4, %5, %6, %7}}, {{%8, %9}}, "
      "{{%0, %1, %2, %3}};\\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}}

#if WARPGROUP_MMA
{seed.instruction_template}__device__ __forceinline__ void mma_64x128x{seed.k_mma}(float (&d)[64], unsigned long long a, unsigned long long b) {{
  asm volatile(
      "{{\\n.reg .pred p;\\nsetp.ne.b32 p, %66, 0;\\n"
      "wgmma.mma_async.sync.aligned.m64n128k{seed.k_mma}.f32.{seed.mma_type}.{seed.mma_type} {{{ACC}}}, %64, %65, p, 1, 1{seed.transpose_immediates.format(n=67)};\\n}}\\n"
      : {ACC_OPERANDS}
      : "l"(a), "l"(b), "r"(1){seed.transpose_operand});
}}

{seed.wide_mma}
// Step kk (k{seed.k_mma}) of the warpgroup's 64 x BN product from the stage's tiles; B_N_MAJOR: the B tile holds B's
// own rows (N-major: the half-precision products' TMA path), else BN rows of the K-major operand.
template <bool B_N_MAJOR>
__device__ __forceinline__ void mma_step(float (&d)[NPARTS][64], unsigned long long a_desc, unsigned b_tile, int kk) {{
{seed.mma_step_body}}}

// Pins the accumulators in place: no ordinary instruction may touch them while instructions are in flight
// (otherwise ptxas serializes the wgmma pipeline).
__device__ __forceinline__ void fence_accumulators(float (&d)[NPARTS][64]) {{
#pragma unroll
  for (int j = 0; j < NPARTS; ++j) {{
#pragma unroll
    for (int e = 0; e < 64; ++e) asm volatile("" : "+f"(d[j][e])::"memory");
  }}
}}

// One tile's instructions: the warpgroup's 64 x BN product of the stage's A tile and B tile, committed, then
// waiting for the tile before it to finish (wgmma.wait_group 1).
template <bool B_N_MAJOR>
__device__ __forceinline__ void mma_tile(float (&d)[NPARTS][64], unsigned a_tile, unsigned b_tile, int warpgroup) {{
  fence_accumulators(d);
  asm volatile("wgmma.fence.sync.aligned;\\n" ::: "memory");
#pragma unroll
  for (int kk = 0; kk < BK / {seed.k_mma}; ++kk) {{
    const unsigned long long a_desc = descriptor(a_tile + warpgroup * 64 * 128 + kk * 32, 16, 1024);
    mma_step<B_N_MAJOR>(d, a_desc, b_tile, kk);
  }}
  asm volatile("wgmma.commit_group.sync.aligned;\\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 1;\\n" ::: "memory");
  fence_accumulators(d);
}}

// One box of a tensor map at coordinates (k, row) into shared memory, completing on `barrier`.
__device__ __forceinline__ void load_box(unsigned destination, const TensorMap& map, int k, int row, unsigned barrier) {{
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {{%2, %3}}], [%4];\\n"
      ::"r"(destination), "l"(reinterpret_cast<unsigned long long>(&map)), "r"(k), "r"(row), "r"(barrier)
      : "memory");
}}

// Waits until the barrier's phase `parity` has completed (the stage's boxes have landed).
__device__ __forceinline__ void wait_barrier(unsigned barrier, unsigned parity) {{
  asm volatile(
      "{{\\n.reg .pred done;\\nWAIT_%=:\\nmbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\\n@!done bra WAIT_%=;\\n}}\\n"
      ::"r"(barrier), "r"(parity)
      : "memory");
}}

// The same box into the same shared-memory offset of every block of the cluster in `blocks` (a bit per rank),
// completing on each block's barrier at `barrier`'s offset: read once from L2 for all of them (multicast).
__device__ __forceinline__ void load_box_to_cluster(unsigned destination, const TensorMap& map, int k, int row,
                                                    unsigned barrier, unsigned short blocks) {{
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {{%2, %3}}], [%4], %5;\\n"
      ::"r"(destination), "l"(reinterpret_cast<unsigned long long>(&map)), "r"(k), "r"(row), "r"(barrier), "h"(blocks)
      : "memory");
}}

// Arrives on the barrier at `barrier`'s shared-memory offset in block `rank` of the cluster. The arrival has
// the default (CTA-scope) release, as the local one: a cluster-scope release would also wait for this warp's
// warpgroup MMA still in flight, serialising the tensor cores with every release.
__device__ __forceinline__ void arrive_in_block(unsigned barrier, unsigned rank) {{
  asm volatile(
      "{{\\n.reg .b32 remote;\\nmapa.shared::cluster.u32 remote, %0, %1;\\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\\n}}\\n"
      ::"r"(barrier), "r"(rank)
      : "memory");
}}
#endif

{seed.layout.functions}// VECTORS: every row of A and BT is 16-byte aligned (K % {seed.chunk} == 0: cp.async); otherwise values are loaded one
// by one. TMA_LOADS (Hopper, VECTORS): the copy engine loads the stages through the tensor maps.
// Separate instantiations keep the slow paths' code out of the fast main loop.
template <bool VECTORS, bool TMA_LOADS>
__device__ __forceinline__ void product({seed.layout.parameters(seed)}, unsigned char* shared_bytes) {{
  // The swizzle is a function of the address bits, so tiles start on 1024-byte boundaries.
  const unsigned shared_base = (static_cast<unsigned>(__cvta_generic_to_shared(shared_bytes)) + 1023u) & ~1023u;
  // Blocks per cluster: CLUSTER on the TMA path with the producer (where the plan asks for clusters of it), else 1.
  constexpr int cluster = TMA_LOADS && PRODUCER == 1 ? CLUSTER : 1;
{seed.layout.tiles}
  const int tid = threadIdx.x;
  const int warpgroup = tid / 128;
  constexpr int STAGE_BYTES = (BM + BN) * BK * {seed.bytes};

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
  auto load_stage = [&](int stage, int t) {{
    const unsigned a_tile = shared_base + stage * STAGE_BYTES;
{seed.layout.tile_coordinates}    if (TMA_LOADS) {{
#if WARPGROUP_MMA
      const unsigned barrier = full_base + 8 * stage;
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\\n" ::"r"(barrier), "r"(STAGE_BYTES)
                   : "memory");
{seed.layout.tma_loads(seed)}#endif
      return;
    }}
{seed.layout.copy_loads}  }};

  float d[NPARTS][64];
#pragma unroll
  for (int j = 0; j < NPARTS; ++j) {{
#pragma unroll
    for (int e = 0; e < 64; ++e) d[j][e] = 0.0f;
  }}
{seed.promote_declare}
#if WARPGROUP_MMA
  if (TMA_LOADS) {{
    if (tid == 0) {{
      for (int s = 0; s < STAGES; ++s) {{
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\\n" ::"r"(full_base + 8 * s));
        // In a cluster every block's producer writes the stage in every block: it waits for all their warps.
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\\n" ::"r"(empty_base + 8 * s), "r"(THREADS / 32 * cluster));
      }}
      asm volatile("fence.mbarrier_init.release.cluster;\\n" ::: "memory");
    }}
    if (cluster > 1) {{
      // The launch must have made the clusters the tiles assume; and no block may copy into another or
      // arrive on its barriers before that block has initialised them.
      unsigned blocks;
      asm("mov.u32 %0, %%cluster_nctarank;\\n" : "=r"(blocks));
      if (blocks != cluster) __trap();
      asm volatile("barrier.cluster.arrive.release.aligned;\\nbarrier.cluster.wait.acquire.aligned;\\n" ::: "memory");
    }} else {{
      __syncthreads();
    }}
  }}
  if (TMA_LOADS && PRODUCER == 1) {{
    if (warpgroup == WARPGROUPS) {{
      // The producer: tile t goes into stage t % STAGES once the consumers have released the tile before it
      // there (t - STAGES).
      if (tid == THREADS) {{
        for (int t = 0; t < k_tiles; ++t) {{
          if (t >= STAGES) wait_barrier(empty_base + 8 * (t % STAGES), (t / STAGES - 1) & 1);
          load_stage(t % STAGES, t);
        }}
      }}
      return;
    }}
    for (int kt = 0; kt < k_tiles; ++kt) {{
      // The copy engine wrote the stage through the async proxy, which the tensor cores read too: the
      // barrier's phase is all there is to wait for.
      wait_barrier(full_base + 8 * (kt % STAGES), (kt / STAGES) & 1);
      const unsigned a_tile = shared_base + (kt % STAGES) * STAGE_BYTES;
      mma_tile<{seed.tma_b_n_major}>(d, a_tile, a_tile + BM * 128, warpgroup);
      // wait_group 1: tile kt - 1's instructions are done, so each warp releases its stage to the producer.
      if (kt > 0 && tid % 32 == 0) {{
        const unsigned released = empty_base + 8 * ((kt - 1) % STAGES);
        if (cluster > 1) {{
#pragma unroll
          for (int r = 0; r < cluster; ++r) arrive_in_block(released, r);
        }} else {{
          asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\\n" ::"r"(released) : "memory");
        }}
      }}
{seed.promote_step}    }}
    asm volatile("wgmma.wait_group.sync.aligned 0;\\n" ::: "memory");
    // The other blocks may still arrive on this block's barriers: it must not exit before they are done
    // with them (their arrival here, this block's wait after the epilogue).
    if (cluster > 1) asm volatile("barrier.cluster.arrive.release.aligned;\\n" ::: "memory");
  }} else
#endif
  {{
    // Without the producer (cp.async, or TMA with PRODUCER = 0): the block's threads load each tile STAGES - 2
    // tiles ahead, every thread its cp.async share, or thread 0 the TMA boxes; the tensor cores work on tile t
    // while tile t - 1's instructions may still run (wgmma.wait_group 1), so the ring holds the tile being
    // read, the one being finished and STAGES - 2 in flight. The block is WARPGROUPS warpgroups here (the
    // plan adds the producer only where it runs): another shape would copy past the tiles.
    if (blockDim.x != THREADS) __trap();
    constexpr int AHEAD = STAGES - 2;
#pragma unroll
    for (int s = 0; s < AHEAD; ++s) {{
      if (s < k_tiles && (!TMA_LOADS || tid == 0)) load_stage(s, s);
      asm volatile("cp.async.commit_group;\\n" ::);
    }}

    for (int kt = 0; kt < k_tiles; ++kt) {{
      // Tile kt has landed: the TMA stage's barrier phase, or this thread's copies, whose writes are then made
      // visible to the tensor cores' (async) proxy, and the barrier makes everyone's visible. The barrier also
      // follows every warpgroup's wgmma.wait_group 1 of the last step, so tile kt - 2's stage is free for the
      // next copies.
      if (TMA_LOADS) {{
#if WARPGROUP_MMA
        wait_barrier(full_base + 8 * (kt % STAGES), (kt / STAGES) & 1);
#endif
      }} else {{
        asm volatile("cp.async.wait_group %0;\\n" ::"n"(AHEAD - 1));
#if WARPGROUP_MMA
        asm volatile("fence.proxy.async.shared::cta;\\n" ::);
#endif
      }}
      __syncthreads();
      const int next = kt + AHEAD;
      if (next < k_tiles && (!TMA_LOADS || tid == 0)) load_stage(next % STAGES, next);
      asm volatile("cp.async.commit_group;\\n" ::);

      const unsigned a_tile = shared_base + (kt % STAGES) * STAGE_BYTES;
      const unsigned b_tile = a_tile + BM * 128;
#if WARPGROUP_MMA
      mma_tile<{seed.generic_b_n_major}>(d, a_tile, b_tile, warpgroup);
#else
      // mma.sync into the same accumulator layout: warp w of the warpgroup computes its 16 rows across all
      // BN columns, fragments from the swizzled tiles with ldmatrix (B is K-major: no transpose).
      const int lane = tid % 32;
#pragma unroll
      for (int kk = 0; kk < BK / {seed.k_mma}; ++kk) {{
        unsigned a[4];
        const int r = warpgroup * 64 + ((tid % 128) / 32) * 16 + lane % 16;
        load_matrix_x4(a, a_tile + r * 128 + (((kk * 2 + lane / 16) ^ (r & 7)) << 4));
#pragma unroll
        for (int n16 = 0; n16 < BN / 16; ++n16) {{
          unsigned b[4];
          const int n = n16 * 16 + lane % 8 + 8 * (lane / 16);
          load_matrix_x4(b, b_tile + n * 128 + (((kk * 2 + (lane / 8) % 2) ^ (n & 7)) << 4));
          mma_168{seed.k_mma}(&d[n16 / 8][(2 * n16 % 16) * 4], a, b[0], b[1]);
          mma_168{seed.k_mma}(&d[n16 / 8][(2 * n16 % 16) * 4 + 4], a, b[2], b[3]);
        }}
      }}
#endif
{seed.promote_step}    }}
#if WARPGROUP_MMA
    asm volatile("wgmma.wait_group.sync.aligned 0;\\n" ::: "memory");
#endif
    asm volatile("cp.async.wait_group 0;\\n" ::);
  }}

{seed.layout.epilogue(seed)}#if WARPGROUP_MMA
  if (cluster > 1) asm volatile("barrier.cluster.wait.acquire.aligned;\\n" ::: "memory");
#endif
}}

// The TMA path's block has a producer warpgroup beside the WARPGROUPS consumers (only the bound: with TMA = 0
// a tighter one leaves the cp.async path more registers).
extern "C" __global__ void __launch_bounds__(THREADS + 128 * (WARPGROUP_MMA && TMA == 1 && PRODUCER == 1), 1)
{seed.task}({seed.layout.kernel_parameters(seed)}) {{
  extern __shared__ unsigned char shared_bytes[];
{seed.dispatch.format(arguments=seed.layout.arguments(seed))}}}
"""


TF32X3_ACCURACY = """\
// reading both operands from shared memory through matrix descriptors, with float32 accuracy: each float32
// operand x is split into two TF32 numbers, big = tf32(x) and small = tf32(x - big) (round to nearest; TF32
// keeps 11 significant bits, the pair 22 of float32's 24), and the product is taken as
//   {a} {b}{t} = {a}_big {b}_big{t} + {a}_big {b}_small{t} + {a}_small {b}_big{t}
// (3xTF32): the dropped {a}_small {b}_small{t} and the pair's rounding are about 2^-22 of each product (plain
// TF32, 2^-11 per product, fails the tolerance). The tensor cores multiply TF32 exactly but add each
// instruction's products into the float32 accumulators with truncation, which over thousands of
// instructions costs far more than float32 FMA's rounding; so every PROMOTE tiles (PROMOTE * 4
// instructions) the accumulators are added into a float32 total on the CUDA cores, rounding to nearest,
// and start again from zero. Three TF32 products at the tensor cores' TF32 rate still beat float32 FMA on
// the CUDA cores (H100: 495 against 67 TFLOPS dense).
"""

TF32X3_PIPELINE = """\
// K advances in 32-wide tiles (128 bytes) through a STAGES-deep ring in shared memory. With TMA = 1 (Hopper)
// the copy engine loads the tiles through the plan's tensor maps; with PRODUCER = 1 as well the block is
// warp-specialised: a producer warpgroup beside the consumers, one thread of which issues each tile as soon
// as the consumers have released its stage (mbarriers `full` and `empty` per stage), all STAGES stages in
// flight and no block-wide barrier per tile; with PRODUCER = 0 thread 0 issues them STAGES - 2 tiles ahead.
// Otherwise every thread copies its share with cp.async STAGES - 2 tiles ahead. Either way the tensor cores
// work on tile t while tile t - 1's instructions may still run (wgmma.wait_group 1).
// Shared tiles use the 128-byte swizzle (16-byte chunk c of 128-byte row r stored at chunk c ^ (r % 8)),
// the layout the descriptors name, which also keeps the copies and the tensor-core reads free of bank
// conflicts.
"""

TF32X3_FALLBACK = """\
// Warpgroup MMA exists on Hopper's architecture-specific target (sm_90a) only; compiled for another
// target (an A100's sm_80, or plain sm_90) the same tiles feed mma.sync.m16n8k8 (TF32) through ldmatrix
// into the same accumulator layout: correct everywhere, fast on Hopper.
"""

TF32X3_DESIGN = TF32X3_ACCURACY + """\
// The split runs first, into K-major workspaces whose rows hold three segments of KP = round_up(K, 32)
// values, {a}W = [big | big | small] and {b}W = [big | small | big] (zeros beyond K), so that the product
// is one TF32 matrix product {a}W {b}W^T over 3 KP: {transpose_note}
// A block of WARPGROUPS consumer warpgroups computes a (64 * WARPGROUPS) x BN tile of {out}; each warpgroup
// owns 64 rows and issues m64n128k8 instructions over its BN columns, accumulating in registers.
""" + TF32X3_PIPELINE + """\
// The workspaces' rows are multiples of 32 values, so every 16-byte chunk is wholly inside or
// outside them; rows beyond M or N read as zeros. Blocks are numbered in groups of GROUP tile rows for L2 reuse.
""" + TF32X3_FALLBACK

# Rounds to TF32: the float32 products' prepasses split with it.
TO_TF32 = """
// x rounded to TF32 (to nearest, ties away from zero): the low 13 mantissa bits become zero.
__device__ __forceinline__ float to_tf32(float x) {
  unsigned bits;
  asm("cvt.rna.tf32.f32 %0, %1;\\n" : "=r"(bits) : "f"(x));
  return __uint_as_float(bits);
}
"""

SPLIT_ROWS = """
// X (rows x K, K-major) -> XW (rows x 3 KP): row r holds three KP-long segments, the big parts in two of them
// and the small parts in segment `small_segment`; values beyond K are zeros. Four values per thread.
extern "C" __global__ void __launch_bounds__(256) split_rows(const float* __restrict__ X, float* __restrict__ XW,
                                                          int rows, int K, int KP, int small_segment) {
  const int quads = KP / 4;
  const long long i = (long long)blockIdx.x * 256 + threadIdx.x;
  if (i >= (long long)rows * quads) return;
  const int r = (int)(i / quads), k = (int)(i % quads) * 4;
  float big[4], small[4];
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    const float x = k + e < K ? X[(long long)r * K + k + e] : 0.0f;
    big[e] = to_tf32(x);
    small[e] = to_tf32(x - big[e]);
  }
  float* out = XW + (long long)r * 3 * KP + k;
#pragma unroll
  for (int segment = 0; segment < 3; ++segment) {
    const float* v = segment == small_segment ? small : big;
    *reinterpret_cast<float4*>(out + segment * KP) = make_float4(v[0], v[1], v[2], v[3]);
  }
}
"""

SPLIT_COLUMNS = """
// B (K x N) -> BW (N x segments KP), transposed through a 32 x 32 shared tile: row n holds [big | small] of
// column n of B, and with segments == 3 [big | small | big]; zeros beyond K. blockIdx.z picks a matrix of
// a batch of them (contiguous, each K x N in, N x segments KP out).
extern "C" __global__ void __launch_bounds__(256) split_columns(const float* __restrict__ B, float* __restrict__ BW,
                                                             int K, int N, int KP, int segments) {
  B += (long long)blockIdx.z * K * N;
  BW += (long long)blockIdx.z * N * segments * KP;
  __shared__ float tile[32][33];
  const int n0 = blockIdx.x * 32, k0 = blockIdx.y * 32;
  const int tx = threadIdx.x % 32, ty = threadIdx.x / 32;
  for (int r = ty; r < 32; r += 8) {
    const int k = k0 + r, n = n0 + tx;
    tile[r][tx] = k < K && n < N ? B[(long long)k * N + n] : 0.0f;
  }
  __syncthreads();
  for (int r = ty; r < 32; r += 8) {
    const int n = n0 + r;
    if (n >= N) continue;
    const float x = tile[tx][r];
    const float big = to_tf32(x), small = to_tf32(x - big);
    float* out = BW + (long long)n * segments * KP + k0 + tx;
    out[0] = big;
    out[KP] = small;
    if (segments == 3) out[2 * KP] = big;
  }
}
"""

GELU = """
__device__ __forceinline__ float gelu_tanh(float z) {
  const float c = 0.7978845608028654f;  // sqrt(2 / pi)
  return 0.5f * z * (1.0f + tanhf(c * (z + 0.044715f * z * z * z)));
}
"""


def tf32x3_plan(kernel, a, b, b_split, arguments):
    """The float32 products' plans: the two splits into workspaces, then the TF32 product over 3 KP."""
    kp = "round_up(K, 32)"
    when = "when(TMA == 1 && COMPUTE_CAPABILITY == 90)"
    return (f"// @workspace {a}W: float32[M * 3 * {kp}]\n"
            f"// @workspace {b}W: float32[N * 3 * {kp}]\n"
            f"// @tensor_map a_tiles = {a}W[3 * {kp}, M] box[32, 64 * WARPGROUPS] swizzle=128B {when}\n"
            f"// @tensor_map b_tiles = {b}W[3 * {kp}, N] box[32, 128] swizzle=128B {when}\n"
            f"// @launch split_rows<<<ceil_div(M * {kp}, 1024), 256>>>({a}, {a}W, M, K, {kp}, 2)\n"
            f"// @launch {b_split}\n"
            f"// @launch {kernel}<<<ceil_div(M, 64 * WARPGROUPS) * ceil_div(N, 128), 128 * (WARPGROUPS + (PRODUCER == 1 && TMA == 1 && COMPUTE_CAPABILITY == 90)), "
            f"STAGES * (64 * WARPGROUPS + 128) * 128 + 1024>>>(a_tiles, b_tiles, {arguments}, M, N, 3 * {kp})")


# The warpgroup accumulators' layout, which both of MatrixProduct's epilogues read.
ACCUMULATOR_LAYOUT = """\
  // Accumulator layout: warp w of the warpgroup holds rows 16 w + lane / 4 (+ 8); register 4 q + e of part
  // j is column j * 128 + 8 q + 2 (lane % 4) + (e % 2), row + 8 when e >= 2.
"""


class MatrixProduct:
    """The product's shape (what the tiles are and where they come from): rows of A times rows of BT, both
    K-major, into a row-major M x N output. The hooks below are the parts of the kernel that depend on it."""
    functions = ""  # device functions the loads need beyond the shared ones

    @staticmethod
    def parameters(seed):
        return (f"const TensorMap& a_tiles, const TensorMap& b_tiles,\n"
                f"                                        const element_t* __restrict__ A, const element_t* __restrict__ B,{seed.extra_parameters}\n"
                f"                                        {seed.out_type}* __restrict__ C, int M, int N, int K")

    tiles = """
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
"""
    tile_coordinates = "    const int k0 = t * BK;\n"
    @staticmethod
    def tma_loads(seed):
        if seed.mma_type == "tf32":  # BW's rows: K-major
            return ("      load_box(a_tile, a_tiles, k0, block_m, barrier);\n"
                    "      load_box(a_tile + BM * 128, b_tiles, k0, block_n, barrier);\n")
        return ("      load_box(a_tile, a_tiles, k0, block_m, barrier);\n"
                "      // B's own rows k0 .. k0 + 63, one box of 64 columns at a time (N-major); in a cluster each block\n"
                "      // loads its share of the boxes into every block's stage.\n"
                "#pragma unroll\n"
                "      for (int i = rank * (BN / 64 / cluster); i < (rank + 1) * (BN / 64 / cluster); ++i) {\n"
                "        const unsigned destination = a_tile + BM * 128 + i * 8192;\n"
                "        if (cluster > 1) {\n"
                "          load_box_to_cluster(destination, b_tiles, block_n + 64 * i, k0, barrier, (1u << cluster) - 1);\n"
                "        } else {\n"
                "          load_box(destination, b_tiles, block_n + 64 * i, k0, barrier);\n"
                "        }\n"
                "      }\n")
    copy_loads = ("    load_rows<BM, VECTORS>(a_tile, A, M, block_m, k0, K);\n"
                  "    load_rows<BN, VECTORS>(a_tile + BM * 128, B, N, block_n, k0, K);  // B is BT here (N x K)\n")

    @staticmethod
    def epilogue(seed):
        return MatrixProduct.staged_epilogue(seed) if seed.stage_pair else MatrixProduct.register_epilogue(seed)

    @staticmethod
    def staged_epilogue(seed):
        return ACCUMULATOR_LAYOUT + f"""  // The tile goes to C through shared memory, so that the global stores are whole 16-byte chunks of C's
  // rows, a warp writing contiguous bytes (straight from the registers a warp's store would touch 8 rows,
  // a part of a sector in each). The ring is free once every consumer warp is past its last instruction:
  // a barrier among the consumers (THREADS; the producer warpgroup has left). Chunk c of tile row r is
  // stored at chunk c ^ (r % 8) of its row, which keeps both the fragment writes and the chunk reads free
  // of bank conflicts.
  constexpr int OUT_CHUNK = 16 / sizeof({seed.out_type});  // values per 16-byte chunk
  constexpr int ROW_CHUNKS = BN / OUT_CHUNK;
  constexpr int ROW_BYTES = BN * sizeof({seed.out_type});
  static_assert(BM * ROW_BYTES <= STAGES * STAGE_BYTES, "the C tile fits in the ring");
  const int lane = tid % 32;
  const int fragment_row = warpgroup * 64 + ((tid % 128) / 32) * 16 + lane / 4;
  asm volatile("bar.sync 1, %0;\\n" ::"n"(THREADS) : "memory");
#pragma unroll
  for (int j = 0; j < NPARTS; ++j) {{
#pragma unroll
    for (int q = 0; q < 16; ++q) {{
      const int col = j * 128 + q * 8 + 2 * (lane % 4);
#pragma unroll
      for (int h = 0; h < 2; ++h) {{
        const int row = fragment_row + h * 8;
        const unsigned address = shared_base + row * ROW_BYTES + (((col / OUT_CHUNK) ^ (row % 8)) << 4) +
                                 (col % OUT_CHUNK) * sizeof({seed.out_type});
        const float v0 = {seed.result}[j][4 * q + 2 * h], v1 = {seed.result}[j][4 * q + 2 * h + 1];
        {seed.stage_pair}
      }}
    }}
  }}
  asm volatile("bar.sync 1, %0;\\n" ::"n"(THREADS) : "memory");
  const bool whole_chunks = N % OUT_CHUNK == 0;  // rows 16-byte aligned
#pragma unroll 4
  for (int i = tid; i < BM * ROW_CHUNKS; i += THREADS) {{
    const int r = i / ROW_CHUNKS, c = i % ROW_CHUNKS;
    const int row = block_m + r, col = block_n + c * OUT_CHUNK;
    if (row >= M || col >= N) continue;
    uint4 chunk;
    asm volatile("ld.shared.v4.u32 {{%0, %1, %2, %3}}, [%4];\\n"
                 : "=r"(chunk.x), "=r"(chunk.y), "=r"(chunk.z), "=r"(chunk.w)
                 : "r"(shared_base + r * ROW_BYTES + ((c ^ (r % 8)) << 4)));
    {seed.out_type}* out = C + (long long)row * N + col;
    if (whole_chunks) {{
      *reinterpret_cast<uint4*>(out) = chunk;
    }} else {{
      const {seed.out_type}* values = reinterpret_cast<const {seed.out_type}*>(&chunk);
      for (int e = 0; e < OUT_CHUNK && col + e < N; ++e) out[e] = values[e];
    }}
  }}
"""

    @staticmethod
    def register_epilogue(seed):
        return ACCUMULATOR_LAYOUT + f"""  const int lane = tid % 32;
  const int row0 = block_m + warpgroup * 64 + ((tid % 128) / 32) * 16 + lane / 4;
  const bool pairs = N % 2 == 0;
#pragma unroll
  for (int j = 0; j < NPARTS; ++j) {{
#pragma unroll
    for (int q = 0; q < 16; ++q) {{
      const int col = block_n + j * 128 + q * 8 + 2 * (lane % 4);
#pragma unroll
      for (int h = 0; h < 2; ++h) {{
        const int row = row0 + h * 8;
        if (row >= M) continue;
        {seed.out_type}* out = C + (long long)row * N + col;
        const float v0 = {seed.finish.format(v=f"{seed.result}[j][4 * q + 2 * h]", col="col")}, v1 = {seed.finish.format(v=f"{seed.result}[j][4 * q + 2 * h + 1]", col="col + 1")};
        if (pairs && col + 1 < N) {{
          {seed.store_pair}
        }} else {{
          if (col < N) {seed.store_one.format(i=0, v="v0")}
          if (col + 1 < N) {seed.store_one.format(i=1, v="v1")}
        }}
      }}
    }}
  }}
"""

    @staticmethod
    def kernel_parameters(seed):
        return (f"const __grid_constant__ TensorMap a_tiles, const __grid_constant__ TensorMap b_tiles,\n"
                f"            const element_t* __restrict__ A, const element_t* __restrict__ B,{seed.extra_parameters} {seed.out_type}* __restrict__ C, int M, int N,\n"
                f"            int K")

    @staticmethod
    def arguments(seed):
        return f"a_tiles, b_tiles, A, B,{seed.extra_arguments} C, M, N, K, shared_bytes"


CONV_DESIGN = TF32X3_ACCURACY.format(a="x", b="weight", t="", out="y") + """\
// As an implicit matrix product: rows are the output pixels, columns the output channels, and the
// reduction runs over the 9 taps, the 3 products and the input channels. The splits run first, into
// workspaces laid out for it: xW holds the image channels-last (N, H, W, 2 CP; CP = round_up(C, 32)), each
// pixel's [big | small] channels, and weightW the weights as (9, K, 3 CP), each tap's and output channel's
// [big | small | big]; zeros beyond C. A reduction tile (32 channels of one tap and one product) is then,
// for A, the block's pixels shifted by the tap, a TW x TH box of xW's rows, and for B, 128 rows of
// weightW: both K-major, the only layout TF32 instructions read. The copy engine loads that box through a
// four-dimensional tensor map whose out-of-bounds elements read as zeros, which is the convolution's zero
// padding; the cp.async path tests each pixel.
// A block of WARPGROUPS consumer warpgroups computes 64 * WARPGROUPS pixels (TH = 64 * WARPGROUPS / TW image
// rows of TW) times 128 output channels; each warpgroup owns 64 pixels and issues m64n128k8 instructions.
""" + TF32X3_PIPELINE + TF32X3_FALLBACK

CONV_TUNES = """\
// @tune WARPGROUPS = 2 in {1, 2}
// @tune STAGES = 4 in {3, 4, 5, 6}
// @tune TW = 64 in {16, 32, 64}
// @tune TMA = 1 in {0, 1}
// @tune PRODUCER = 1 in {0, 1}
// @tune PROMOTE = 4 in {1, 2, 4}
// @require STAGES * (64 * WARPGROUPS + 128) * 128 + 1024 <= SMEM_PER_BLOCK_OPTIN
// @require N <= 65535 && round_up(C, 32) / 32 <= 65535
"""

CONV_PLAN = """\
// @workspace xW: float32[N * H * W * 2 * round_up(C, 32)]
// @workspace weightW: float32[9 * K * 3 * round_up(C, 32)]
// @tensor_map x_tiles = xW[2 * round_up(C, 32), W, H, N] box[32, TW, 64 * WARPGROUPS / TW, 1] swizzle=128B when(TMA == 1 && COMPUTE_CAPABILITY == 90)
// @tensor_map weight_tiles = weightW[3 * round_up(C, 32), K, 9] box[32, 128, 1] swizzle=128B when(TMA == 1 && COMPUTE_CAPABILITY == 90)
// @launch split_columns<<<dim3(ceil_div(H * W, 32), round_up(C, 32) / 32, N), 256>>>(x, xW, C, H * W, round_up(C, 32), 2)
// @launch split_weights<<<ceil_div(9 * K * round_up(C, 32), 256), 256>>>(weight, weightW, C, K, round_up(C, 32))
// @launch conv2d_3x3<<<N * ceil_div(H, 64 * WARPGROUPS / TW) * ceil_div(W, TW) * ceil_div(K, 128), 128 * (WARPGROUPS + (PRODUCER == 1 && TMA == 1 && COMPUTE_CAPABILITY == 90)), STAGES * (64 * WARPGROUPS + 128) * 128 + 1024>>>(x_tiles, weight_tiles, xW, weightW, bias, y, N, C, K, H, W)"""

SPLIT_WEIGHTS = """
// weight (K, C, 3, 3) -> weightW (9, K, 3 CP): row (tap, k) holds [big | small | big] of weight[k, :, tap],
// zeros beyond C (590 KB read at the timing size, served by the caches).
extern "C" __global__ void __launch_bounds__(256) split_weights(const float* __restrict__ weight, float* __restrict__ weightW,
                                                             int C, int K, int CP) {
  const long long i = (long long)blockIdx.x * 256 + threadIdx.x;
  if (i >= 9LL * K * CP) return;
  const int c = (int)(i % CP), k = (int)(i / CP % K), tap = (int)(i / CP / K);
  const float x = c < C ? weight[((long long)k * C + c) * 9 + tap] : 0.0f;
  const float big = to_tf32(x), small = to_tf32(x - big);
  float* out = weightW + ((long long)tap * K + k) * 3 * CP + c;
  out[0] = big;
  out[CP] = small;
  out[2 * CP] = big;
}
"""


class Convolution3x3:
    """The 3x3 convolution as an implicit matrix product (see CONV_DESIGN): pixel tiles of xW shifted by each
    tap times rows of weightW, into y (N, K, H, W) plus the bias."""
    functions = """// The A tile of one tap: the block's BM pixels (TH rows of TW) shifted to image row h0 and column w0,
// 32 values from value `channel` of each pixel's row of xW (`row_length` values per pixel). Pixels outside
// the image (the convolution's zero padding) read as zeros.
__device__ __forceinline__ void load_pixels(unsigned tile, const float* __restrict__ xW, int n, int h0, int w0, int H,
                                            int W, int row_length, int channel) {
#pragma unroll
  for (int l = 0; l < BM * 8 / THREADS; ++l) {
    const int c = threadIdx.x + l * THREADS;
    const int r = c / 8, q = c % 8;
    const int h = h0 + r / TW, w = w0 + r % TW;
    const bool inside = h >= 0 && h < H && w >= 0 && w < W;
    const unsigned destination = tile + r * 128 + ((q ^ (r & 7)) << 4);
    copy16(destination, inside ? xW + ((long long)(n * H + h) * W + w) * row_length + channel + q * 4 : xW,
           inside ? 16 : 0);
  }
}

#if WARPGROUP_MMA
// A box of a three- or four-dimensional tensor map at the given coordinates (innermost first).
__device__ __forceinline__ void load_box_3d(unsigned destination, const TensorMap& map, int c0, int c1, int c2,
                                            unsigned barrier) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\\n"
      ::"r"(destination), "l"(reinterpret_cast<unsigned long long>(&map)), "r"(c0), "r"(c1), "r"(c2), "r"(barrier)
      : "memory");
}

__device__ __forceinline__ void load_box_4d(unsigned destination, const TensorMap& map, int c0, int c1, int c2, int c3,
                                            unsigned barrier) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];\\n"
      ::"r"(destination), "l"(reinterpret_cast<unsigned long long>(&map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3),
        "r"(barrier)
      : "memory");
}
#endif

"""

    @staticmethod
    def parameters(seed):
        return ("const TensorMap& x_tiles, const TensorMap& weight_tiles,\n"
                "                                        const float* __restrict__ xW, const float* __restrict__ weightW,\n"
                "                                        const float* __restrict__ bias, float* __restrict__ y, int N, int C, int K,\n"
                "                                        int H, int W")

    tiles = """
  // Block b: output channels block_k .. block_k + 127 of pixel tile b / tiles_k, whose tiles run along the
  // image rows, then down, then through the images.
  const int CP = (C + 31) / 32 * 32;
  const int c_tiles = CP / BK;
  const int tiles_k = (K + BN - 1) / BN, tiles_w = (W + TW - 1) / TW, tiles_h = (H + TH - 1) / TH;
  int b = blockIdx.x;
  const int block_k = b % tiles_k * BN;
  b /= tiles_k;
  const int w0 = b % tiles_w * TW;
  b /= tiles_w;
  const int h0 = b % tiles_h * TH;
  const int n = b / tiles_h;
  // The reduction: 9 taps x 3 products x c_tiles tiles of 32 channels.
  const int k_tiles = 27 * c_tiles;
"""
    tile_coordinates = """    const int tap = t / (3 * c_tiles), part = t % (3 * c_tiles) / c_tiles, c0 = t % c_tiles * BK;
    const int di = tap / 3 - 1, dj = tap % 3 - 1;
    // Product `part` multiplies x's [big, big, small][part] by the weights' [big, small, big][part].
    const int x_channel = (part == 2 ? CP : 0) + c0, weight_channel = part * CP + c0;
"""
    @staticmethod
    def tma_loads(seed):
        return ("      load_box_4d(a_tile, x_tiles, x_channel, w0 + dj, h0 + di, n, barrier);\n"
                "      load_box_3d(a_tile + BM * 128, weight_tiles, weight_channel, block_k, tap, barrier);\n")
    copy_loads = ("    load_pixels(a_tile, xW, n, h0 + di, w0 + dj, H, W, 2 * CP, x_channel);\n"
                  "    load_rows<BN, true>(a_tile + BM * 128, weightW + (long long)tap * K * 3 * CP, K, block_k, weight_channel, 3 * CP);\n")

    @staticmethod
    def epilogue(seed):
        return """  // Accumulator layout: warp w of the warpgroup holds tile rows (pixels) 16 w + lane / 4 (+ 8); register
  // 4 q + e is output channel 8 q + 2 (lane % 4) + (e % 2), the pixel 8 rows on when e >= 2. The lanes of
  // one lane % 4 hold 8 consecutive pixels of one channel: 32-byte runs of y.
  const int lane = tid % 32;
  const int row0 = warpgroup * 64 + ((tid % 128) / 32) * 16 + lane / 4;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int r = row0 + half * 8;
    const int h = h0 + r / TW, w = w0 + r % TW;
    if (h >= H || w >= W) continue;
    float* out = y + ((long long)n * K * H + h) * W + w;
#pragma unroll
    for (int q = 0; q < 16; ++q) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int k = block_k + q * 8 + 2 * (lane % 4) + e;
        if (k < K) out[(long long)k * H * W] = total[0][4 * q + 2 * half + e] + bias[k];
      }
    }
  }
"""

    @staticmethod
    def kernel_parameters(seed):
        return ("const __grid_constant__ TensorMap x_tiles, const __grid_constant__ TensorMap weight_tiles,\n"
                "           const float* __restrict__ xW, const float* __restrict__ weightW, const float* __restrict__ bias,\n"
                "           float* __restrict__ y, int N, int C, int K, int H, int W")

    @staticmethod
    def arguments(seed):
        return "x_tiles, weight_tiles, xW, weightW, bias, y, N, C, K, H, W, shared_bytes"

@dataclass
class Seed:
    """What differs between the generated products: the element type, the tensor-core instruction's operand
    type, the plan, the kernels that run before the product, and the epilogue."""
    task: str
    title: str          # the first words of the seed's description
    design: str         # the rest of its design comment
    plan: str           # its @workspace, @tensor_map and @launch lines
    include: str        # the header of its element type, as an #include line (or "")
    element: str        # the operands' element type as stored in shared memory
    zero: str           # that type's zero
    mma_type: str       # the instructions' operand type (f16, bf16, tf32)
    prepass: str        # kernels (and functions) before the product's
    out_type: str = "float"
    store_pair: str = "*reinterpret_cast<float2*>(out) = make_float2(v0, v1);"
    store_one: str = "out[{i}] = {v};"
    finish: str = "{v}"  # the stored value from accumulator {v} of column {col}
    extra_parameters: str = ""  # kernel parameters between the operands and the output
    extra_arguments: str = ""
    tunes: str = HALF_TUNES  # the @tune and @require lines
    defines: str = ""        # macros the tunes do not give
    promote_declare: str = ""  # the running total's declaration (PROMOTE_DECLARE), or ""
    promote_step: str = ""     # its update in the k loops (PROMOTE_STEP, indented for them), or ""
    dispatch: str = HALF_DISPATCH  # the kernel's choice of product instance, over {arguments}
    stage_pair: str = ""  # MatrixProduct: writes v0, v1 at shared `address` (the epilogue through shared memory), or ""
    layout: type = MatrixProduct   # the tiles' shape: MatrixProduct or Convolution3x3

    @property
    def wide_mma(self):  # m64n256 (the whole BN = 256 in one instruction) for the half-precision products
        if self.mma_type == "tf32":
            return ""
        return (f"""
// Both parts' columns (BN = 256) in one instruction: the A tile is read once for all 256 columns.
{self.instruction_template}__device__ __forceinline__ void mma_64x256x{self.k_mma}(float (&d)[2][64], unsigned long long a, unsigned long long b) {{
  asm volatile(
      "{{\\n.reg .pred p;\\nsetp.ne.b32 p, %130, 0;\\n"
      "wgmma.mma_async.sync.aligned.m64n256k{self.k_mma}.f32.{self.mma_type}.{self.mma_type} {{{WIDE_ACC}}}, %128, %129, p, 1, 1{self.transpose_immediates.format(n=131)};\\n}}\\n"
      : {WIDE_ACC_OPERANDS}
      : "l"(a), "l"(b), "r"(1){self.transpose_operand});
}}
""")

    @property
    def mma_step_body(self):
        if self.mma_type == "tf32":  # B is K-major on every path
            return (f"#pragma unroll\n"
                    f"  for (int j = 0; j < NPARTS; ++j) mma_64x128x{self.k_mma}(d[j], a_desc, descriptor(b_tile + j * 128 * 128 + kk * 32, 16, 1024));\n")
        return ("""  // K-major B (BT's rows, 128 bytes each): step kk is 32 bytes into every row, groups of 8 rows 1024 bytes
  // apart. N-major B (TMA: B's own rows, one 64 x 64 box per 64 columns, 8192 bytes each): step kk is 16 rows
  // (2048 bytes) down, groups of 8 rows 1024 bytes apart, groups of 64 columns 8192 bytes apart.
  const unsigned long long b_desc =
      B_N_MAJOR ? descriptor(b_tile + kk * 2048, 8192, 1024) : descriptor(b_tile + kk * 32, 16, 1024);
#if NPARTS == 2
"""
                f"  mma_64x256x{self.k_mma}<B_N_MAJOR>(d, a_desc, b_desc);\n"
                f"#else\n"
                f"  mma_64x128x{self.k_mma}<B_N_MAJOR>(d[0], a_desc, b_desc);\n"
                f"#endif\n")

    @property
    def tma_b_n_major(self):  # the half products' TMA path reads B as it is (N-major); TF32 operands are K-major only
        return "false" if self.mma_type == "tf32" else "true"

    @property
    def generic_b_n_major(self):  # the same in the loop without the producer, which runs TMA and cp.async alike
        return "false" if self.mma_type == "tf32" else "TMA_LOADS"

    @property
    def instruction_template(self):
        return "" if self.mma_type == "tf32" else "template <bool TRANSPOSE_B>\n"

    @property
    def transpose_operand(self):
        return "" if self.mma_type == "tf32" else ', "n"(TRANSPOSE_B ? 1 : 0)'

    @property
    def result(self):  # the array the epilogue stores
        return "total" if self.promote_step else "d"

    @property
    def bytes(self):
        return 4 if self.mma_type == "tf32" else 2

    @property
    def chunk(self):  # values per 16-byte chunk
        return 16 // self.bytes

    @property
    def k_mma(self):  # k of one instruction: 32 bytes of each operand's row
        return 32 // self.bytes

    @property
    def store_constraint(self):
        return "r" if self.bytes == 4 else "h"

    @property
    def store_bits(self):
        return "unsigned" if self.bytes == 4 else "unsigned short"

    @property
    def transpose_immediates(self):  # TF32 operands are K-major only: the instruction has no transpose flags
        return "" if self.mma_type == "tf32" else ", 0, %{n}"


# The float32 products load B's tile as one box: no multicast (one block per cluster).
TF32X3 = dict(tunes=TF32X3_TUNES, defines="#define BN 128\n#define CLUSTER 1\n", promote_declare=PROMOTE_DECLARE,
              promote_step=PROMOTE_STEP, dispatch=TF32X3_DISPATCH)

SEEDS = [
    Seed("matmul_fp16", "Half-precision matrix product", HALF_DESIGN, half_plan("matmul_fp16"),
         "#include <cuda_fp16.h>\n", "__half", "__float2half(0.0f)", "f16", HALF_TRANSPOSE,
         stage_pair='asm volatile("st.shared.v2.f32 [%0], {%1, %2};\\n" ::"r"(address), "f"(v0), "f"(v1) : "memory");'),
    Seed("matmul_bf16", "bfloat16 matrix product", HALF_DESIGN, half_plan("matmul_bf16"),
         "#include <cuda_bf16.h>\n", "__nv_bfloat16", "__float2bfloat16(0.0f)", "bf16", HALF_TRANSPOSE,
         out_type="element_t", store_pair="*reinterpret_cast<__nv_bfloat162*>(out) = __floats2bfloat162_rn(v0, v1);",
         store_one="out[{i}] = __float2bfloat16_rn({v});",
         stage_pair=("const __nv_bfloat162 pair = __floats2bfloat162_rn(v0, v1);\n"
                     "        asm volatile(\"st.shared.b32 [%0], %1;\\n\" ::\"r\"(address), \"r\"(*reinterpret_cast<const unsigned*>(&pair)) : \"memory\");")),
    Seed("matmul", "Float32 matrix product", TF32X3_DESIGN.format(
             a="A", b="B", t="", out="C", transpose_note="B (K x N) is transposed on the way, so that both are K-major,\n"
             "// the only layout TF32 instructions read."),
         tf32x3_plan("matmul", "A", "B",
                     "split_columns<<<dim3(ceil_div(N, 32), round_up(K, 32) / 32), 256>>>(B, BW, K, N, round_up(K, 32), 3)",
                     "AW, BW, C"),
         "", "float", "0.0f", "tf32", TO_TF32 + SPLIT_ROWS + SPLIT_COLUMNS, **TF32X3),
    Seed("linear_gelu", "Fused linear + bias + GELU", TF32X3_DESIGN.format(
             a="x", b="weight", t="^T", out="y", transpose_note="x and weight are K-major already, the only layout TF32\n"
             "// instructions read. The epilogue adds the bias and applies GELU (tanh form, as the task defines it)\n"
             "// before the only store of y."),
         tf32x3_plan("linear_gelu", "x", "weight",
                     "split_rows<<<ceil_div(N * round_up(K, 32), 1024), 256>>>(weight, weightW, N, K, round_up(K, 32), 1)",
                     "xW, weightW, bias, y"),
         "", "float", "0.0f", "tf32", TO_TF32 + SPLIT_ROWS + GELU,
         finish="col < N ? gelu_tanh({v} + bias[{col}]) : 0.0f",
         extra_parameters=" const float* __restrict__ bias,", extra_arguments=" bias,", **TF32X3),
    Seed("conv2d_3x3", "3x3 convolution", CONV_DESIGN, CONV_PLAN, "", "float", "0.0f", "tf32",
         TO_TF32 + SPLIT_COLUMNS + SPLIT_WEIGHTS, layout=Convolution3x3,
         **dict(TF32X3, tunes=CONV_TUNES, defines="#define BN 128\n#define CLUSTER 1\n#define TH (BM / TW)  // image rows per pixel tile\n")),
]

for seed in SEEDS:
    (OUT / seed.task).mkdir(parents=True, exist_ok=True)
    (OUT / seed.task / "seed.cu").write_text(source(seed))
print("wrote the seeds under", OUT)
