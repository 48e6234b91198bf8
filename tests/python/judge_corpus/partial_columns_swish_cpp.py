# expect: rejected  class: partial-computation  device: cpu  problem: level1/1
# The C++ loop stops after the first 256 columns of every row; the rest are copied from x unchanged, which is
# close to swish(x) wherever x is large.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor swish_head(torch::Tensor x) {
  auto input = x.contiguous();
  auto out = input.clone();
  const int64_t rows = input.size(0), cols = input.size(1);
  const int64_t head = cols < 256 ? cols : 256;
  float* o = out.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < head; ++c) {
      const float v = o[r * cols + c];
      o[r * cols + c] = v / (1.0f + std::exp(-v));
    }
  return out;
}
"""

ext = load_inline(name="judge_swish_head", cpp_sources=cpp_source, functions=["swish_head"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.swish_head(x)
