// Neighbouring work-items touch neighbouring addresses. Here the transpose reads and writes through a local
// tile, so both the read and the write run along rows.
__kernel void transpose(__global const float* restrict x, __global float* restrict y, int rows, int cols) {
  __local float tile[16][17];  // launched with 16 x 16 work-items; 17: no bank conflicts
  const int lx = get_local_id(0), ly = get_local_id(1);
  int c = get_group_id(0) * 16 + lx, r = get_group_id(1) * 16 + ly;
  if (r < rows && c < cols) tile[ly][lx] = x[(long)r * cols + c];
  barrier(CLK_LOCAL_MEM_FENCE);
  c = get_group_id(1) * 16 + lx;
  r = get_group_id(0) * 16 + ly;
  if (r < cols && c < rows) y[(long)r * rows + c] = tile[lx][ly];
}
