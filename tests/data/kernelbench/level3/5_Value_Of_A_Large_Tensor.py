# The constructor reads the value of a tensor too large to be made real while building on the meta device:
# refused, saying so.
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        w = torch.randn(dim, dim)
        self.scale = w.abs().max().item()
        self.weight = nn.Parameter(w / self.scale)

    def forward(self, x):
        return x @ self.weight

batch_size = 32
dim = 1024

def get_inputs():
    return [torch.randn(batch_size, dim)]

def get_init_inputs():
    return [dim]
