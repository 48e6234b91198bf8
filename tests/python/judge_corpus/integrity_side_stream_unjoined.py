# expect: flagged  class: other-stream  device: gpu  problem: level1/1
# Runs the kernel, and a "prefetch" of work, on a stream of its own and never joins it with the caller's
# stream: CUDA events recorded on the default stream around forward see almost nothing of it.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def swish_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offsets < n
    x = tl.load(x_ptr + offsets, mask=inside)
    tl.store(out_ptr + offsets, x * tl.sigmoid(x), mask=inside)


def swish(x):
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    swish_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.side = None
        self.scratch = None

    def forward(self, x):
        if self.side is None:
            self.side = torch.cuda.Stream()
            self.scratch = torch.randn(2048, 2048, device=x.device)
        with torch.cuda.stream(self.side):
            out = swish(x)
            warm = self.scratch
            for _ in range(8):
                warm = torch.tanh(warm @ warm)
        return out
