// 3x3 convolution seed for Hopper tensor cores (sm_90a): warpgroup MMA (wgmma.mma_async, float32 accumulators)
// reading both operands from shared memory through matrix descriptors, with float32 accuracy: each float32
// operand x is split into two TF32 numbers, big = tf32(x) and small = tf32(x - big) (round to nearest; TF32
// keeps 11 significant bits, the pair 22 of float32's 24), and the product is taken as
//   x weight = x_big weight_big + x_big weight_small + x_small weight_big
// (3xTF32): the dropped x_small weight_small and the pair's rounding are about 2^-22 of each product (plain
// TF32, 2^-11 per product, fails the tolerance). The tensor cores multiply TF32 exactly but add each
// instruction's products into the float32 accumulators with truncation, which over thousands of
// instructions costs far more than float32 FMA's rounding; so every PROMOTE tiles (PROMOTE * 4
// instructions) the accumulators are added into a float32 total on the CUDA cores, rounding to nearest,
// and start again from zero. Three TF32 products at the tensor cores' TF32 rate still beat float32 FMA on
// the CUDA cores (H100: 495 against 67 TFLOPS dense).
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
// Warpgroup MMA exists on Hopper's architecture-specific target (sm_90a) only; compiled for another
// target (an A100's sm_80, or plain sm_90) the same tiles feed mma.sync.m16n8k8 (TF32) through ldmatrix
// into the same accumulator layout: correct everywhere, fast on Hopper.
// @tune WARPGROUPS = 2 in {1, 2}
// @tune STAGES = 4 in {3, 4, 5, 6}
// @tune TW = 64 in {16, 32, 64}
// @tune TMA = 1 in {0, 1}
// @tune PRODUCER = 1 in {0, 1}
// @tune PROMOTE = 4 in {1, 2, 4}
// @require STAGES * (64 * WARPGROUPS + 128) * 128 + 1024 <= SMEM_PER_BLOCK_OPTIN
// @require N <= 65535 && round_up(C, 32) / 32 <= 65535
// @workspace xW: float32[N * H * W * 2 * round_up(C, 32)]
// @workspace weightW: float32[9 * K * 3 * round_up(C, 32)]
// @tensor_map x_tiles = xW[2 * round_up(C, 32), W, H, N] box[32, TW, 64 * WARPGROUPS / TW, 1] swizzle=128B when(TMA == 1 && COMPUTE_CAPABILITY == 90)
// @tensor_map weight_tiles = weightW[3 * round_up(C, 32), K, 9] box[32, 128, 1] swizzle=128B when(TMA == 1 && COMPUTE_CAPABILITY == 90)
// @launch split_columns<<<dim3(ceil_div(H * W, 32), round_up(C, 32) / 32, N), 256>>>(x, xW, C, H * W, round_up(C, 32), 2)
// @launch split_weights<<<ceil_div(9 * K * round_up(C, 32), 256), 256>>>(weight, weightW, C, K, round_up(C, 32))
// @launch conv2d_3x3<<<N * ceil_div(H, 64 * WARPGROUPS / TW) * ceil_div(W, TW) * ceil_div(K, 128), 128 * (WARPGROUPS + (PRODUCER == 1 && TMA == 1 && COMPUTE_CAPABILITY == 90)), STAGES * (64 * WARPGROUPS + 128) * 128 + 1024>>>(x_tiles, weight_tiles, xW, weightW, bias, y, N, C, K, H, W)

#define BM (64 * WARPGROUPS)
#define BN 128
#define CLUSTER 1
#define TH (BM / TW)  // image rows per pixel tile
#define BK 32
#define THREADS (128 * WARPGROUPS)
#define NPARTS (BN / 128)  // m64n128k8 instructions per k8 step and warpgroup
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

typedef float element_t;
#define ZERO_ELEMENT 0.0f

// x rounded to TF32 (to nearest, ties away from zero): the low 13 mantissa bits become zero.
__device__ __forceinline__ float to_tf32(float x) {
  unsigned bits;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(bits) : "f"(x));
  return __uint_as_float(bits);
}

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

__device__ __forceinline__ void copy16(unsigned destination, const void* source, int bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(destination), "l"(source), "r"(bytes));
}

// 4 values one by one (rows not 16-byte aligned), zeros where !row_inside or beyond `left` values; each
// value goes straight to shared memory, so that this path holds few registers.
__device__ __forceinline__ void load4(unsigned destination, const element_t* __restrict__ matrix, long long offset,
                                      bool row_inside, int left) {
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    const element_t value = row_inside && e < left ? matrix[offset + e] : ZERO_ELEMENT;
    asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(destination + 4 * e), "r"(*reinterpret_cast<const unsigned*>(&value)));
  }
}

