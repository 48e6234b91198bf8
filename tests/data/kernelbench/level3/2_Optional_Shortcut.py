import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """A residual unit whose shortcut is an empty Sequential when its input and output channels are equal, and a
    1x1 convolution with a BatchNorm otherwise (as KernelBench's ShuffleNet unit): its state-dict entries depend
    on the sizes, and at some check sizes the two channel counts could meet."""

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)
        # A buffer that changes the output, among BatchNorm's running statistics, which do not in training mode.
        self.register_buffer("channel_scale", torch.linspace(0.5, 1.5, out_channels).view(-1, 1, 1))
        if in_channels == out_channels:
            self.shortcut = nn.Sequential()
        else:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_channels, out_channels, kernel_size=1, bias=False),
                nn.BatchNorm2d(out_channels),
            )

    def forward(self, x):
        return F.relu(self.bn(self.conv(x))) * self.channel_scale + self.shortcut(x)


batch_size = 4
out_channels = 64
in_channels = 8
height = 32
width = 32


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
