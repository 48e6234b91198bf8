// 3x3 convolution seed: an implicit matrix product in float32. Rows are the output pixels (N * H * W),
// columns the output channels (K), and the reduction runs over the 9 taps and the input channels, tap
// by tap: row r = tap * Cp + c, with C padded to Cp = round_up(C, BK), so that each BK-wide step lies
// in one tap and a work-item tests the padding once per step, not once per value.
// A first launch lays the weights out as that (9 * Cp) x Kp matrix in a workspace, zeros in the
// padding (Kp = round_up(K, BN)), so that the B tiles are read as float4 rows with no guards.
// The main launch: a work-group of (BM / 8) x (BN / TN) work-items computes a BM x BN tile of y, each
// work-item 8 pixels x TN channels in registers (two groups of four, half a tile apart, read as float4
// from local memory). Both tiles are stored reduction-major in local memory and double-buffered: the
// next step's values are loaded into registers while the current tile is multiplied, then stored into
// the other buffer, so one barrier per step suffices. The A tile is the im2col gather done on the fly:
// each work-item loads for one pixel, whose 9 in-image taps it works out once as a bit mask; values
// outside the image (the zero padding) and past C load as zeros.
// @tune BM = 128 in {64, 128}
// @tune BN = 128 in {32, 64, 128}
// @tune BK = 16 in {8, 16}
// @tune TN = 8 in {4, 8}
// @require (BN / TN) % 8 == 0
// @require (BM / 8) * (BN / TN) <= MAX_THREADS_PER_BLOCK
// @require 8 * BK * (BM + BN) <= SMEM_PER_BLOCK
// @require N * max(C, K) * H * W <= 2147483647 && 9 * round_up(C, BK) * round_up(K, BN) <= 2147483647
// @workspace wt: float32[9 * round_up(C, BK) * round_up(K, BN)]
// @launch relayout_weights<<<ceil_div(9 * round_up(C, BK) * round_up(K, BN), 256), 256>>>(weight, wt, C, K)
// @launch conv2d_3x3<<<dim3(ceil_div(N * H * W, BM), ceil_div(K, BN)), (BM / 8) * (BN / TN)>>>(x, wt, bias, y, N, C, K, H, W)

#define TM 8
#define THREADS ((BM / TM) * (BN / TN))
// Every work-item loads the A values of one pixel (THREADS is a multiple of BM): STEP reduction rows per
// pass of the group, A_LOADS passes per tile. B is BK x BN / 4 float4 values, B_LOADS per work-item at most.
#define STEP (THREADS / BM)
#define A_LOADS (BK / STEP)
#define B_VECTORS (BK * BN / 4)
#define B_LOADS ((B_VECTORS + THREADS - 1) / THREADS)

// weight (K, C, 3, 3) -> wt[(tap * Cp + c) * Kp + k], zeros where c >= C or k >= K; writes coalesced along k.
__kernel __attribute__((reqd_work_group_size(256, 1, 1)))
void relayout_weights(__global const float* restrict weight, __global float* restrict wt, int C, int K) {
  const int Cp = (C + BK - 1) / BK * BK;
  const int Kp = (K + BN - 1) / BN * BN;
  const int e = get_global_id(0);
  if (e >= 9 * Cp * Kp) return;
  const int k = e % Kp;
  const int row = e / Kp;
  const int c = row % Cp;
  const int tap = row / Cp;
  wt[e] = c < C && k < K ? weight[(k * C + c) * 9 + tap] : 0.0f;
}

__kernel __attribute__((reqd_work_group_size(THREADS, 1, 1)))
void conv2d_3x3(__global const float* restrict x, __global const float* restrict wt, __global const float* restrict bias,
                __global float* restrict y, int N, int C, int K, int H, int W) {
  __local float a_tile[2][BK][BM];
  __local float b_tile[2][BK][BN];
  const int tid = get_local_id(0);
  const int HW = H * W;
  const int pixels = N * HW;
  const int Cp = (C + BK - 1) / BK * BK;
  const int Kp = (K + BN - 1) / BN * BN;
  const int block_m = get_group_id(0) * BM;
  const int block_n = get_group_id(1) * BN;

  // The pixel this work-item gathers for, fixed for the whole loop: its offset in x at channel 0 and the
  // taps (bit 3 i + j) whose input (h + i - 1, w + j - 1) lies inside the image. No bits past the last pixel.
  const int load_m = tid % BM;
  const int load_r = tid / BM;
  int x_pixel = 0;
  uint inside = 0;
  if (block_m + load_m < pixels) {
    const int m = block_m + load_m;
    const int n = m / HW;
    const int hw = m - n * HW;
    const int h = hw / W;
    const int w = hw - h * W;
    x_pixel = n * C * HW + hw;
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) {
        if (h + i - 1 >= 0 && h + i - 1 < H && w + j - 1 >= 0 && w + j - 1 < W) inside |= 1u << (3 * i + j);
      }
    }
  }

  float a_next[A_LOADS];
  float4 b_next[B_LOADS];
  // One step's values into registers: A rows c0 + load_r + STEP * l of tap `tap` for this work-item's
  // pixel, B rows tap * Cp + c0 .. + BK - 1 (all inside the padded workspace).
