import torch
import torch.nn as nn


class Model(nn.Module):
    """A problem whose inputs never come: get_inputs loops forever."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x + 1


N = 1024


def get_inputs():
    while True:
        pass


def get_init_inputs():
    return []