// One operand's tile for k values k0 .. k0 + 31: ROWS rows of 32 values (128 bytes, eight 16-byte
// chunks) from a K-major matrix of `rows` rows, starting at row `first_row`, chunk q of row r stored at
// chunk q ^ (r % 8) (the 128-byte swizzle). A and BT are both loaded this way.
template <int ROWS, bool VECTORS>
__device__ __forceinline__ void load_rows(unsigned tile, const element_t* __restrict__ matrix, int rows, int first_row,
                                          int k0, int K) {
#pragma unroll(VECTORS ? 16 : 1)  // the value-by-value path stays a loop: few registers
  for (int l = 0; l < ROWS * 8 / THREADS; ++l) {
    const int c = threadIdx.x + l * THREADS;
    const int r = c / 8, q = c % 8;
    const int row = first_row + r, k = k0 + q * 4;
    const unsigned destination = tile + r * 128 + ((q ^ (r & 7)) << 4);
    if (VECTORS) {
      const bool inside = row < rows && k < K;
      copy16(destination, inside ? matrix + (long long)row * K + k : matrix, inside ? 16 : 0);
    } else {
      load4(destination, matrix, (long long)row * K + k, row < rows, K - k);
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

__device__ __forceinline__ void mma_1688(float* c, const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

#if WARPGROUP_MMA
__device__ __forceinline__ void mma_64x128x8(float (&d)[64], unsigned long long a, unsigned long long b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(a), "l"(b), "r"(1));
}


// Step kk (k8) of the warpgroup's 64 x BN product from the stage's tiles; B_N_MAJOR: the B tile holds B's
// own rows (N-major: the half-precision products' TMA path), else BN rows of the K-major operand.
template <bool B_N_MAJOR>
__device__ __forceinline__ void mma_step(float (&d)[NPARTS][64], unsigned long long a_desc, unsigned b_tile, int kk) {
#pragma unroll
  for (int j = 0; j < NPARTS; ++j) mma_64x128x8(d[j], a_desc, descriptor(b_tile + j * 128 * 128 + kk * 32, 16, 1024));
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
  for (int kk = 0; kk < BK / 8; ++kk) {
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

// The A tile of one tap: the block's BM pixels (TH rows of TW) shifted to image row h0 and column w0,
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
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n"
      ::"r"(destination), "l"(reinterpret_cast<unsigned long long>(&map)), "r"(c0), "r"(c1), "r"(c2), "r"(barrier)
      : "memory");
}

__device__ __forceinline__ void load_box_4d(unsigned destination, const TensorMap& map, int c0, int c1, int c2, int c3,
                                            unsigned barrier) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];\n"
      ::"r"(destination), "l"(reinterpret_cast<unsigned long long>(&map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3),
        "r"(barrier)
      : "memory");
}
#endif

// VECTORS: every row of A and BT is 16-byte aligned (K % 4 == 0: cp.async); otherwise values are loaded one
// by one. TMA_LOADS (Hopper, VECTORS): the copy engine loads the stages through the tensor maps.
// Separate instantiations keep the slow paths' code out of the fast main loop.
template <bool VECTORS, bool TMA_LOADS>
__device__ __forceinline__ void product(const TensorMap& x_tiles, const TensorMap& weight_tiles,
                                        const float* __restrict__ xW, const float* __restrict__ weightW,
                                        const float* __restrict__ bias, float* __restrict__ y, int N, int C, int K,
                                        int H, int W, unsigned char* shared_bytes) {
  // The swizzle is a function of the address bits, so tiles start on 1024-byte boundaries.
  const unsigned shared_base = (static_cast<unsigned>(__cvta_generic_to_shared(shared_bytes)) + 1023u) & ~1023u;
  // Blocks per cluster: CLUSTER on the TMA path with the producer (where the plan asks for clusters of it), else 1.
  constexpr int cluster = TMA_LOADS && PRODUCER == 1 ? CLUSTER : 1;

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

  const int tid = threadIdx.x;
  const int warpgroup = tid / 128;
  constexpr int STAGE_BYTES = (BM + BN) * BK * 4;

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
    const int tap = t / (3 * c_tiles), part = t % (3 * c_tiles) / c_tiles, c0 = t % c_tiles * BK;
    const int di = tap / 3 - 1, dj = tap % 3 - 1;
    // Product `part` multiplies x's [big, big, small][part] by the weights' [big, small, big][part].
    const int x_channel = (part == 2 ? CP : 0) + c0, weight_channel = part * CP + c0;
    if (TMA_LOADS) {
#if WARPGROUP_MMA
      const unsigned barrier = full_base + 8 * stage;
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(barrier), "r"(STAGE_BYTES)
                   : "memory");
      load_box_4d(a_tile, x_tiles, x_channel, w0 + dj, h0 + di, n, barrier);
      load_box_3d(a_tile + BM * 128, weight_tiles, weight_channel, block_k, tap, barrier);
#endif
      return;
    }
    load_pixels(a_tile, xW, n, h0 + di, w0 + dj, H, W, 2 * CP, x_channel);
    load_rows<BN, true>(a_tile + BM * 128, weightW + (long long)tap * K * 3 * CP, K, block_k, weight_channel, 3 * CP);
  };

  float d[NPARTS][64];
