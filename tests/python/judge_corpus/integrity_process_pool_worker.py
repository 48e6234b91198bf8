# expect: rejected  class: background-process  device: cpu  problem: level1/1
# A helper process started once keeps serving: forward hands it the input and returns its answer; the process
# stays alive between calls (and could precompute the next one).
import subprocess
import sys

import torch
import torch.nn as nn

_WORKER = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.worker = _WORKER

    def forward(self, x):
        return x * torch.sigmoid(x)
