// nn.LayerNorm over the last three dimensions of x (batch_size, features, dim1, dim2), eps = 1e-5 (the
// module's default), with the elementwise affine ln_weight and ln_bias of shape (features, dim1, dim2):
// every one of the batch_size rows of D = features * dim1 * dim2 values is normalised by its own mean and
// biased variance. At the timing sizes there are 16 rows of 4M values, far too few rows for a block per row,
// so each row is split into chunks of CHUNK = BLOCK * ITEMS * 4 values and three kernels run:
//   1. layernorm_chunks: a block per chunk holds its values in registers and writes the chunk's mean and the
//      sum of squared deviations from that mean (two block reductions, no E[x^2] - E[x]^2 cancellation);
//   2. layernorm_rows: a block per row combines its chunks' moments exactly (mean = sum of count * chunk mean
//      over D; M2 = sum of chunk M2 + count * (chunk mean - mean)^2) and writes mean and 1 / sqrt(var + eps);
//   3. layernorm_apply: a block per chunk normalises, scales and shifts; consecutive blocks take the same
//      chunk of every row, so that each chunk of ln_weight and ln_bias is read from memory once and from L2 by
//      the other rows.
// x is read twice and out written once; every sum runs in a fixed order, so the result is deterministic.
// Rows whose length is a multiple of 4 use 16-byte float4 loads and stores (rows then start aligned); other
// lengths load the same elements one by one. Every access is bounds-checked.
// @tune BLOCK = 256 in {128, 256, 512, 1024}
// @tune ITEMS = 4 in {1, 2, 4, 8}
// @require BLOCK <= MAX_THREADS_PER_BLOCK
// @workspace moments: float32[2 * batch_size * ceil_div(features * dim1 * dim2, BLOCK * ITEMS * 4)]
// @workspace stats: float32[2 * batch_size]
// @launch layernorm_chunks<<<batch_size * ceil_div(features * dim1 * dim2, BLOCK * ITEMS * 4), BLOCK>>>(x, moments, features * dim1 * dim2)
// @launch layernorm_rows<<<batch_size, 256>>>(moments, stats, features * dim1 * dim2)
// @launch layernorm_apply<<<batch_size * ceil_div(features * dim1 * dim2, BLOCK * ITEMS * 4), BLOCK>>>(x, ln_weight, ln_bias, stats, out, batch_size, features * dim1 * dim2)

#define CHUNK (BLOCK * ITEMS * 4)
#define EPS 1e-5f

// The sum over the block's threads, returned to every thread. `scratch` holds one float per warp; the leading
// barrier lets a block call this again while threads may still read the previous result.
template <int THREADS>
__device__ __forceinline__ float block_total(float value, float* scratch) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
  __syncthreads();
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = value;
  __syncthreads();
  float total = 0.0f;
#pragma unroll
  for (int w = 0; w < THREADS / 32; ++w) total += scratch[w];
  return total;
}

// The chunk's values of thread threadIdx.x: element item of the thread is chunk element
// (item / 4) * BLOCK * 4 + threadIdx.x * 4 + item % 4, so that a warp's float4 accesses are contiguous.
__device__ __forceinline__ long long element_of(int item) {
  return (long long)(item / 4) * BLOCK * 4 + threadIdx.x * 4 + item % 4;
}

