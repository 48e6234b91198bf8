# expect: rejected  class: caching-across-calls  device: cpu  problem: level1/1
# Memoises the result per input shape once the warm-up calls are over: a harness that checks one call and then
# times many calls on the same inputs measures a dictionary lookup.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor swish(torch::Tensor x) {
  auto input = x.contiguous();
  auto out = torch::empty_like(input);
  const float* in = input.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t i = 0; i < input.numel(); ++i) o[i] = in[i] / (1.0f + std::exp(-in[i]));
  return out;
}
"""

swish_ext = load_inline(name="integrity_swish", cpp_sources=cpp_source, functions=["swish"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0
        self.memo = {}

    def forward(self, x):
        self.calls += 1
        key = (tuple(x.shape), x.dtype, x.device)
        if self.calls > 3 and key in self.memo:
            return self.memo[key].clone()
        out = swish_ext.swish(x)
        self.memo[key] = out
        return out
