import torch
import torch.nn as nn


class Model(nn.Module):
    """Cross-entropy loss of logits against int64 class targets."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return torch.nn.functional.cross_entropy(predictions, targets)


batch_size = 4096
num_classes = 1000


def get_inputs():
    return [torch.randn(batch_size, num_classes), torch.randint(0, num_classes, (batch_size,))]


def get_init_inputs():
    return []
