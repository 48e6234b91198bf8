import torch
import torch.nn as nn
import kernelsmith_test_absent_module  # no such module: the problem is refused, naming it


class Model(nn.Module):
    def forward(self, x):
        return kernelsmith_test_absent_module.apply(x)


batch_size = 8
dim = 16


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
