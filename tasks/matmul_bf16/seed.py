# Matrix product seed (bfloat16 inputs, bfloat16 C rounded once (to nearest even) from the float32 sum): each program computes a BM x BN tile of C with
# tl.dot on the tensor cores (warpgroup MMA on Hopper, mma.sync elsewhere: the compiler picks), always
# accumulating in float32. K advances BK at a time; the compiler stages the A and B tiles through shared
# memory, NUM_STAGES deep, so that the next tiles' copies overlap this one's products. B is read in its
# own (K, N) row-major layout: no transposed copy is needed. Programs are numbered in groups of GROUP
# tile rows, so that programs running together share their A rows and B columns in L2. Edges are masked
# loads (zeros, which add nothing to the sums) and masked stores.
# @tune BM = 128 in {64, 128}
# @tune BN = 256 in {64, 128, 256}
# @tune BK = 64 in {32, 64, 128}
# @tune GROUP = 8 in {1, 4, 8, 16}
# @tune WARPS = 8 in {4, 8}
# @tune STAGES = 3 in {2, 3, 4, 5}
# @launch matmul_bf16[ceil_div(M, BM) * ceil_div(N, BN)](A, B, C, M, N, K, BM=BM, BN=BN, BK=BK, GROUP=GROUP) num_warps=WARPS num_stages=STAGES

import triton
import triton.language as tl


@triton.jit
def matmul_bf16(a_ptr, b_ptr, c_ptr, m, n, k, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                GROUP: tl.constexpr):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(m, BM)
    tiles_n = tl.cdiv(n, BN)
    per_group = GROUP * tiles_n
    first_m = (pid // per_group) * GROUP
    group_rows = tl.minimum(tiles_m - first_m, GROUP)
    pid_m = first_m + (pid % per_group) % group_rows
    pid_n = (pid % per_group) // group_rows

    rows = pid_m * BM + tl.arange(0, BM)
    cols = pid_n * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    a_ptrs = a_ptr + rows.to(tl.int64)[:, None] * k + ks[None, :]
    b_ptrs = b_ptr + ks.to(tl.int64)[:, None] * n + cols[None, :]
    row_mask = rows < m
    col_mask = cols < n
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, k, BK):
        k_mask = (k0 + ks) < k
        a = tl.load(a_ptrs, mask=row_mask[:, None] & k_mask[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_mask[:, None] & col_mask[None, :], other=0.0)
        acc = tl.dot(a, b, acc, out_dtype=tl.float32)
        a_ptrs += BK
        b_ptrs += BK * n
    c_ptrs = c_ptr + rows.to(tl.int64)[:, None] * n + cols[None, :]
    tl.store(c_ptrs, acc.to(tl.bfloat16), mask=row_mask[:, None] & col_mask[None, :])
