// Reference bfloat16 matrix product: one work-item per element of C, the dot product in order over k
// in float32, rounded once to bfloat16 (to nearest even). OpenCL C has no bfloat16 type: the values
// are the upper 16 bits of a float32, held in ushort.
// @launch matmul_bf16<<<dim3(ceil_div(N, 16), ceil_div(M, 16)), dim3(16, 16)>>>(A, B, C, M, N, K)

float bf16_to_float(ushort bits) { return as_float((uint)bits << 16); }

ushort float_to_bf16(float value) {
  const uint bits = as_uint(value);
  if (isnan(value)) return (ushort)((bits >> 16) | 0x40u);
  return (ushort)((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

__kernel void matmul_bf16(__global const ushort* A, __global const ushort* B, __global ushort* C, int M, int N, int K) {
  const int col = get_global_id(0);
  const int row = get_global_id(1);
  if (row < M && col < N) {
    float sum = 0.0f;
    for (int k = 0; k < K; ++k) {
      sum += bf16_to_float(A[(long)row * K + k]) * bf16_to_float(B[(long)k * N + col]);
    }
    C[(long)row * N + col] = float_to_bf16(sum);
  }
}
