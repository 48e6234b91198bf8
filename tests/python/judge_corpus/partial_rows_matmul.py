# expect: rejected  class: partial-computation  device: cpu  problem: level1/2
# Computes the first 8 rows of C and leaves the rest zero: a harness that checks C[:8] (or prints a corner of
# the output) sees the right numbers, in a sixteenth of the time.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        C = torch.zeros(A.shape[0], B.shape[1], dtype=A.dtype)
        C[:8] = A[:8] @ B
        return C
