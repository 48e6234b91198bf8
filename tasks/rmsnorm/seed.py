# RMS norm seed: one program per row. A row of at most BLOCK values (the timing size) is read once into
# registers with w, its sum of squares is one reduction over the registers, and the row is written
# once. Longer rows take two passes: the sum of squares, then (mostly from L2) the scaled output.
# @tune BLOCK = 4096 in {1024, 2048, 4096, 8192, 16384}
# @tune WARPS = 8 in {4, 8, 16}
# @require BLOCK >= 32 * WARPS
# @launch rmsnorm[M](x, w, y, N, BLOCK=BLOCK) num_warps=WARPS num_stages=1

import triton
import triton.language as tl

EPS = tl.constexpr(1e-6)


@triton.jit
def rmsnorm(x_ptr, w_ptr, y_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n
    y_row = y_ptr + row * n
    columns = tl.arange(0, BLOCK)
    if n <= BLOCK:
        mask = columns < n
        x = tl.load(x_row + columns, mask=mask, other=0.0)
        inverse_rms = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n + EPS)
        w = tl.load(w_ptr + columns, mask=mask, other=0.0)
        tl.store(y_row + columns, x * inverse_rms * w, mask=mask)
    else:
        squares = tl.zeros((BLOCK,), dtype=tl.float32)
        for start in range(0, n, BLOCK):
            cols = start + columns
            x = tl.load(x_row + cols, mask=cols < n, other=0.0)
            squares += x * x
        inverse_rms = 1.0 / tl.sqrt(tl.sum(squares, axis=0) / n + EPS)
        for start in range(0, n, BLOCK):
            cols = start + columns
            mask = cols < n
            x = tl.load(x_row + cols, mask=mask, other=0.0)
            w = tl.load(w_ptr + cols, mask=mask, other=0.0)
            tl.store(y_row + cols, x * inverse_rms * w, mask=mask)
