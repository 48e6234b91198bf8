// Reference cross-entropy: one thread per row finds the row's maximum, sums the exponentials of the
// shifted logits, and subtracts the target's logit from the log of the sum.
// @launch cross_entropy<<<ceil_div(M, 64), 64>>>(logits, targets, loss, M, V)

extern "C" __global__ void cross_entropy(const float* logits, const int* targets, float* loss, int M, int V) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M) {
    const float* r = logits + (long long)row * V;
    float max_value = r[0];
    for (int v = 1; v < V; ++v) max_value = fmaxf(max_value, r[v]);
    float sum = 0.0f;
    for (int v = 0; v < V; ++v) sum += expf(r[v] - max_value);
    loss[row] = max_value + logf(sum) - r[targets[row]];
  }
}
