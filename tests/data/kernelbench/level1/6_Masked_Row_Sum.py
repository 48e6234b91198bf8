import torch
import torch.nn as nn


class Model(nn.Module):
    """Sums each row over the elements a boolean mask selects."""

    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x, mask):
        return torch.sum(x * mask, dim=self.dim)


batch_size = 2048
length = 4096
dim = 1


def get_inputs():
    x = torch.rand(batch_size, length)
    mask = torch.randint(0, 2, x.shape).bool()
    return [x, mask]


def get_init_inputs():
    return [dim]
