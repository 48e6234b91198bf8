import torch
import torch.nn as nn


class Model(nn.Module):
    """A problem whose forward fails on every input: the oracle must say where, not crash."""

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise ValueError("this problem's forward always fails")


batch_size = 4
dim = 8


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
