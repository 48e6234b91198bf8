# Histogram seed: a fixed grid of SM_COUNT * WAVES programs walks the input in BLOCK-value steps
# (grid-stride), counting each step with tl.histogram into a private 1024-bin count held by the program
# (the compiler's histogram works within the program, without global atomics); each program then adds
# its non-zero bins to the global counts with one atomic per bin, so global contention is a few hundred
# atomics per bin in total, not one per value. The first kernel zeroes the counts (outputs start as
# garbage).
# @tune BLOCK = 4096 in {1024, 2048, 4096, 8192}
# @tune WAVES = 2 in {1, 2, 4, 8}
# @tune WARPS = 8 in {4, 8, 16}
# @require BLOCK >= 32 * WARPS
# @launch zero_counts[1](counts, BINS=1024) num_warps=4 num_stages=1
# @launch histogram[max(1, min(SM_COUNT * WAVES, ceil_div(N, BLOCK)))](x, counts, N, BLOCK=BLOCK, BINS=1024) num_warps=WARPS num_stages=1

import triton
import triton.language as tl


@triton.jit
def zero_counts(counts_ptr, BINS: tl.constexpr):
    tl.store(counts_ptr + tl.arange(0, BINS), tl.zeros((BINS,), dtype=tl.int32))


@triton.jit
def histogram(x_ptr, counts_ptr, n, BLOCK: tl.constexpr, BINS: tl.constexpr):
    counts = tl.zeros((BINS,), dtype=tl.int32)
    step = tl.num_programs(0) * BLOCK
    for start in range(tl.program_id(0) * BLOCK, n, step):
        offsets = start + tl.arange(0, BLOCK)
        mask = offsets < n
        values = tl.load(x_ptr + offsets, mask=mask, other=0)
        counts += tl.histogram(values, BINS, mask=mask)
    tl.atomic_add(counts_ptr + tl.arange(0, BINS), counts, mask=counts != 0, sem="relaxed")
