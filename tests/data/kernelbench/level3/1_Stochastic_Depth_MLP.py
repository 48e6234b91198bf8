import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim, drop_path):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, dim)
        self.scale = drop_path

    def forward(self, x):
        return x + (1.0 - self.scale) * torch.relu(self.fc(self.norm(x)))


class Model(nn.Module):
    def __init__(self, dim, depth, drop_path_rate=0.1):
        super().__init__()
        # Swin's stochastic depth decay rule: values read from a tensor while the model is built (meta tensors have
        # none), like KernelBench's Swin problems.
        dpr = [x.item() for x in torch.linspace(0, drop_path_rate, depth)]
        self.blocks = nn.ModuleList([Block(dim, dpr[i]) for i in range(depth)])
        self.gain = torch.tensor(2.0).sqrt().item()

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x * self.gain


batch_size = 64
dim = 256
depth = 3


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [dim, depth]
