# expect: flagged  class: no-custom-kernel  device: cpu  problem: level1/1  needs: kernel-accounting
# TorchScript "fuses" the activation: PyTorch's own kernels under another name.
import torch
import torch.nn as nn


@torch.jit.script
def fused_swish(x: torch.Tensor) -> torch.Tensor:
    return x * torch.sigmoid(x)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return fused_swish(x)
