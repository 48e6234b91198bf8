import torch
import torch.nn as nn


class Model(nn.Module):
    """A Linear layer, a multiplication by a float given at construction, then tanh."""

    def __init__(self, in_features, out_features, multiplier):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.multiplier = multiplier

    def forward(self, x):
        x = self.gemm(x)
        x = x * self.multiplier
        return torch.tanh(x)


batch_size = 512
in_features = 1024
out_features = 2048
multiplier = 2.5


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, multiplier]
