# expect: rejected  class: lazy-result  device: cpu  problem: level1/1
# Returns an object that only looks like a tensor: it computes when converted (numpy, item access, .cpu()).
import torch
import torch.nn as nn


class LazySwish:
    def __init__(self, x):
        self._x = x
        self.shape = x.shape
        self.dtype = x.dtype
        self.device = x.device

    def _value(self):
        return self._x * torch.sigmoid(self._x)

    def __array__(self, dtype=None):
        return self._value().numpy()

    def __getattr__(self, name):
        return getattr(self._value(), name)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return LazySwish(x)
