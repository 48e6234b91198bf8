# diag(A) @ B without the diagonal matrix: out[i, j] = A[i] * B[i, j], as the problem's A.unsqueeze(1) * B.
# A is (N), B and out are (N, M) row-major. Memory-bound: B is read once and out written once.
#
# Each program scales a ROWS x BLOCK tile of B by the tile's ROWS values of A (one masked load each), with
# one masked load and one masked store of the tile. Consecutive programs take consecutive column tiles of
# the same rows, so that programs running together read and write neighbouring memory.
# @tune BLOCK = 1024 in {256, 512, 1024, 2048, 4096}
# @tune ROWS = 4 in {1, 2, 4, 8}
# @tune WARPS = 4 in {2, 4, 8, 16}
# @require ROWS * BLOCK >= 32 * WARPS
# @launch diag_matmul[ceil_div(M, BLOCK) * ceil_div(N, ROWS)](A, B, out, N, M, BLOCK=BLOCK, ROWS=ROWS) num_warps=WARPS num_stages=1

import triton
import triton.language as tl


@triton.jit
def diag_matmul(a_ptr, b_ptr, out_ptr, n, m, BLOCK: tl.constexpr, ROWS: tl.constexpr):
    pid = tl.program_id(0)
    column_tiles = tl.cdiv(m, BLOCK)
    rows = (pid // column_tiles) * ROWS + tl.arange(0, ROWS)
    cols = (pid % column_tiles) * BLOCK + tl.arange(0, BLOCK)
    row_mask = rows < n
    mask = row_mask[:, None] & (cols < m)[None, :]
    offsets = rows.to(tl.int64)[:, None] * m + cols[None, :]
    scale = tl.load(a_ptr + rows, mask=row_mask, other=0.0)
    b = tl.load(b_ptr + offsets, mask=mask, other=0.0)
    tl.store(out_ptr + offsets, scale[:, None] * b, mask=mask)
