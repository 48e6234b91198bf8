"""What the benchmark scripts share about a task's accuracy: its tolerance as the evaluator reads it, and
PyTorch held to float32 (no TF32) while it computes an answer that is compared with the task's check."""
from __future__ import annotations

import contextlib
from typing import Any, Dict, Iterator, Tuple


def tolerance(manifest: Dict[str, Any], dtype: str) -> Tuple[float, float]:
    """(atol, rtol) for outputs of `dtype`: the manifest's, else the evaluator's default for the dtype
    (kernelsmith.default_tolerance, what Task.tolerance_for gives)."""
    given = manifest.get("tolerance")
    if given:  # the task format requires both numbers
        return float(given["atol"]), float(given["rtol"])
    import kernelsmith as ks

    default = ks.default_tolerance(ks.parse_dtype(dtype))
    return default.atol, default.rtol


@contextlib.contextmanager
def float32_exactly() -> Iterator[None]:
    """TF32 off for matrix products and cuDNN inside the block (PyTorch's default lets cuDNN convolutions use
    it, which fails the float32 tasks' check); PyTorch's previous settings come back afterwards."""
    import torch

    saved = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved
