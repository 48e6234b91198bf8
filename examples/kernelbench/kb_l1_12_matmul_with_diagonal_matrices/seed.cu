// diag(A) @ B without the diagonal matrix: out[i, j] = A[i] * B[i, j], as the problem's A.unsqueeze(1) * B.
// A is (N), B and out are (N, M) row-major. Memory-bound: B is read once and out written once.
//
// The grid's x covers the columns, VEC consecutive columns per thread (16-byte float4 loads and stores for
// VEC = 4 when M is a multiple of VEC, so that every row starts aligned; per element otherwise), and its y
// covers the rows, ROWS at a time: a thread issues the ROWS loads of B before it scales and stores any, so
// that several loads are in flight, and reads each A[i] once for its VEC columns. Rows past what the grid's y
// covers (at most 65535 blocks) are reached by a stride loop.
// @tune BLOCK = 256 in {64, 128, 256, 512, 1024}
// @tune VEC = 4 in {1, 2, 4}
// @tune ROWS = 4 in {1, 2, 4, 8}
// @require BLOCK <= MAX_THREADS_PER_BLOCK
// @launch diag_matmul<<<dim3(ceil_div(M, BLOCK * VEC), min(ceil_div(N, ROWS), 65535)), BLOCK>>>(A, B, out, N, M)

template <int W> struct Lanes;
template <> struct Lanes<1> { using type = float; };
template <> struct Lanes<2> { using type = float2; };
template <> struct Lanes<4> { using type = float4; };

extern "C" __global__ void __launch_bounds__(BLOCK)
diag_matmul(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ out, int N, int M) {
  using V = typename Lanes<VEC>::type;
  const int col = (blockIdx.x * BLOCK + threadIdx.x) * VEC;
  if (col >= M) return;  // no barrier follows
  const bool vectors = M % VEC == 0;
  for (int first = blockIdx.y * ROWS; first < N; first += gridDim.y * ROWS) {
    if (vectors) {
      V values[ROWS];
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        if (first + r < N) values[r] = *reinterpret_cast<const V*>(B + (long long)(first + r) * M + col);
      }
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        if (first + r >= N) break;
        const float scale = A[first + r];
        float* lanes = reinterpret_cast<float*>(&values[r]);
#pragma unroll
        for (int e = 0; e < VEC; ++e) lanes[e] *= scale;
        *reinterpret_cast<V*>(out + (long long)(first + r) * M + col) = values[r];
      }
    } else {
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        if (first + r >= N) break;
        const float scale = A[first + r];
        const long long offset = (long long)(first + r) * M + col;
#pragma unroll
        for (int e = 0; e < VEC; ++e) {
          if (col + e < M) out[offset + e] = scale * B[offset + e];
        }
      }
    }
  }
}
