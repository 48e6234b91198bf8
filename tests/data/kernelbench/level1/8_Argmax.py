import torch
import torch.nn as nn


class Model(nn.Module):
    """Argmax over a dimension: an int64 output."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmax(x, dim=self.dim)


batch_size = 64
dim1 = 1024
dim2 = 1023


def get_inputs():
    return [torch.rand(batch_size, dim1, dim2)]


def get_init_inputs():
    return [1]
