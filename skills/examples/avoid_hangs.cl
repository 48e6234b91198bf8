// Loops end for every input (bounds from sizes, not from data); barriers are reached by the whole group.
__kernel void clamp_steps(__global const float* restrict x, __global float* restrict y, int n, int max_steps) {
  const int i = get_global_id(0);
  float value = i < n ? x[i] : 0.0f;
  for (int step = 0; step < max_steps && value > 1.0f; ++step) value *= 0.5f;  // bounded even for inf
  barrier(CLK_LOCAL_MEM_FENCE);  // never inside `if (i < n)`: work-items past the end must reach it too
  if (i < n) y[i] = value;
}
