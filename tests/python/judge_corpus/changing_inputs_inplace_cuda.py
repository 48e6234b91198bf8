# expect: rejected  class: changing-inputs  device: gpu  problem: level1/1
# "Saves an allocation": the kernel writes swish(x) over x and forward returns x.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void swish_inplace(float* x, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] / (1.0f + __expf(-x[i]));
}

torch::Tensor swish_(torch::Tensor x) {
  const int64_t n = x.numel();
  swish_inplace<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(), n);
  return x;
}
"""
cpp_source = "torch::Tensor swish_(torch::Tensor x);"

ext = load_inline(name="judge_swish_inplace_cuda", cpp_sources=cpp_source, cuda_sources=cuda_source,
                  functions=["swish_"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.swish_(x)
