// GELU seed: each work-item handles ITEMS groups of VEC consecutive elements (vloadn/vstoren), in ITEMS
// coalesced passes over the work-group's chunk; the scalar loop covers the tail.
// @tune BLOCK = 256 in {64, 128, 256, 512}
// @tune ITEMS = 2 in {1, 2, 4, 8}
// @tune VEC = 4 in {1, 2, 4, 8}
// @require BLOCK <= MAX_THREADS_PER_BLOCK
// @launch gelu<<<max(1, ceil_div(N, BLOCK * ITEMS * VEC)), BLOCK>>>(x, y, N)

#if VEC == 1
#define VTYPE float
#define VLOAD(i, p) (p)[i]
#define VSTORE(v, i, p) ((p)[i] = (v))
#else
#define VTYPE_(n) float##n
#define VTYPE_N(n) VTYPE_(n)
#define VTYPE VTYPE_N(VEC)
#define VLOAD_(n) vload##n
#define VLOAD_N(n) VLOAD_(n)
#define VSTORE_(n) vstore##n
#define VSTORE_N(n) VSTORE_(n)
#define VLOAD(i, p) VLOAD_N(VEC)(i, p)
#define VSTORE(v, i, p) VSTORE_N(VEC)(v, i, p)
#endif

VTYPE gelu_tanh(VTYPE v) {
  const float k = 0.7978845608028654f;  // sqrt(2 / pi)
  return 0.5f * v * (1.0f + tanh(k * (v + 0.044715f * v * v * v)));
}

__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void gelu(__global const float* restrict x, __global float* restrict y, int N) {
  const int vectors = N / VEC;
  const int base = get_group_id(0) * (BLOCK * ITEMS) + get_local_id(0);
  for (int item = 0; item < ITEMS; ++item) {
    const int v = base + item * BLOCK;
    if (v < vectors) VSTORE(gelu_tanh(VLOAD(v, x)), v, y);
  }
  // The last N % VEC elements: the first work-items of group 0.
  if (get_group_id(0) == 0 && get_local_id(0) < N % VEC) {
    const int i = vectors * VEC + get_local_id(0);
    const float v = x[i];
    const float k = 0.7978845608028654f;
    y[i] = 0.5f * v * (1.0f + tanh(k * (v + 0.044715f * v * v * v)));
  }
}
