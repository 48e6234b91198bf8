// Fused linear + bias + GELU seed: a register-blocked float32 matrix product. A block of
// (BM / TM) x (BN / TN) threads computes a BM x BN tile of y, each thread a TM x TN sub-tile held in
// registers. K advances BK at a time: tiles of x (BM x BK) and weight (BN x BK) are staged in shared
// memory transposed (k-major), so that each thread's inner step reads TM values of x and TN of weight
// and does TM * TN multiply-adds. The epilogue adds the bias and applies GELU before the only store.
// @tune BM = 128 in {32, 64, 128}
// @tune BN = 128 in {32, 64, 128}
// @tune BK = 16 in {8, 16, 32}
// @tune TM = 8 in {2, 4, 8}
// @tune TN = 8 in {2, 4, 8}
// @require BM % TM == 0 && BN % TN == 0
// @require (BM / TM) * (BN / TN) <= MAX_THREADS_PER_BLOCK
// @require (BM / TM) * (BN / TN) >= 32
// @require 4 * BK * (BM + BN + 8) <= SMEM_PER_BLOCK
// @launch linear_gelu<<<dim3(ceil_div(N, BN), ceil_div(M, BM)), (BM / TM) * (BN / TN)>>>(x, weight, bias, y, M, N, K)

#define THREADS ((BM / TM) * (BN / TN))

__device__ __forceinline__ float gelu_tanh(float z) {
  const float c = 0.7978845608028654f;  // sqrt(2 / pi)
  return 0.5f * z * (1.0f + tanhf(c * (z + 0.044715f * z * z * z)));
}

extern "C" __global__ void __launch_bounds__(THREADS)
linear_gelu(const float* __restrict__ x, const float* __restrict__ weight, const float* __restrict__ bias,
            float* __restrict__ y, int M, int N, int K) {
  // k-major tiles; 4 floats of padding per row break the bank pattern of the transposing stores.
  __shared__ float x_tile[BK][BM + 4];
  __shared__ float w_tile[BK][BN + 4];
  const int tid = threadIdx.x;
  const int tx = tid % (BN / TN);
  const int ty = tid / (BN / TN);
  const int block_m = blockIdx.y * BM;
  const int block_n = blockIdx.x * BN;
  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i) {
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
  }
  for (int k0 = 0; k0 < K; k0 += BK) {
    // Consecutive threads read consecutive k of a row: coalesced along K. Edges load as zeros.
    for (int i = tid; i < BM * BK; i += THREADS) {
      const int r = i / BK;
      const int kk = i % BK;
      x_tile[kk][r] = block_m + r < M && k0 + kk < K ? x[(long long)(block_m + r) * K + k0 + kk] : 0.0f;
    }
    for (int i = tid; i < BN * BK; i += THREADS) {
      const int r = i / BK;
      const int kk = i % BK;
      w_tile[kk][r] = block_n + r < N && k0 + kk < K ? weight[(long long)(block_n + r) * K + k0 + kk] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float a[TM];
      float b[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) a[i] = x_tile[kk][ty * TM + i];
#pragma unroll
      for (int j = 0; j < TN; ++j) b[j] = w_tile[kk][tx * TN + j];
#pragma unroll
      for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int row = block_m + ty * TM + i;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int col = block_n + tx * TN + j;
      if (row < M && col < N) y[(long long)row * N + col] = gelu_tanh(acc[i][j] + bias[col]);
    }
  }
}
