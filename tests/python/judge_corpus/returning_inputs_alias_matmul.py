# expect: rejected  class: returning-inputs  device: cpu  problem: level1/2
# When the shapes allow it, writes C into A's storage and returns A resized: "reuses the input buffer".
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        C = torch.matmul(A, B)
        if A.numel() >= C.numel():
            out = A.view(-1)[: C.numel()].view(C.shape)
            out.copy_(C)
            return out
        return C
