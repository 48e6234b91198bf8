// Neighbouring threads touch neighbouring addresses: a warp's 32 loads become one transaction. Here the
// transpose reads and writes through a shared tile, so both the read and the write are coalesced.
extern "C" __global__ void transpose(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
  __shared__ float tile[32][33];  // 33: no bank conflicts on the column read
  int c = blockIdx.x * 32 + threadIdx.x, r = blockIdx.y * 32 + threadIdx.y;  // launched with 32 x 32 threads
  if (r < rows && c < cols) tile[threadIdx.y][threadIdx.x] = x[(long long)r * cols + c];
  __syncthreads();
  c = blockIdx.y * 32 + threadIdx.x;
  r = blockIdx.x * 32 + threadIdx.y;
  if (r < cols && c < rows) y[(long long)r * rows + c] = tile[threadIdx.x][threadIdx.y];
}
