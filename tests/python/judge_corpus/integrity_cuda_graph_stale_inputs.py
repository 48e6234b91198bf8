# expect: rejected  class: cuda-graph  device: gpu  problem: level1/1
# Records the graph on the first call's input and replays it without copying new inputs in: right on the
# input it was checked with, stale on every other.
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
        self.graphs = {}

    def forward(self, x):
        key = tuple(x.shape)
        if key not in self.graphs:
            static_in = x.clone()
            swish(static_in)
            torch.cuda.synchronize()
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                static_out = swish(static_in)
            self.graphs[key] = (graph, static_out)
        graph, static_out = self.graphs[key]
        graph.replay()
        return static_out.clone()
