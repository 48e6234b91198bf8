// MinGPT's GELU (tanh approximation) over x of shape (batch_size, dim), elementwise:
// out = 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))), one kernel where PyTorch's eager module
// runs one per operation. Memory-bound: x is read once and out written once. The operations follow the
// module's order (x^3 as x * x * x, as torch.pow with exponent 3 computes it) with CUDA's accurate tanhf.
//
// A block covers BLOCK * ITEMS * 4 consecutive elements: each thread loads ITEMS float4 vectors (BLOCK apart,
// so that a warp's loads are contiguous) before it computes and stores any, keeping ITEMS loads in flight.
// Where the element count is not a multiple of 4 (odd sizes) the same elements are loaded one by one.
// @tune BLOCK = 256 in {128, 256, 512, 1024}
// @tune ITEMS = 2 in {1, 2, 4, 8}
// @require BLOCK <= MAX_THREADS_PER_BLOCK
// @launch new_gelu<<<ceil_div(batch_size * dim, BLOCK * ITEMS * 4), BLOCK>>>(x, out, batch_size * dim)

__device__ __forceinline__ float new_gelu_of(float v) {
  return 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * (v * v * v))));
}

extern "C" __global__ void __launch_bounds__(BLOCK) new_gelu(const float* __restrict__ x, float* __restrict__ out, long long n) {
  const long long first = (long long)blockIdx.x * BLOCK * ITEMS * 4;
  if (n % 4 == 0) {
    const long long vectors = n / 4;
    float4 values[ITEMS];
#pragma unroll
    for (int item = 0; item < ITEMS; ++item) {
      const long long v = first / 4 + item * BLOCK + threadIdx.x;
      if (v < vectors) values[item] = reinterpret_cast<const float4*>(x)[v];
    }
#pragma unroll
    for (int item = 0; item < ITEMS; ++item) {
      const long long v = first / 4 + item * BLOCK + threadIdx.x;
      if (v < vectors) {
        const float4 in = values[item];
        reinterpret_cast<float4*>(out)[v] = make_float4(new_gelu_of(in.x), new_gelu_of(in.y), new_gelu_of(in.z), new_gelu_of(in.w));
      }
    }
  } else {
    float values[ITEMS * 4];
#pragma unroll
    for (int item = 0; item < ITEMS * 4; ++item) {
      const long long i = first + item * BLOCK + threadIdx.x;
      values[item] = i < n ? x[i] : 0.0f;
    }
#pragma unroll
    for (int item = 0; item < ITEMS * 4; ++item) {
      const long long i = first + item * BLOCK + threadIdx.x;
      if (i < n) out[i] = new_gelu_of(values[item]);
    }
  }
}