#pragma unroll
  for (int j = 0; j < NPARTS; ++j) {
#pragma unroll
    for (int e = 0; e < 64; ++e) d[j][e] = 0.0f;
  }
  float total[NPARTS][64];
#pragma unroll
  for (int j = 0; j < NPARTS; ++j) {
#pragma unroll
    for (int e = 0; e < 64; ++e) total[j][e] = 0.0f;
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
      mma_tile<false>(d, a_tile, a_tile + BM * 128, warpgroup);
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
      // Every PROMOTE tiles, and after the last: the accumulators into the total (once their instructions
      // are done), then from zero again.
      if ((kt + 1) % PROMOTE == 0 || kt + 1 == k_tiles) {
#if WARPGROUP_MMA
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
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
      mma_tile<false>(d, a_tile, b_tile, warpgroup);
#else
      // mma.sync into the same accumulator layout: warp w of the warpgroup computes its 16 rows across all
      // BN columns, fragments from the swizzled tiles with ldmatrix (B is K-major: no transpose).
      const int lane = tid % 32;
#pragma unroll
      for (int kk = 0; kk < BK / 8; ++kk) {
        unsigned a[4];
        const int r = warpgroup * 64 + ((tid % 128) / 32) * 16 + lane % 16;
        load_matrix_x4(a, a_tile + r * 128 + (((kk * 2 + lane / 16) ^ (r & 7)) << 4));
#pragma unroll
        for (int n16 = 0; n16 < BN / 16; ++n16) {
          unsigned b[4];
          const int n = n16 * 16 + lane % 8 + 8 * (lane / 16);
          load_matrix_x4(b, b_tile + n * 128 + (((kk * 2 + (lane / 8) % 2) ^ (n & 7)) << 4));
          mma_1688(&d[n16 / 8][(2 * n16 % 16) * 4], a, b[0], b[1]);
          mma_1688(&d[n16 / 8][(2 * n16 % 16) * 4 + 4], a, b[2], b[3]);
        }
      }
#endif
      // Every PROMOTE tiles, and after the last: the accumulators into the total (once their instructions
      // are done), then from zero again.
      if ((kt + 1) % PROMOTE == 0 || kt + 1 == k_tiles) {
#if WARPGROUP_MMA
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
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
    }
#if WARPGROUP_MMA
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#endif
    asm volatile("cp.async.wait_group 0;\n" ::);
  }

  // Accumulator layout: warp w of the warpgroup holds tile rows (pixels) 16 w + lane / 4 (+ 8); register
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
#if WARPGROUP_MMA
  if (cluster > 1) asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
#endif
}

// The TMA path's block has a producer warpgroup beside the WARPGROUPS consumers (only the bound: with TMA = 0
// a tighter one leaves the cp.async path more registers).
extern "C" __global__ void __launch_bounds__(THREADS + 128 * (WARPGROUP_MMA && TMA == 1 && PRODUCER == 1), 1)
conv2d_3x3(const __grid_constant__ TensorMap x_tiles, const __grid_constant__ TensorMap weight_tiles,
           const float* __restrict__ xW, const float* __restrict__ weightW, const float* __restrict__ bias,
           float* __restrict__ y, int N, int C, int K, int H, int W) {
  extern __shared__ unsigned char shared_bytes[];
#if WARPGROUP_MMA
  // The plan builds the maps under the same condition (its when(...)).
  if (TMA == 1) {
    product<true, true>(x_tiles, weight_tiles, xW, weightW, bias, y, N, C, K, H, W, shared_bytes);
    return;
  }
#endif
  // The workspaces' rows are multiples of 16 bytes: cp.async chunks everywhere.
  product<true, false>(x_tiles, weight_tiles, xW, weightW, bias, y, N, C, K, H, W, shared_bytes);
}
