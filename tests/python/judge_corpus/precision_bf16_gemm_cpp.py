# expect: rejected  class: precision-downcast  device: cpu  problem: level2/1
# bfloat16 GEMM (twice the throughput on tensor units), then a C++ epilogue that scales, applies ReLU and
# converts back to float32.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <torch/extension.h>

torch::Tensor scale_relu_to_float(torch::Tensor y, double scale) {
  auto input = y.to(torch::kFloat32).contiguous();
  auto out = torch::empty_like(input);
  const float* in = input.data_ptr<float>();
  float* o = out.data_ptr<float>();
  const float s = static_cast<float>(scale);
  for (int64_t i = 0; i < input.numel(); ++i) {
    const float v = in[i] * s;
    o[i] = v > 0.0f ? v : 0.0f;
  }
  return out;
}
"""

epilogue = load_inline(name="judge_bf16_epilogue", cpp_sources=cpp_source, functions=["scale_relu_to_float"],
                       verbose=False)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        y = torch.nn.functional.linear(x.bfloat16(), self.gemm.weight.bfloat16(), self.gemm.bias.bfloat16())
        return epilogue.scale_relu_to_float(y, self.scale)
