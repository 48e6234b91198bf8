// Reference row sum: one work-item per row adds the row's K values in order.
// @launch row_sum<<<ceil_div(M, 256), 256>>>(x, y, M, K)

__kernel void row_sum(__global const float* x, __global float* y, int M, int K) {
  const int row = get_global_id(0);
  if (row < M) {
    float sum = 0.0f;
    for (int k = 0; k < K; ++k) {
      sum += x[row * K + k];
    }
    y[row] = sum;
  }
}
