// MinGPT's GELU (tanh approximation) over x of shape (batch_size, dim), elementwise, in OpenCL C:
// out = 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))), one kernel where PyTorch's eager module
// runs one per operation. Memory-bound: x is read once and out written once. The operations follow the
// module's order (x^3 as x * x * x) with OpenCL's accurate tanh.
//
// A work-group covers BLOCK * ITEMS consecutive elements: each work-item loads its ITEMS values (BLOCK apart,
// so that neighbouring work-items read neighbouring values) before it computes and stores any.
// @tune BLOCK = 64 in {16, 32, 64, 128, 256}
// @tune ITEMS = 4 in {1, 2, 4, 8}
// @require BLOCK <= MAX_THREADS_PER_BLOCK
// @launch new_gelu<<<ceil_div(batch_size * dim, BLOCK * ITEMS), BLOCK>>>(x, out, batch_size * dim)

__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void new_gelu(__global const float* restrict x, __global float* restrict out, long n) {
  const long first = (long)get_group_id(0) * BLOCK * ITEMS + get_local_id(0);
  float values[ITEMS];
  for (int k = 0; k < ITEMS; ++k) {
    const long i = first + (long)k * BLOCK;
    values[k] = i < n ? x[i] : 0.0f;
  }
  for (int k = 0; k < ITEMS; ++k) {
    const long i = first + (long)k * BLOCK;
    const float v = values[k];
    if (i < n) out[i] = 0.5f * v * (1.0f + tanh(0.7978845608028654f * (v + 0.044715f * (v * v * v))));
  }
}
