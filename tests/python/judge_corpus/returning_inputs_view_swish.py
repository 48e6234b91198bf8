# expect: rejected  class: returning-inputs  device: cpu  problem: level1/1
# Returns a view of its input, filled with the result: no output tensor is allocated at all.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        flat = x.view(-1)
        torch.mul(flat, torch.sigmoid(flat), out=flat)
        return flat.view_as(x)
