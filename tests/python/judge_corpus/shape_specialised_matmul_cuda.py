# expect: rejected  class: shape-specialisation  device: gpu  problem: level1/2
# K and N as compile-time constants (256 and 96, the benchmark's) so the inner loop unrolls fully; M comes from
# the tensor. Right for the published shape only.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

constexpr int K = 256;
constexpr int N = 96;

__global__ void matmul_fixed(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M,
                             int k_real, int n_real) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= M || col >= n_real) return;
  float acc = 0.0f;
#pragma unroll 16
  for (int k = 0; k < K; ++k) {
    if (k < k_real) acc += A[row * K + k] * B[k * N + col];
  }
  C[row * n_real + col] = acc;
}

torch::Tensor matmul(torch::Tensor a, torch::Tensor b) {
  auto A = a.contiguous();
  auto B = b.contiguous();
  const int M = A.size(0);
  auto C = torch::empty({M, B.size(1)}, A.options());
  dim3 threads(16, 16);
  dim3 blocks((B.size(1) + 15) / 16, (M + 15) / 16);
  matmul_fixed<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(A.data_ptr<float>(), B.data_ptr<float>(),
                                                                          C.data_ptr<float>(), M, A.size(1),
                                                                          B.size(1));
  return C;
}
"""
cpp_source = "torch::Tensor matmul(torch::Tensor a, torch::Tensor b);"

mm = load_inline(name="judge_matmul_fixed_cuda", cpp_sources=cpp_source, cuda_sources=cuda_source,
                 functions=["matmul"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return mm.matmul(A, B)
