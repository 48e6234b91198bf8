// Reference cross-entropy: one work-item per row finds the row's maximum, sums the exponentials of the
// shifted logits, and subtracts the target's logit from the log of the sum.
// @launch cross_entropy<<<ceil_div(M, 64), 64>>>(logits, targets, loss, M, V)

__kernel void cross_entropy(__global const float* logits, __global const int* targets, __global float* loss,
                            int M, int V) {
  const int row = get_global_id(0);
  if (row < M) {
    __global const float* r = logits + (long)row * V;
    float max_value = r[0];
    for (int v = 1; v < V; ++v) max_value = fmax(max_value, r[v]);
    float sum = 0.0f;
    for (int v = 0; v < V; ++v) sum += exp(r[v] - max_value);
    loss[row] = max_value + log(sum) - r[targets[row]];
  }
}
