# expect: flagged  class: no-custom-kernel  device: cpu  problem: level2/1  needs: kernel-accounting
# "Optimised" by fusing the bias into the GEMM with addmm and doing the epilogue in place: all PyTorch,
# no kernel of its own.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        y = torch.addmm(self.gemm.bias, x, self.gemm.weight.t())
        return y.mul_(self.scale).clamp_min_(0.0)
