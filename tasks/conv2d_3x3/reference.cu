// Reference 3x3 convolution (stride 1, zero padding 1, NCHW): one thread per output element sums over
// the input channels and the 9 taps, skipping taps outside the image.
// @launch conv2d_3x3<<<ceil_div(N * K * H * W, 256), 256>>>(x, weight, bias, y, N, C, K, H, W)

extern "C" __global__ void conv2d_3x3(const float* x, const float* weight, const float* bias, float* y, int N, int C,
                                      int K, int H, int W) {
  const long long index = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (index < (long long)N * K * H * W) {
    const int w = index % W;
    const int h = (index / W) % H;
    const int k = (index / ((long long)W * H)) % K;
    const int n = index / ((long long)W * H * K);
    float sum = bias[k];
    for (int c = 0; c < C; ++c) {
      for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) {
          const int ih = h + i - 1;
          const int iw = w + j - 1;
          if (ih >= 0 && ih < H && iw >= 0 && iw < W) {
            sum += weight[((k * C + c) * 3 + i) * 3 + j] * x[(((long long)n * C + c) * H + ih) * W + iw];
          }
        }
      }
    }
    y[index] = sum;
  }
}