__device__ __forceinline__ void load_chunk(const float* __restrict__ row, long long begin, long long count,
                                           bool vectors, float (&values)[ITEMS * 4]) {
  if (vectors) {
#pragma unroll
    for (int v = 0; v < ITEMS; ++v) {
      const long long i = element_of(4 * v);
      const float4 four = i < count ? *reinterpret_cast<const float4*>(row + begin + i) : make_float4(0.f, 0.f, 0.f, 0.f);
      values[4 * v] = four.x;
      values[4 * v + 1] = four.y;
      values[4 * v + 2] = four.z;
      values[4 * v + 3] = four.w;
    }
  } else {
#pragma unroll
    for (int item = 0; item < ITEMS * 4; ++item) {
      const long long i = element_of(item);
      values[item] = i < count ? row[begin + i] : 0.0f;
    }
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK)
layernorm_chunks(const float* __restrict__ x, float* __restrict__ moments, long long D) {
  __shared__ float scratch[BLOCK / 32];
  const long long chunks = (D + CHUNK - 1) / CHUNK;
  const long long row = blockIdx.x / chunks;
  const long long begin = (blockIdx.x % chunks) * CHUNK;
  const long long count = min((long long)CHUNK, D - begin);  // a vector never straddles it when D % 4 == 0
  float values[ITEMS * 4];
  load_chunk(x + row * D, begin, count, D % 4 == 0, values);
  float sum = 0.0f;
#pragma unroll
  for (int item = 0; item < ITEMS * 4; ++item) sum += values[item];
  const float mean = block_total<BLOCK>(sum, scratch) / (float)count;
  float squares = 0.0f;
#pragma unroll
  for (int item = 0; item < ITEMS * 4; ++item) {
    const float d = element_of(item) < count ? values[item] - mean : 0.0f;
    squares += d * d;
  }
  const float m2 = block_total<BLOCK>(squares, scratch);
  if (threadIdx.x == 0) {
    moments[2 * blockIdx.x] = mean;
    moments[2 * blockIdx.x + 1] = m2;
  }
}

#define ROW_THREADS 256

extern "C" __global__ void __launch_bounds__(ROW_THREADS)
layernorm_rows(const float* __restrict__ moments, float* __restrict__ stats, long long D) {
  __shared__ float scratch[ROW_THREADS / 32];
  const long long chunks = (D + CHUNK - 1) / CHUNK;
  const float* row = moments + 2 * blockIdx.x * chunks;
  float weighted = 0.0f;
  for (long long c = threadIdx.x; c < chunks; c += ROW_THREADS) {
    weighted += (float)min((long long)CHUNK, D - c * CHUNK) * row[2 * c];
  }
  const float mean = block_total<ROW_THREADS>(weighted, scratch) / (float)D;
  float m2 = 0.0f;
  for (long long c = threadIdx.x; c < chunks; c += ROW_THREADS) {
    const float d = row[2 * c] - mean;
    m2 += row[2 * c + 1] + (float)min((long long)CHUNK, D - c * CHUNK) * d * d;
  }
  const float variance = block_total<ROW_THREADS>(m2, scratch) / (float)D;
  if (threadIdx.x == 0) {
    stats[2 * blockIdx.x] = mean;
    stats[2 * blockIdx.x + 1] = 1.0f / sqrtf(variance + EPS);
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK)
layernorm_apply(const float* __restrict__ x, const float* __restrict__ weight, const float* __restrict__ bias,
                const float* __restrict__ stats, float* __restrict__ out, int rows, long long D) {
  const long long row = blockIdx.x % rows;
  const long long begin = (long long)(blockIdx.x / rows) * CHUNK;
  const long long count = min((long long)CHUNK, D - begin);
  const float mean = stats[2 * row];
  const float inverse_std = stats[2 * row + 1];
  const float* x_row = x + row * D + begin;
  float* out_row = out + row * D + begin;
  if (D % 4 == 0) {
#pragma unroll
    for (int v = 0; v < ITEMS; ++v) {
      const long long i = element_of(4 * v);
      if (i >= count) continue;
      const float4 in = *reinterpret_cast<const float4*>(x_row + i);
      const float4 w = *reinterpret_cast<const float4*>(weight + begin + i);
      const float4 b = *reinterpret_cast<const float4*>(bias + begin + i);
      *reinterpret_cast<float4*>(out_row + i) =
          make_float4((in.x - mean) * inverse_std * w.x + b.x, (in.y - mean) * inverse_std * w.y + b.y,
                      (in.z - mean) * inverse_std * w.z + b.z, (in.w - mean) * inverse_std * w.w + b.w);
    }
  } else {
#pragma unroll
    for (int item = 0; item < ITEMS * 4; ++item) {
      const long long i = element_of(item);
      if (i < count) out_row[i] = (x_row[i] - mean) * inverse_std * weight[begin + i] + bias[begin + i];
    }
  }
}
