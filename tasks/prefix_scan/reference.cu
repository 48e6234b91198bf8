// Reference inclusive scan in three plain steps over chunks of 1024 values: one thread per chunk adds
// up its chunk; a single thread turns the chunk sums into running offsets; one thread per chunk then
// walks its chunk again from its offset, writing the running sum.
// @workspace offsets: int32[ceil_div(N, 1024)]
// @launch chunk_sums<<<ceil_div(ceil_div(N, 1024), 128), 128>>>(x, offsets, N)
// @launch chunk_offsets<<<1, 1>>>(offsets, ceil_div(N, 1024))
// @launch chunk_scans<<<ceil_div(ceil_div(N, 1024), 128), 128>>>(x, offsets, y, N)

extern "C" __global__ void chunk_sums(const int* x, int* offsets, int N) {
  const int chunk = blockIdx.x * blockDim.x + threadIdx.x;
  if (chunk * 1024 < N) {
    int sum = 0;
    for (int i = chunk * 1024; i < N && i < (chunk + 1) * 1024; ++i) sum += x[i];
    offsets[chunk] = sum;
  }
}

// Replaces each chunk's sum by the sum of the chunks before it.
extern "C" __global__ void chunk_offsets(int* offsets, int chunks) {
  int running = 0;
  for (int chunk = 0; chunk < chunks; ++chunk) {
    const int sum = offsets[chunk];
    offsets[chunk] = running;
    running += sum;
  }
}

extern "C" __global__ void chunk_scans(const int* x, const int* offsets, int* y, int N) {
  const int chunk = blockIdx.x * blockDim.x + threadIdx.x;
  if (chunk * 1024 < N) {
    int running = offsets[chunk];
    for (int i = chunk * 1024; i < N && i < (chunk + 1) * 1024; ++i) {
      running += x[i];
      y[i] = running;
    }
  }
}
