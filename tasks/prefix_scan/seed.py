# Inclusive scan seed: a single pass with decoupled look-back, so x is read once and y written once.
# Each program takes the next tile of TILE values from a ticket counter (so every tile it waits on
# belongs to a program that is already running, and the look-back cannot deadlock), loads it, and
# publishes the tile's sum at once; it then scans the tile in registers (tl.cumsum) while its
# predecessors finish, and looks back over WINDOW predecessors at a time: when all of them have
# published, the nearest inclusive prefix among them ends the look-back (the sums of the tiles after it
# are added), else all WINDOW sums are added and the window moves back; while one has not published
# yet, the window is read again. It then publishes its own inclusive prefix and stores its tile.
#
# A tile's state is one 64-bit word, written atomically: the flag in the high half (0 nothing yet,
# 1 the tile's own sum, 2 the inclusive prefix up to and including the tile), the value in the low half.
# The first kernel clears the states and the ticket counter (workspaces start as garbage).
# @tune TILE = 4096 in {2048, 4096, 8192, 16384}
# @tune WARPS = 4 in {4, 8, 16}
# @tune WINDOW = 32 in {16, 32, 64}
# @require TILE >= 32 * WARPS
# @workspace states: int64[ceil_div(N, TILE)]
# @workspace ticket: int32[1]
# @launch clear_states[ceil_div(ceil_div(N, TILE), 1024)](states, ticket, ceil_div(N, TILE), BLOCK=1024) num_warps=4 num_stages=1
# @launch scan[ceil_div(N, TILE)](x, y, states, ticket, N, TILE=TILE, WINDOW=WINDOW) num_warps=WARPS num_stages=1

import triton
import triton.language as tl

AGGREGATE = tl.constexpr(1 << 32)  # flag 1 in the high half
INCLUSIVE = tl.constexpr(2 << 32)  # flag 2 in the high half


@triton.jit
def clear_states(states_ptr, ticket_ptr, tiles, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(states_ptr + offsets, tl.zeros((BLOCK,), dtype=tl.int64), mask=offsets < tiles)
    if tl.program_id(0) == 0:
        tl.store(ticket_ptr, 0)


@triton.jit
def pack(flag, value):
    # The value's 32 bits, zero-extended, under the flag.
    return flag + value.to(tl.uint32, bitcast=True).to(tl.int64)


@triton.jit
def scan(x_ptr, y_ptr, states_ptr, ticket_ptr, n, TILE: tl.constexpr, WINDOW: tl.constexpr):
    tile = tl.atomic_add(ticket_ptr, 1)
    offsets = tile.to(tl.int64) * TILE + tl.arange(0, TILE)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=0)
    aggregate = tl.sum(x, axis=0)
    if tile == 0:
        tl.atomic_xchg(states_ptr, pack(INCLUSIVE, aggregate))
    else:
        tl.atomic_xchg(states_ptr + tile, pack(AGGREGATE, aggregate))
    scanned = tl.cumsum(x, axis=0)

    prefix = aggregate * 0  # the sum of all tiles before this one
    lanes = tl.arange(0, WINDOW)
    nearest = tile - 1  # the predecessor lane 0 reads
    done = (tile == 0).to(tl.int32)
    while done == 0:
        predecessors = nearest - lanes
        # Before tile 0 there is nothing: an inclusive prefix of 0.
        states = tl.load(states_ptr + predecessors, mask=predecessors >= 0, other=INCLUSIVE, volatile=True)
        flags = states >> 32
        all_published = tl.min(flags, axis=0) > 0
        first_inclusive = tl.min(tl.where(flags == 2, lanes, WINDOW), axis=0)
        taken = (lanes <= first_inclusive) & all_published
        prefix += tl.sum(tl.where(taken, states.to(tl.int32), 0), axis=0)
        done = (all_published & (first_inclusive < WINDOW)).to(tl.int32)
        nearest = tl.where(all_published, nearest - WINDOW, nearest)
    if tile != 0:
        tl.atomic_xchg(states_ptr + tile, pack(INCLUSIVE, prefix + aggregate))
    tl.store(y_ptr + offsets, scanned + prefix, mask=mask)
