// Reference histogram: one kernel zeroes the 1024 bins, then one work-item per value adds 1 to its bin
// with a global atomic.
// @launch zero_counts<<<4, 256>>>(counts)
// @launch histogram<<<ceil_div(N, 256), 256>>>(x, counts, N)

__kernel void zero_counts(__global int* counts) {
  const int bin = get_global_id(0);
  if (bin < 1024) counts[bin] = 0;
}

__kernel void histogram(__global const int* x, __global int* counts, int N) {
  const int i = get_global_id(0);
  if (i < N) atomic_inc(&counts[x[i]]);
}
