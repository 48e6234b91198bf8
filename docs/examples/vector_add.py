# A Triton candidate: one Python file of @triton.jit functions, its plan in `# @` comment lines
# (docs/candidate-format.md, docs/triton.md). Parsed by tests/cpp/test_triton_plan.cpp and compiled
# for sm_80 and sm_90 by tests/python/test_triton_compile.py.
#
# @tune BLOCK = 1024 in {256, 512, 1024, 2048, 4096}
# @tune WARPS = 4 in {2, 4, 8}
# @require BLOCK >= 32 * WARPS
# @launch add[ceil_div(N, BLOCK)](x, y, out, N, BLOCK=BLOCK) num_warps=WARPS num_stages=3

import triton
import triton.language as tl

UNROLL = tl.constexpr(1)


@triton.jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK * UNROLL)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)
