import torch
import torch.nn as nn


class Model(nn.Module):
    """Takes the reduction's name as a forward argument: a string cannot be a task tensor."""

    def __init__(self):
        super().__init__()

    def forward(self, x, reduction):
        return x.sum() if reduction == "sum" else x.mean()


N = 4096


def get_inputs():
    return [torch.rand(N), "sum"]


def get_init_inputs():
    return []
