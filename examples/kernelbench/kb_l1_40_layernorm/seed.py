# nn.LayerNorm over the last three dimensions of x (batch_size, features, dim1, dim2), eps = 1e-5 (the
# module's default), with the elementwise affine ln_weight and ln_bias of shape (features, dim1, dim2):
# every one of the batch_size rows of D = features * dim1 * dim2 values is normalised by its own mean and
# biased variance. At the timing sizes there are 16 rows of 4M values, far too few rows for a program per
# row, so each row is split into chunks of CHUNK values and three kernels run:
#   1. layernorm_chunks: a program per chunk writes the chunk's mean and the sum of squared deviations from
#      that mean (from registers: no E[x^2] - E[x]^2 cancellation);
#   2. layernorm_rows: a program per row combines its chunks' moments exactly (mean = sum of count * chunk
#      mean over D; M2 = sum of chunk M2 + count * (chunk mean - mean)^2) and writes mean and
#      1 / sqrt(var + eps);
#   3. layernorm_apply: a program per chunk normalises, scales and shifts; consecutive programs take the
#      same chunk of every row, so that each chunk of ln_weight and ln_bias is read from memory once and from
#      L2 by the other rows.
# x is read twice and out written once; every sum has a fixed order, so the result is deterministic.
# @tune CHUNK = 4096 in {1024, 2048, 4096, 8192, 16384}
# @tune WARPS = 8 in {4, 8, 16}
# @require CHUNK >= 32 * WARPS
# @workspace moments: float32[2 * batch_size * ceil_div(features * dim1 * dim2, CHUNK)]
# @workspace stats: float32[2 * batch_size]
# @launch layernorm_chunks[batch_size * ceil_div(features * dim1 * dim2, CHUNK)](x, moments, features * dim1 * dim2, CHUNK=CHUNK) num_warps=WARPS num_stages=1
# @launch layernorm_rows[batch_size](moments, stats, features * dim1 * dim2, CHUNK=CHUNK, BLOCK=1024) num_warps=4 num_stages=1
# @launch layernorm_apply[batch_size * ceil_div(features * dim1 * dim2, CHUNK)](x, ln_weight, ln_bias, stats, out, batch_size, features * dim1 * dim2, CHUNK=CHUNK) num_warps=WARPS num_stages=1

import triton
import triton.language as tl

EPS = tl.constexpr(1e-5)


@triton.jit
def layernorm_chunks(x_ptr, moments_ptr, d, CHUNK: tl.constexpr):
    pid = tl.program_id(0)
    chunks = tl.cdiv(d, CHUNK)
    row = pid // chunks
    begin = (pid % chunks) * CHUNK
    cols = begin + tl.arange(0, CHUNK)
    mask = cols < d
    count = tl.minimum(d - begin, CHUNK).to(tl.float32)
    x = tl.load(x_ptr + row.to(tl.int64) * d + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / count
    deviation = tl.where(mask, x - mean, 0.0)
    tl.store(moments_ptr + 2 * pid, mean)
    tl.store(moments_ptr + 2 * pid + 1, tl.sum(deviation * deviation, axis=0))


@triton.jit
def layernorm_rows(moments_ptr, stats_ptr, d, CHUNK: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    chunks = tl.cdiv(d, CHUNK)
    row_moments = moments_ptr + 2 * row.to(tl.int64) * chunks
    lanes = tl.arange(0, BLOCK)
    weighted = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, chunks, BLOCK):
        c = start + lanes
        mask = c < chunks
        counts = tl.minimum(d - c * CHUNK, CHUNK).to(tl.float32)
        weighted += tl.where(mask, counts * tl.load(row_moments + 2 * c, mask=mask, other=0.0), 0.0)
    mean = tl.sum(weighted, axis=0) / d
    m2 = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, chunks, BLOCK):
        c = start + lanes
        mask = c < chunks
        counts = tl.minimum(d - c * CHUNK, CHUNK).to(tl.float32)
        deviation = tl.load(row_moments + 2 * c, mask=mask, other=0.0) - mean
        m2 += tl.where(mask, tl.load(row_moments + 2 * c + 1, mask=mask, other=0.0) + counts * deviation * deviation,
                       0.0)
    variance = tl.sum(m2, axis=0) / d
    tl.store(stats_ptr + 2 * row, mean)
    tl.store(stats_ptr + 2 * row + 1, 1.0 / tl.sqrt(variance + EPS))


@triton.jit
def layernorm_apply(x_ptr, weight_ptr, bias_ptr, stats_ptr, out_ptr, rows, d, CHUNK: tl.constexpr):
    pid = tl.program_id(0)
    row = pid % rows
    cols = (pid // rows) * CHUNK + tl.arange(0, CHUNK)
    mask = cols < d
    mean = tl.load(stats_ptr + 2 * row)
    inverse_std = tl.load(stats_ptr + 2 * row + 1)
    offsets = row.to(tl.int64) * d + cols
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    weight = tl.load(weight_ptr + cols, mask=mask, other=0.0)
    bias = tl.load(bias_ptr + cols, mask=mask, other=0.0)
    tl.store(out_ptr + offsets, (x - mean) * inverse_std * weight + bias, mask=mask)
