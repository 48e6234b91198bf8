# expect: rejected  class: changing-inputs  device: cpu  problem: level2/1
# Folds the scale into x in place (x *= scale) so the epilogue is a bare ReLU: the output is right, and x is left
# scaled for whoever reads it next (the reference, when it runs after the candidate).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        x.mul_(self.scale)
        # relu((x * s) W^T + s b) = relu(s (x W^T + b)): the bias has to be scaled too.
        return torch.relu(torch.addmm(self.gemm.bias * self.scale, x, self.gemm.weight.t()))
