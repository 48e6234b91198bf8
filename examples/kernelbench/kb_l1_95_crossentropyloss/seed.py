# torch.nn.functional.cross_entropy(predictions, targets) with its default mean reduction: predictions is
# (batch_size, num_classes) float32 row-major, targets (batch_size) int64 class indices, out a 0-d float32:
# out = mean over rows r of log(sum over c of exp(predictions[r, c])) - predictions[r, targets[r]].
# Memory-bound: the fewest bytes are one read of predictions.
#
# Two kernels, so that the mean is summed in a fixed order (the same bits on every run, no float atomics):
#   1. cross_entropy_rows: a program per ROWS rows reads them BLOCK columns at a time, keeping per lane a
#      running maximum and a sum of exponentials rescaled to it (no reduction inside the loop), merges the
#      lanes once, and writes the sum of its rows' losses to partial[program].
#   2. cross_entropy_mean: one program adds the partials (BLOCK lanes, then one fixed tree) and divides by
#      batch_size.
# The running maximum starts at the most negative finite float, not -inf, so that a lane that has only seen
# masked (-inf) values rescales by exp(0) * 0 instead of exp(-inf + inf) = NaN. A target outside
# [0, num_classes) gives NaN (PyTorch raises an error there) rather than a read out of bounds.
# @tune ROWS = 4 in {1, 2, 4, 8}
# @tune BLOCK = 1024 in {256, 512, 1024, 2048, 4096}
# @tune WARPS = 8 in {2, 4, 8, 16}
# @require ROWS * BLOCK >= 32 * WARPS
# @workspace partial: float32[ceil_div(batch_size, ROWS)]
# @launch cross_entropy_rows[ceil_div(batch_size, ROWS)](predictions, targets, partial, batch_size, num_classes, ROWS=ROWS, BLOCK=BLOCK) num_warps=WARPS num_stages=1
# @launch cross_entropy_mean[1](partial, out, ceil_div(batch_size, ROWS), batch_size, BLOCK=1024) num_warps=4 num_stages=1

import triton
import triton.language as tl

LOWEST = tl.constexpr(-3.4028234663852886e38)


@triton.jit
def cross_entropy_rows(x_ptr, targets_ptr, partial_ptr, batch, classes, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * ROWS + tl.arange(0, ROWS)
    row_mask = rows < batch
    row_ptrs = x_ptr + rows.to(tl.int64)[:, None] * classes
    columns = tl.arange(0, BLOCK)
    running_max = tl.full((ROWS, BLOCK), LOWEST, dtype=tl.float32)
    running_sum = tl.zeros((ROWS, BLOCK), dtype=tl.float32)
    for start in range(0, classes, BLOCK):
        cols = start + columns
        x = tl.load(row_ptrs + cols[None, :], mask=row_mask[:, None] & (cols < classes)[None, :],
                    other=-float("inf"))
        new_max = tl.maximum(running_max, x)
        running_sum = running_sum * tl.exp(running_max - new_max) + tl.exp(x - new_max)
        running_max = new_max
    row_max = tl.max(running_max, axis=1)
    total = tl.sum(running_sum * tl.exp(running_max - row_max[:, None]), axis=1)
    target = tl.load(targets_ptr + rows, mask=row_mask, other=0)
    valid = (target >= 0) & (target < classes)
    target_logit = tl.load(x_ptr + rows.to(tl.int64) * classes + target, mask=row_mask & valid, other=0.0)
    loss = tl.where(valid, row_max + tl.log(total) - target_logit, float("nan"))
    tl.store(partial_ptr + pid, tl.sum(tl.where(row_mask, loss, 0.0), axis=0))


@triton.jit
def cross_entropy_mean(partial_ptr, out_ptr, count, batch, BLOCK: tl.constexpr):
    lanes = tl.arange(0, BLOCK)
    sums = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, count, BLOCK):
        sums += tl.load(partial_ptr + start + lanes, mask=start + lanes < count, other=0.0)
    tl.store(out_ptr, tl.sum(sums, axis=0) / batch)
