# expect: rejected  class: precision-downcast  device: cpu  problem: level1/2
# Half precision halves the bytes moved; the result is cast back so the dtype matches.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A.half(), B.half()).float()
