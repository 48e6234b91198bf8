// Reference attention in three unfused steps through an S x S score matrix per slice: one thread per
// score computes q . k / sqrt(D); one thread per row turns its scores into softmax weights; one thread
// per output element sums the weighted values.
// @workspace scores: float32[B * S * S]
// @launch attention_scores<<<dim3(ceil_div(S, 16), ceil_div(S, 16), B), dim3(16, 16)>>>(q, k, scores, S, D)
// @launch attention_softmax<<<ceil_div(B * S, 64), 64>>>(scores, B * S, S)
// @launch attention_output<<<dim3(ceil_div(D, 16), ceil_div(S, 16), B), dim3(16, 16)>>>(scores, v, o, S, D)

extern "C" __global__ void attention_scores(const float* q, const float* k, float* scores, int S, int D) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;  // key
  const int i = blockIdx.y * blockDim.y + threadIdx.y;  // query
  const long long b = blockIdx.z;
  if (i < S && j < S) {
    float dot = 0.0f;
    for (int d = 0; d < D; ++d) dot += q[(b * S + i) * D + d] * k[(b * S + j) * D + d];
    scores[(b * S + i) * S + j] = dot / sqrtf((float)D);
  }
}

extern "C" __global__ void attention_softmax(float* scores, int rows, int S) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) {
    float* r = scores + (long long)row * S;
    float max_value = r[0];
    for (int j = 1; j < S; ++j) max_value = fmaxf(max_value, r[j]);
    float sum = 0.0f;
    for (int j = 0; j < S; ++j) sum += expf(r[j] - max_value);
    for (int j = 0; j < S; ++j) r[j] = expf(r[j] - max_value) / sum;
  }
}

extern "C" __global__ void attention_output(const float* scores, const float* v, float* o, int S, int D) {
  const int d = blockIdx.x * blockDim.x + threadIdx.x;
  const int i = blockIdx.y * blockDim.y + threadIdx.y;
  const long long b = blockIdx.z;
  if (i < S && d < D) {
    float sum = 0.0f;
    for (int j = 0; j < S; ++j) sum += scores[(b * S + i) * S + j] * v[(b * S + j) * D + d];
    o[(b * S + i) * D + d] = sum;
  }
}
