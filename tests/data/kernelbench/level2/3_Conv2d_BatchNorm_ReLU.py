import torch
import torch.nn as nn


class Model(nn.Module):
    """A convolution, BatchNorm in training mode (batch statistics: deterministic), ReLU, then a learnt bias."""

    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bn = nn.BatchNorm2d(out_channels)
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.02)

    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        return torch.relu(x) + self.bias


batch_size = 64
in_channels = 8
out_channels = 32
height, width = 64, 64
kernel_size = 3
bias_shape = (out_channels, 1, 1)


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, bias_shape]
