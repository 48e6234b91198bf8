import torch
import torch.nn as nn


class Model(nn.Module):
    """Linear, dropout (the module stays in training mode, so dropout is random), softmax."""

    def __init__(self, in_features, out_features, dropout_p):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, x):
        x = self.matmul(x)
        x = self.dropout(x)
        return torch.softmax(x, dim=1)


batch_size = 128
in_features = 1024
out_features = 512
dropout_p = 0.2


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, dropout_p]
