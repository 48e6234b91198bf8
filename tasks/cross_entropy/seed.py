# Cross-entropy seed: one program per row reads the row once, BLOCK logits at a time, keeping a running
# maximum and a sum of exponentials rescaled to it per lane, so the loop has no reduction (no barrier)
# and its loads stay independent; the lanes are merged once at the end. With 4 warps per program all
# M = 1024 rows of the timing size are resident at once (about 8 programs per SM), one wave without a
# tail. The running maximum starts at the most negative finite float, not -inf, so that a lane that has
# only seen masked (-inf) logits rescales by exp(0) * 0 instead of exp(-inf + inf) = NaN.
# @tune BLOCK = 2048 in {512, 1024, 2048, 4096, 8192}
# @tune WARPS = 4 in {2, 4, 8, 16}
# @require BLOCK >= 32 * WARPS
# @launch cross_entropy[M](logits, targets, loss, V, BLOCK=BLOCK) num_warps=WARPS num_stages=1

import triton
import triton.language as tl

LOWEST = tl.constexpr(-3.4028234663852886e38)


@triton.jit
def cross_entropy(logits_ptr, targets_ptr, loss_ptr, v, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    logits_row = logits_ptr + row.to(tl.int64) * v
    columns = tl.arange(0, BLOCK)
    running_max = tl.full((BLOCK,), LOWEST, dtype=tl.float32)
    running_sum = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, v, BLOCK):
        cols = start + columns
        x = tl.load(logits_row + cols, mask=cols < v, other=-float("inf"))
        new_max = tl.maximum(running_max, x)
        running_sum = running_sum * tl.exp(running_max - new_max) + tl.exp(x - new_max)
        running_max = new_max
    row_max = tl.max(running_max, axis=0)
    total = tl.sum(running_sum * tl.exp(running_max - row_max), axis=0)
    target = tl.load(targets_ptr + row)
    target_logit = tl.load(logits_row + target)
    tl.store(loss_ptr + row, row_max + tl.log(total) - target_logit)