#define LOAD_STEP(tap, c0)                                                                           \
  {                                                                                                  \
    const bool tap_inside = (inside >> (tap)) & 1u;                                                  \
    const int shift = ((tap) / 3 - 1) * W + (tap) % 3 - 1;                                           \
    for (int l = 0; l < A_LOADS; ++l) {                                                              \
      const int c = (c0) + load_r + STEP * l;                                                        \
      a_next[l] = tap_inside && c < C ? x[x_pixel + c * HW + shift] : 0.0f;                          \
    }                                                                                                \
    __global const float* b_rows = wt + ((tap) * Cp + (c0)) * Kp + block_n;                          \
    for (int l = 0; l < B_LOADS; ++l) {                                                              \
      const int e = tid + THREADS * l;                                                               \
      if (B_VECTORS % THREADS == 0 || e < B_VECTORS) {                                               \
        b_next[l] = vload4(0, b_rows + (e / (BN / 4)) * Kp + (e % (BN / 4)) * 4);                    \
      }                                                                                              \
    }                                                                                                \
  }
  // Consecutive work-items write consecutive pixels (A) and consecutive float4 (B).
#define STORE_STEP(buffer)                                                                           \
  {                                                                                                  \
    for (int l = 0; l < A_LOADS; ++l) a_tile[(buffer)][load_r + STEP * l][load_m] = a_next[l];      \
    for (int l = 0; l < B_LOADS; ++l) {                                                              \
      const int e = tid + THREADS * l;                                                               \
      if (B_VECTORS % THREADS == 0 || e < B_VECTORS) {                                               \
        vstore4(b_next[l], 0, &b_tile[(buffer)][e / (BN / 4)][(e % (BN / 4)) * 4]);                  \
      }                                                                                              \
    }                                                                                                \
  }

  // This work-item's micro-tile: pixels ty * 4 + {0..3} and BM / 2 + ty * 4 + {0..3}; channels
  // tx * 4 + {0..3} (and BN / 2 + tx * 4 + {0..3} when TN == 8).
  const int tx = tid % (BN / TN);
  const int ty = tid / (BN / TN);
  float acc[TM][TN];
  for (int i = 0; i < TM; ++i) {
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
  }

  const int steps = 9 * (Cp / BK);
  int tap = 0;
  int c0 = 0;
  LOAD_STEP(tap, c0);
  STORE_STEP(0);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = 0; s < steps; ++s) {
    const int buffer = s & 1;
    const bool more = s + 1 < steps;
    if (more) {  // issue the next step's global loads before this step's arithmetic
      c0 += BK;
      if (c0 == Cp) {
        c0 = 0;
        ++tap;
      }
      LOAD_STEP(tap, c0);
    }
    for (int kk = 0; kk < BK; ++kk) {
      const float4 a_low = vload4(0, &a_tile[buffer][kk][ty * 4]);
      const float4 a_high = vload4(0, &a_tile[buffer][kk][BM / 2 + ty * 4]);
      const float4 b_low = vload4(0, &b_tile[buffer][kk][tx * 4]);
      const float a[TM] = {a_low.x, a_low.y, a_low.z, a_low.w, a_high.x, a_high.y, a_high.z, a_high.w};
#if TN == 8
      const float4 b_high = vload4(0, &b_tile[buffer][kk][BN / 2 + tx * 4]);
      const float b[TN] = {b_low.x, b_low.y, b_low.z, b_low.w, b_high.x, b_high.y, b_high.z, b_high.w};
#else
      const float b[TN] = {b_low.x, b_low.y, b_low.z, b_low.w};
#endif
      for (int i = 0; i < TM; ++i) {
        for (int j = 0; j < TN; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);
      }
    }
    // The other buffer was last read in step s - 1, finished by every work-item before the barrier
    // that ended it; the barrier below publishes these stores before step s + 1 reads them.
    if (more) STORE_STEP(buffer ^ 1);
    barrier(CLK_LOCAL_MEM_FENCE);
  }

  // y[n, k, hw]: pixels are contiguous for a channel. Where HW % 4 == 0 a group of four pixels (its
  // first a multiple of 4) lies in one image: one float4 store.
  const bool vector_stores = HW % 4 == 0;
  for (int part = 0; part < 2; ++part) {
    const int m0 = block_m + part * (BM / 2) + ty * 4;
    if (m0 >= pixels) continue;
    const int n0 = m0 / HW;
    const int hw0 = m0 - n0 * HW;
    for (int j = 0; j < TN; ++j) {
      const int k = block_n + (j / 4) * (BN / 2) + tx * 4 + j % 4;
      if (k >= K) continue;
      const float bias_k = bias[k];
      if (vector_stores) {
        vstore4((float4)(acc[part * 4][j], acc[part * 4 + 1][j], acc[part * 4 + 2][j], acc[part * 4 + 3][j]) + bias_k,
                0, &y[(n0 * K + k) * HW + hw0]);
      } else {
        for (int p = 0; p < 4; ++p) {
          const int m = m0 + p;
          if (m >= pixels) break;
          const int n = m / HW;
          const int hw = m - n * HW;
          y[(n * K + k) * HW + hw] = acc[part * 4 + p][j] + bias_k;
        }
      }
    }
  }
}
