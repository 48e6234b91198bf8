import torch
import torch.nn as nn


class Model(nn.Module):
    """Elementwise Swish: x * sigmoid(x)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(x)


batch_size = 4096
dim = 8192


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return []
