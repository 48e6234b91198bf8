// OpenCL C: __kernel functions, __global pointers, get_global_id; no C++ and no host code.
__kernel void scale(__global const float* restrict x, __global float* restrict y, float alpha, int n) {
  const int i = get_global_id(0);
  if (i < n) y[i] = alpha * x[i];  // float literals and built-ins: 2.0f, fmax, native_exp
}
