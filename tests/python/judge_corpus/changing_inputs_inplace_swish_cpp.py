# expect: rejected  class: changing-inputs  device: cpu  problem: level1/1
# "Zero-allocation" swish: the C++ kernel overwrites x with the result and forward returns x. A harness that
# runs the reference first and compares once sees the right values.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor swish_(torch::Tensor x) {
  float* p = x.data_ptr<float>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) p[i] = p[i] / (1.0f + std::exp(-p[i]));
  return x;
}
"""

ext = load_inline(name="judge_swish_inplace", cpp_sources=cpp_source, functions=["swish_"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        # In place saves a 1 MiB allocation per call.
        return ext.swish_(x)
