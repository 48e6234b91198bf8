// 16-byte loads and stores (float4) move the same bytes in a quarter of the instructions; the tail that is
// not a multiple of 4 is handled element by element. Needs 16-byte aligned tensors (kernelsmith's are).
extern "C" __global__ void scale4(const float* __restrict__ x, float* __restrict__ y, float alpha, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int vectors = n / 4;
  if (i < vectors) {
    float4 v = reinterpret_cast<const float4*>(x)[i];
    v.x *= alpha; v.y *= alpha; v.z *= alpha; v.w *= alpha;
    reinterpret_cast<float4*>(y)[i] = v;
  }
  const int tail = vectors * 4 + i;
  if (i < n - vectors * 4) y[tail] = alpha * x[tail];
}
