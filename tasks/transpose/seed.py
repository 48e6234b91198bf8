# Transpose seed: each program moves a TILE_M x TILE_N tile. The load walks rows of x (consecutive
# threads on consecutive columns, 16-byte vectors), tl.trans exchanges the tile's layout through shared
# memory (the compiler's conversion, swizzled against bank conflicts), and the store walks rows of y
# (consecutive threads on consecutive rows of x): both sides of memory are coalesced. Edges are masked
# element by element.
# @tune TILE_M = 64 in {32, 64, 128}
# @tune TILE_N = 64 in {32, 64, 128}
# @tune WARPS = 4 in {2, 4, 8}
# @launch transpose[ceil_div(N, TILE_N), ceil_div(M, TILE_M)](x, y, M, N, TILE_M=TILE_M, TILE_N=TILE_N) num_warps=WARPS num_stages=1

import triton
import triton.language as tl


@triton.jit
def transpose(x_ptr, y_ptr, m, n, TILE_M: tl.constexpr, TILE_N: tl.constexpr):
    rows = tl.program_id(1) * TILE_M + tl.arange(0, TILE_M)  # rows of x, columns of y
    cols = tl.program_id(0) * TILE_N + tl.arange(0, TILE_N)  # columns of x, rows of y
    rows64 = rows.to(tl.int64)
    cols64 = cols.to(tl.int64)
    tile = tl.load(x_ptr + rows64[:, None] * n + cols64[None, :], mask=(rows < m)[:, None] & (cols < n)[None, :])
    tl.store(y_ptr + cols64[:, None] * m + rows64[None, :], tl.trans(tile),
             mask=(cols < n)[:, None] & (rows < m)[None, :])
