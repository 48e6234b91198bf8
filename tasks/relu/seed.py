# ReLU seed: each program covers BLOCK consecutive elements with one masked load and one masked store.
# Large blocks (16 values per thread at the defaults) keep several 16-byte loads in flight per thread;
# N / BLOCK programs are still thousands at the timing size, enough to fill every SM several times.
# @tune BLOCK = 4096 in {1024, 2048, 4096, 8192, 16384}
# @tune WARPS = 8 in {4, 8, 16}
# @require BLOCK >= 32 * WARPS
# @launch relu[ceil_div(N, BLOCK)](x, y, N, BLOCK=BLOCK) num_warps=WARPS num_stages=1

import triton
import triton.language as tl


@triton.jit
def relu(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(y_ptr + offsets, tl.maximum(x, 0.0), mask=mask)
