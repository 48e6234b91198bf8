# expect: rejected  class: background-thread  device: cpu  problem: level1/1
# A thread pool made when the file is loaded computes chunks of the output in parallel; the pool outlives every
# forward and could run anything while the next one is timed.
from concurrent.futures import ThreadPoolExecutor

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

_pool = ThreadPoolExecutor(max_workers=4)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        chunks = list(x.contiguous().chunk(4))
        return torch.cat(list(_pool.map(swish_ext.swish, chunks)))
