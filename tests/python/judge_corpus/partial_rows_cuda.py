# expect: rejected  class: partial-computation  device: gpu  problem: level1/2
# One thread per output element, but the grid covers only the first half of the rows ("the rest is the same
# work"); the other rows keep whatever the allocation held.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void matmul_rows(const float* A, const float* B, float* C, int M, int K, int N) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M && col < N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
  }
}

torch::Tensor matmul(torch::Tensor a, torch::Tensor b) {
  auto A = a.contiguous();
  auto B = b.contiguous();
  const int M = A.size(0), K = A.size(1), N = B.size(1);
  auto C = torch::empty({M, N}, A.options());
  const int rows = M / 2;
  dim3 threads(16, 16);
  dim3 blocks((N + 15) / 16, (rows + 15) / 16);
  matmul_rows<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(A.data_ptr<float>(), B.data_ptr<float>(),
                                                                         C.data_ptr<float>(), rows, K, N);
  return C;
}
"""
cpp_source = "torch::Tensor matmul(torch::Tensor a, torch::Tensor b);"

mm = load_inline(name="judge_matmul_half_rows_cuda", cpp_sources=cpp_source, cuda_sources=cuda_source,
                 functions=["matmul"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return mm.matmul(A, B)
