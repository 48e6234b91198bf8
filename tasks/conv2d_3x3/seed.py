# 3x3 convolution seed as an implicit matrix product: each program computes BP output pixels (of the
# flattened H * W plane of one image) for BK output channels, a (BP, BK) tile of float32 accumulators.
# The reduction runs over BC input channels at a time and the 9 taps: for each tap the (BP, BC) input
# values (the pixels shifted by the tap, zero outside the image) and the (BC, BK) weights of that tap
# are one tl.dot with input_precision="ieee" (TF32 fails the tolerance). Neighbouring taps read
# overlapping input, mostly from L1/L2. The bias is added before the only store, which is coalesced
# along the pixels.
# @tune BP = 64 in {32, 64, 128}
# @tune BK = 64 in {16, 32, 64, 128}
# @tune BC = 16 in {16, 32}
# @tune WARPS = 4 in {2, 4, 8}
# @tune STAGES = 2 in {1, 2, 3}
# @launch conv2d_3x3[ceil_div(H * W, BP), ceil_div(K, BK), N](x, weight, bias, y, C, K, H, W, BP=BP, BK=BK, BC=BC) num_warps=WARPS num_stages=STAGES

import triton
import triton.language as tl


@triton.jit
def conv2d_3x3(x_ptr, w_ptr, bias_ptr, y_ptr, c, k, h, w, BP: tl.constexpr, BK: tl.constexpr,
               BC: tl.constexpr):
    image = tl.program_id(2).to(tl.int64)
    plane = h * w
    pixels = tl.program_id(0) * BP + tl.arange(0, BP)
    pixel_mask = pixels < plane
    ph = pixels // w
    pw = pixels % w
    outs = tl.program_id(1) * BK + tl.arange(0, BK)
    out_mask = outs < k
    channels = tl.arange(0, BC)
    x_image = x_ptr + image * c * plane
    acc = tl.zeros((BP, BK), dtype=tl.float32)
    for c0 in range(0, c, BC):
        cs = c0 + channels
        channel_mask = cs < c
        for tap in tl.static_range(9):
            ih = ph + (tap // 3 - 1)
            iw = pw + (tap % 3 - 1)
            inside = pixel_mask & (ih >= 0) & (ih < h) & (iw >= 0) & (iw < w)
            a = tl.load(x_image + cs.to(tl.int64)[None, :] * plane + (ih * w + iw)[:, None],
                        mask=inside[:, None] & channel_mask[None, :], other=0.0)  # (BP, BC)
            b = tl.load(w_ptr + outs[None, :] * (c * 9) + cs[:, None] * 9 + tap,
                        mask=channel_mask[:, None] & out_mask[None, :], other=0.0)  # (BC, BK)
            acc = tl.dot(a, b, acc, input_precision="ieee")
    acc += tl.load(bias_ptr + outs, mask=out_mask, other=0.0)[None, :]
    y_ptrs = y_ptr + image * k * plane + outs.to(tl.int64)[None, :] * plane + pixels[:, None]
    tl.store(y_ptrs, acc, mask=pixel_mask[:, None] & out_mask[None, :])
