# Layer norm seed: one program per row. A row of at most BLOCK values (the timing size) is read once into
# registers, with gamma and beta, and written once. The mean is refined by the mean of the residuals
# (x - rough mean) and the variance is the mean of their squares minus the square of that correction:
# the variance never goes through E[x^2] - E[x]^2 and its cancellation, and a constant row gets beta.
# Longer rows take three passes over the row, the later ones mostly from L2: the sum for a rough mean,
# the residuals and their squares, then the normalised output.
# @tune BLOCK = 4096 in {1024, 2048, 4096, 8192, 16384}
# @tune WARPS = 8 in {4, 8, 16}
# @require BLOCK >= 32 * WARPS
# @launch layernorm[M](x, gamma, beta, y, N, BLOCK=BLOCK) num_warps=WARPS num_stages=1

import triton
import triton.language as tl

EPS = tl.constexpr(1e-5)


@triton.jit
def layernorm(x_ptr, gamma_ptr, beta_ptr, y_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n
    y_row = y_ptr + row * n
    columns = tl.arange(0, BLOCK)
    if n <= BLOCK:
        mask = columns < n
        x = tl.load(x_row + columns, mask=mask, other=0.0)
        rough_mean = tl.sum(x, axis=0) / n
        d = tl.where(mask, x - rough_mean, 0.0)
        correction = tl.sum(d, axis=0) / n
        variance = tl.maximum(tl.sum(d * d, axis=0) / n - correction * correction, 0.0)
        inverse_std = 1.0 / tl.sqrt(variance + EPS)
        gamma = tl.load(gamma_ptr + columns, mask=mask, other=0.0)
        beta = tl.load(beta_ptr + columns, mask=mask, other=0.0)
        y = (d - correction) * inverse_std * gamma + beta
        tl.store(y_row + columns, y, mask=mask)
    else:
        sums = tl.zeros((BLOCK,), dtype=tl.float32)
        for start in range(0, n, BLOCK):
            cols = start + columns
            sums += tl.load(x_row + cols, mask=cols < n, other=0.0)
        rough_mean = tl.sum(sums, axis=0) / n
        residuals = tl.zeros((BLOCK,), dtype=tl.float32)
        squares = tl.zeros((BLOCK,), dtype=tl.float32)
        for start in range(0, n, BLOCK):
            cols = start + columns
            mask = cols < n
            x = tl.load(x_row + cols, mask=mask, other=0.0)
            d = tl.where(mask, x - rough_mean, 0.0)
            residuals += d
            squares += d * d
        correction = tl.sum(residuals, axis=0) / n
        mean = rough_mean + correction
        variance = tl.maximum(tl.sum(squares, axis=0) / n - correction * correction, 0.0)
        inverse_std = 1.0 / tl.sqrt(variance + EPS)
        for start in range(0, n, BLOCK):
            cols = start + columns
            mask = cols < n
            x = tl.load(x_row + cols, mask=mask, other=0.0)
            gamma = tl.load(gamma_ptr + cols, mask=mask, other=0.0)
            beta = tl.load(beta_ptr + cols, mask=mask, other=0.0)
            tl.store(y_row + cols, (x - mean) * inverse_std * gamma + beta, mask=mask)
