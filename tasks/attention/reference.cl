// Reference attention in three unfused steps through an S x S score matrix per slice: one work-item per
// score computes q . k / sqrt(D); one work-item per row turns its scores into softmax weights; one
// work-item per output element sums the weighted values.
// @workspace scores: float32[B * S * S]
// @launch attention_scores<<<dim3(ceil_div(S, 16), ceil_div(S, 16), B), dim3(16, 16)>>>(q, k, scores, S, D)
// @launch attention_softmax<<<ceil_div(B * S, 64), 64>>>(scores, B * S, S)
// @launch attention_output<<<dim3(ceil_div(D, 16), ceil_div(S, 16), B), dim3(16, 16)>>>(scores, v, o, S, D)

__kernel void attention_scores(__global const float* q, __global const float* k, __global float* scores, int S,
                               int D) {
  const int j = get_global_id(0);  // key
  const int i = get_global_id(1);  // query
  const long b = get_global_id(2);
  if (i < S && j < S) {
    float dot = 0.0f;
    for (int d = 0; d < D; ++d) dot += q[(b * S + i) * D + d] * k[(b * S + j) * D + d];
    scores[(b * S + i) * S + j] = dot / sqrt((float)D);
  }
}

__kernel void attention_softmax(__global float* scores, int rows, int S) {
  const int row = get_global_id(0);
  if (row < rows) {
    __global float* r = scores + (long)row * S;
    float max_value = r[0];
    for (int j = 1; j < S; ++j) max_value = fmax(max_value, r[j]);
    float sum = 0.0f;
    for (int j = 0; j < S; ++j) sum += exp(r[j] - max_value);
    for (int j = 0; j < S; ++j) r[j] = exp(r[j] - max_value) / sum;
  }
}

__kernel void attention_output(__global const float* scores, __global const float* v, __global float* o, int S,
                               int D) {
  const int d = get_global_id(0);
  const int i = get_global_id(1);
  const long b = get_global_id(2);
  if (i < S && d < D) {
    float sum = 0.0f;
    for (int j = 0; j < S; ++j) sum += scores[(b * S + i) * S + j] * v[(b * S + j) * D + d];
    o[(b * S + i) * D + d] = sum;
  }
}
