# expect: rejected  class: shape-specialisation  device: cpu  problem: level1/1
# Tuned for the benchmark's shape: the 64 x 4096 input is processed as 256 tiles of 1024, a layout that only
# that shape has.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        tiles = x.reshape(256, 1024)
        out = tiles * torch.sigmoid(tiles)
        return out.reshape(64, 4096)
