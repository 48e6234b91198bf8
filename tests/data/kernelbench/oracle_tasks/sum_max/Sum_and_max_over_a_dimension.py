import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Reduces over one dimension twice: its sum and its maximum, returned as a tuple.
    """

    def __init__(self, dim: int):
        super(Model, self).__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor):
        return torch.sum(x, dim=self.dim), torch.amax(x, dim=self.dim)


batch_size = 16
dim1 = 256
reduce_dim = 1


def get_inputs():
    x = torch.randn(batch_size, dim1)
    return [x]


def get_init_inputs():
    return [reduce_dim]
