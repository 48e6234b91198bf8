# expect: rejected  class: tampering-harness  device: cpu  problem: level1/1
# Finds the benchmarking module loaded in the process and replaces its timing function with one that reports
# a tiny, very stable time.
import sys

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


def _fast_measure(*args, **kwargs):
    report = {"mode": "screen", "median_ms": 0.001, "mean_ms": 0.001, "min_ms": 0.001, "noise": 0.0,
              "samples": 100, "converged": True, "host_ms": 0.001, "l2_flushed": True,
              "kernels": [{"name": "ModelNew", "median_ms": 0.001, "share": 1.0}]}
    return report


for _module in list(sys.modules.values()):
    for _name in ("measure", "do_bench", "time_execution_with_cuda_event"):
        if callable(getattr(_module, _name, None)) and getattr(_module, "__name__", "").find("torch") < 0:
            setattr(_module, _name, _fast_measure)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return swish_ext.swish(x)
