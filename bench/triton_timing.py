"""``triton.testing.do_bench`` medians with the same cold-cache rule as kernelsmith's timing.

do_bench evicts the L2 before each sample by zeroing a 256 MB buffer. That leaves the cache full of dirty
lines, and their write-back runs during the timed kernel: on an H200 a kernel that reads 64 MiB measured
26.0 us after such a flush and 19.6 us after a flush that reads (bench_cache_flush.py). kernelsmith flushes
by reading (lib/evaluate/cache_flush.hpp), so the benchmarks time PyTorch and the reference timings of
do_bench the same way: while do_bench runs, its cache clearing reads the buffer (a sum) instead.
"""
from __future__ import annotations

import contextlib
from typing import Callable, Iterator


@contextlib.contextmanager
def reading_cache_flush() -> Iterator[None]:
    """Within the block, triton's do_bench evicts the L2 by reading its buffer instead of zeroing it."""
    import torch
    from triton import runtime

    driver = runtime.driver.active

    def read_flush(cache: "torch.Tensor") -> None:
        torch.sum(cache)

    original = driver.clear_cache
    driver.clear_cache = read_flush
    if driver.clear_cache is not read_flush:
        raise RuntimeError("this triton does not let do_bench's cache clearing be replaced; "
                           "its medians would carry the write-back of a zeroing flush")
    try:
        yield
    finally:
        driver.clear_cache = original


def do_bench_median(fn: Callable[[], object], warmup: int = 25, rep: int = 100) -> float:
    """Median milliseconds of ``fn`` under do_bench, the L2 evicted by a read before each sample."""
    from triton.testing import do_bench

    with reading_cache_flush():
        try:
            return float(do_bench(fn, warmup=warmup, rep=rep, return_mode="median"))
        except TypeError:  # an older triton without return_mode
            return float(do_bench(fn, warmup=warmup, rep=rep, quantiles=[0.5])[0])
