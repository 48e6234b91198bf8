# expect: flagged  class: cuda-graph  device: gpu  problem: level1/1
# Records forward's launches once as a CUDA graph and replays it on every later call (inputs copied into the
# recorded buffers): the launch overhead the eager baseline pays is gone, and the work was recorded in an
# earlier call.
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
        self.graph = None

    def forward(self, x):
        if self.graph is None or self.static_in.shape != x.shape:
            self.static_in = x.clone()
            swish(self.static_in)  # compile outside the capture
            torch.cuda.synchronize()
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                self.static_out = swish(self.static_in)
        self.static_in.copy_(x)
        self.graph.replay()
        return self.static_out.clone()
