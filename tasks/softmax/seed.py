# Softmax seed: one program per row. A row of at most BLOCK values (the timing size) is read once into
# registers; its maximum and its sum of exponentials are two reductions over the registers, each
# exponential is computed once and kept, and the row is written once: x read once, y written once.
# Longer rows take a two-pass path: an online pass keeps a running maximum and a rescaled sum per lane
# (no reduction inside the loop), the lanes are merged once, and a second pass (mostly from L2) writes y.
# The running maximum starts at the most negative finite float, not -inf, so that a lane that has only
# seen masked (-inf) values rescales by exp(0) * 0 instead of exp(-inf + inf) = NaN.
# @tune BLOCK = 4096 in {1024, 2048, 4096, 8192, 16384}
# @tune WARPS = 8 in {4, 8, 16}
# @require BLOCK >= 32 * WARPS
# @launch softmax[M](x, y, N, BLOCK=BLOCK) num_warps=WARPS num_stages=1

import triton
import triton.language as tl

LOWEST = tl.constexpr(-3.4028234663852886e38)


@triton.jit
def softmax(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n
    y_row = y_ptr + row * n
    columns = tl.arange(0, BLOCK)
    if n <= BLOCK:
        mask = columns < n
        x = tl.load(x_row + columns, mask=mask, other=-float("inf"))
        e = tl.exp(x - tl.max(x, axis=0))  # masked lanes: exp(-inf) = 0
        inverse = 1.0 / tl.sum(e, axis=0)
        tl.store(y_row + columns, e * inverse, mask=mask)
    else:
        running_max = tl.full((BLOCK,), LOWEST, dtype=tl.float32)
        running_sum = tl.zeros((BLOCK,), dtype=tl.float32)
        for start in range(0, n, BLOCK):
            cols = start + columns
            x = tl.load(x_row + cols, mask=cols < n, other=-float("inf"))
            new_max = tl.maximum(running_max, x)
            running_sum = running_sum * tl.exp(running_max - new_max) + tl.exp(x - new_max)
            running_max = new_max
        row_max = tl.max(running_max, axis=0)
        inverse = 1.0 / tl.sum(running_sum * tl.exp(running_max - row_max), axis=0)
        for start in range(0, n, BLOCK):
            cols = start + columns
            mask = cols < n
            x = tl.load(x_row + cols, mask=mask, other=-float("inf"))
            tl.store(y_row + cols, tl.exp(x - row_max) * inverse, mask=mask)
