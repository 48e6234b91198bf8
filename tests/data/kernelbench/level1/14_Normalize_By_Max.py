import torch
import torch.nn as nn


class Model(nn.Module):
    """Divides by the largest magnitude, read back as a Python number: forward cannot run on the meta device."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x / x.abs().max().item()


batch_size = 512
dim = 1024


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
