// ReLU seed: each work-group covers BLOCK * ITEMS consecutive elements in ITEMS coalesced passes, so
// that every work-item has several independent loads in flight.
// @tune BLOCK = 256 in {16, 32, 64, 128, 256, 512, 1024}
// @tune ITEMS = 4 in {1, 2, 4, 8, 16, 32}
// @require BLOCK <= MAX_THREADS_PER_BLOCK
// @launch relu<<<ceil_div(N, BLOCK * ITEMS), BLOCK>>>(x, y, N)

__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void relu(__global const float* restrict x, __global float* restrict y, int N) {
  const int base = get_group_id(0) * (BLOCK * ITEMS) + get_local_id(0);
  for (int item = 0; item < ITEMS; ++item) {
    const int i = base + item * BLOCK;
    if (i < N) {
      y[i] = fmax(x[i], 0.0f);
    }
  }
}
