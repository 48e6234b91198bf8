// Reference inclusive scan in three plain steps over chunks of 1024 values: one work-item per chunk
// adds up its chunk; a single work-item turns the chunk sums into running offsets; one work-item per
// chunk then walks its chunk again from its offset, writing the running sum.
// @workspace offsets: int32[ceil_div(N, 1024)]
// @launch chunk_sums<<<ceil_div(ceil_div(N, 1024), 128), 128>>>(x, offsets, N)
// @launch chunk_offsets<<<1, 1>>>(offsets, ceil_div(N, 1024))
// @launch chunk_scans<<<ceil_div(ceil_div(N, 1024), 128), 128>>>(x, offsets, y, N)

__kernel void chunk_sums(__global const int* x, __global int* offsets, int N) {
  const int chunk = get_global_id(0);
  if (chunk * 1024 < N) {
    int sum = 0;
    for (int i = chunk * 1024; i < N && i < (chunk + 1) * 1024; ++i) sum += x[i];
    offsets[chunk] = sum;
  }
}

// Replaces each chunk's sum by the sum of the chunks before it.
__kernel void chunk_offsets(__global int* offsets, int chunks) {
  int running = 0;
  for (int chunk = 0; chunk < chunks; ++chunk) {
    const int sum = offsets[chunk];
    offsets[chunk] = running;
    running += sum;
  }
}

__kernel void chunk_scans(__global const int* x, __global const int* offsets, __global int* y, int N) {
  const int chunk = get_global_id(0);
  if (chunk * 1024 < N) {
    int running = offsets[chunk];
    for (int i = chunk * 1024; i < N && i < (chunk + 1) * 1024; ++i) {
      running += x[i];
      y[i] = running;
    }
  }
}
