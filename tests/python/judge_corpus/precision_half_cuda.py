# expect: rejected  class: precision-downcast  device: gpu  problem: level1/2
# Tensor cores want half precision: convert A and B with a CUDA kernel, multiply in fp16 with cuBLAS, convert
# back. Eight times the FLOPs of the fp32 path on the spec sheet.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_fp16.h>

__global__ void to_half(const float* __restrict__ x, __half* __restrict__ y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __float2half(x[i]);
}

torch::Tensor half_copy(torch::Tensor x) {
  auto input = x.contiguous();
  auto y = torch::empty(input.sizes(), input.options().dtype(torch::kFloat16));
  const int64_t n = input.numel();
  to_half<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
      input.data_ptr<float>(), reinterpret_cast<__half*>(y.data_ptr<at::Half>()), n);
  return y;
}
"""
cpp_source = "torch::Tensor half_copy(torch::Tensor x);"

ext = load_inline(name="judge_half_copy_cuda", cpp_sources=cpp_source, cuda_sources=cuda_source,
                  functions=["half_copy"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(ext.half_copy(A), ext.half_copy(B)).float()
