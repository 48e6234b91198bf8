import os
import sys

import torch
import torch.nn as nn


class Model(nn.Module):
    """A problem that kills the process that builds it."""

    def __init__(self):
        super().__init__()
        print("building the model aborts the process", file=sys.stderr, flush=True)
        os.abort()

    def forward(self, x):
        return x


N = 1024


def get_inputs():
    return [torch.rand(N)]


def get_init_inputs():
    return []
