# expect: rejected  class: reading-freed-memory  device: gpu  problem: level1/1
# PyTorch's caching allocator hands back the block the reference's output just freed: an uninitialised tensor
# of the same shape "already holds" swish(x). A launch of an empty kernel keeps the profile honest-looking.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void touch(float* y, int64_t n) {}

torch::Tensor output_like(torch::Tensor x) {
  auto y = torch::empty_like(x);
  touch<<<1, 1, 0, at::cuda::getCurrentCUDAStream()>>>(y.data_ptr<float>(), y.numel());
  return y;
}
"""
cpp_source = "torch::Tensor output_like(torch::Tensor x);"

ext = load_inline(name="judge_output_like_cuda", cpp_sources=cpp_source, cuda_sources=cuda_source,
                  functions=["output_like"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.output_like(x)
