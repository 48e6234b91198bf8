// Reference histogram: one kernel zeroes the 1024 bins, then one thread per value adds 1 to its bin
// with a global atomic.
// @launch zero_counts<<<4, 256>>>(counts)
// @launch histogram<<<ceil_div(N, 256), 256>>>(x, counts, N)

extern "C" __global__ void zero_counts(int* counts) {
  const int bin = blockIdx.x * blockDim.x + threadIdx.x;
  if (bin < 1024) counts[bin] = 0;
}

extern "C" __global__ void histogram(const int* x, int* counts, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) atomicAdd(&counts[x[i]], 1);
}
