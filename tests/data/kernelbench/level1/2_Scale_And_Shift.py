import torch
import torch.nn as nn


class Model(nn.Module):
    """A * alpha + 1, where alpha is a Python float given to forward."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, alpha: float) -> torch.Tensor:
        return A * alpha + 1.0


M = 1024 * 4
N = 2048


def get_inputs():
    A = torch.randn(M, N)
    alpha = 0.75
    return [A, alpha]


def get_init_inputs():
    return []
