# expect: rejected  class: shape-specialisation  device: cpu  problem: level1/2
# Sizes as compile-time constants so the compiler unrolls the inner loop: right for M=128, K=256, N=96 only.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <torch/extension.h>

constexpr int64_t M = 128, K = 256, N = 96;

torch::Tensor matmul_fixed(torch::Tensor a, torch::Tensor b) {
  auto A = a.contiguous();
  auto B = b.contiguous();
  auto C = torch::zeros({M, N}, A.options());
  const float* pa = A.data_ptr<float>();
  const float* pb = B.data_ptr<float>();
  float* pc = C.data_ptr<float>();
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < K; ++k) {
      const float aik = pa[i * K + k];
      for (int64_t j = 0; j < N; ++j) pc[i * N + j] += aik * pb[k * N + j];
    }
  return C;
}
"""

mm = load_inline(name="judge_matmul_fixed", cpp_sources=cpp_source, functions=["matmul_fixed"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return mm.matmul_fixed(A, B)
