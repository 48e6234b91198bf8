// 3x3 convolution seed: a block of TILE_H x TILE_W threads computes a TILE_H x TILE_W patch of the
// output for KPT output channels, one pixel per thread with KPT accumulators in registers. The input
// channels advance CC at a time: the patch's input with its one-pixel halo and the KPT x CC x 9
// weights are staged in shared memory, so each input value loaded there serves 9 taps of KPT channels.
// @tune TILE_W = 32 in {8, 16, 32}
// @tune TILE_H = 8 in {2, 4, 8, 16}
// @tune KPT = 8 in {1, 2, 4, 8, 16}
// @tune CC = 8 in {1, 2, 4, 8, 16}
// @require TILE_W * TILE_H <= MAX_THREADS_PER_BLOCK
// @require 4 * (CC * (TILE_H + 2) * (TILE_W + 2) + KPT * CC * 9) <= SMEM_PER_BLOCK
// @launch conv2d_3x3<<<dim3(ceil_div(W, TILE_W) * ceil_div(H, TILE_H), ceil_div(K, KPT), N), TILE_W * TILE_H>>>(x, weight, bias, y, C, K, H, W)

#define THREADS (TILE_W * TILE_H)

extern "C" __global__ void __launch_bounds__(THREADS)
conv2d_3x3(const float* __restrict__ x, const float* __restrict__ weight, const float* __restrict__ bias,
           float* __restrict__ y, int C, int K, int H, int W) {
  __shared__ float in_tile[CC][TILE_H + 2][TILE_W + 2];
  __shared__ float w_tile[KPT][CC][9];
  const int tiles_w = (W + TILE_W - 1) / TILE_W;
  const int tile_row = blockIdx.x / tiles_w;
  const int tile_col = blockIdx.x % tiles_w;
  const int k0 = blockIdx.y * KPT;
  const int n = blockIdx.z;
  const int tx = threadIdx.x % TILE_W;
  const int ty = threadIdx.x / TILE_W;
  const int h0 = tile_row * TILE_H - 1;  // input row of the halo's first row
  const int w0 = tile_col * TILE_W - 1;
  float acc[KPT];
#pragma unroll
  for (int kk = 0; kk < KPT; ++kk) acc[kk] = 0.0f;

  for (int c0 = 0; c0 < C; c0 += CC) {
    for (int i = threadIdx.x; i < CC * (TILE_H + 2) * (TILE_W + 2); i += THREADS) {
      const int c = i / ((TILE_H + 2) * (TILE_W + 2));
      const int r = (i / (TILE_W + 2)) % (TILE_H + 2);
      const int q = i % (TILE_W + 2);
      const int ih = h0 + r;
      const int iw = w0 + q;
      in_tile[c][r][q] = (c0 + c < C && ih >= 0 && ih < H && iw >= 0 && iw < W)
                             ? x[(((long long)n * C + c0 + c) * H + ih) * W + iw]
                             : 0.0f;
    }
    for (int i = threadIdx.x; i < KPT * CC * 9; i += THREADS) {
      const int kk = i / (CC * 9);
      const int c = (i / 9) % CC;
      const int t = i % 9;
      w_tile[kk][c][t] = (k0 + kk < K && c0 + c < C) ? weight[((long long)(k0 + kk) * C + c0 + c) * 9 + t] : 0.0f;
    }
    __syncthreads();
#pragma unroll 2
    for (int c = 0; c < CC; ++c) {
#pragma unroll
      for (int t = 0; t < 9; ++t) {
        const float v = in_tile[c][ty + t / 3][tx + t % 3];
#pragma unroll
        for (int kk = 0; kk < KPT; ++kk) acc[kk] += v * w_tile[kk][c][t];
      }
    }
    __syncthreads();
  }
  const int oh = tile_row * TILE_H + ty;
  const int ow = tile_col * TILE_W + tx;
  if (oh < H && ow < W) {
#pragma unroll
    for (int kk = 0; kk < KPT; ++kk) {
      if (k0 + kk < K) y[(((long long)n * K + k0 + kk) * H + oh) * W + ow] = acc[kk] + bias[k0 + kk];
    }
  }
}
