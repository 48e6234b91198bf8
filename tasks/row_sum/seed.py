# Row sum seed: each program sums ROWS rows, walking them BLOCK columns at a time into a (ROWS, BLOCK)
# accumulator of per-lane partial sums, reduced across the lanes only once at the end. Long rows (the
# timing size) take ROWS = 1 and a block of several thousand columns, so that every thread has several
# 16-byte loads in flight and one program per row (M of them) fills the device; short rows
# (a few dozen columns) do better with several rows per program and a small BLOCK.
# @tune ROWS = 1 in {1, 2, 4, 8, 16}
# @tune BLOCK = 4096 in {128, 256, 512, 1024, 2048, 4096}
# @tune WARPS = 16 in {2, 4, 8, 16}
# @launch row_sum[ceil_div(M, ROWS)](x, y, M, K, ROWS=ROWS, BLOCK=BLOCK) num_warps=WARPS num_stages=3

import triton
import triton.language as tl


@triton.jit
def row_sum(x_ptr, y_ptr, m, k, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    row_mask = rows < m
    row_start = x_ptr + rows.to(tl.int64)[:, None] * k
    columns = tl.arange(0, BLOCK)
    acc = tl.zeros((ROWS, BLOCK), dtype=tl.float32)
    for start in range(0, k, BLOCK):
        cols = start + columns
        mask = row_mask[:, None] & (cols < k)[None, :]
        acc += tl.load(row_start + cols[None, :], mask=mask, other=0.0)
    tl.store(y_ptr + rows, tl.sum(acc, axis=1), mask=row_mask)
