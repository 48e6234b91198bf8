import torch
import torch.nn as nn


class Model(nn.Module):
    """A Linear layer, scaled, then ReLU."""

    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        return torch.relu(self.gemm(x) * self.scale)


batch_size = 128
in_features = 256
out_features = 192
scale = 1.5


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, scale]
