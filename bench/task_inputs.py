"""Inputs for a task's PyTorch expression, drawn with torch the way the task's distributions say
(docs/task-format.md): the benchmark scripts time PyTorch on them. Values differ from the evaluator's
(another generator); their kind and structure are the same."""
from __future__ import annotations

from typing import Any, Dict, Sequence


def draw_input(torch: Any, distribution: Dict[str, Any], shape: Sequence[int], dtype: Any, generator: Any,
               device: str) -> Any:
    """One input tensor of `shape` and `dtype` for a manifest's distribution object."""
    kind = distribution.get("kind", "normal")
    a, b = float(distribution.get("a", 0.0)), float(distribution.get("b", 1.0))
    if kind == "integers":
        value = torch.randint(int(a), int(b) + 1, list(shape), generator=generator, device=device)
    elif kind == "uniform":
        value = torch.rand(list(shape), generator=generator, device=device) * (b - a) + a
    elif kind == "normal":
        value = torch.randn(list(shape), generator=generator, device=device) * b + a
    elif kind == "constant":
        value = torch.full(list(shape), a, device=device)
    else:
        raise ValueError(f"unknown distribution kind {kind!r}: expected normal, uniform, integers or constant")
    structure = distribution.get("structure", "none")
    if structure == "symmetric":
        lower = torch.tril(value)
        value = lower + torch.tril(value, diagonal=-1).transpose(-2, -1)
    elif structure == "lower_triangular":
        value = torch.tril(value)
    elif structure == "upper_triangular":
        value = torch.triu(value)
    elif structure == "probability_rows":
        value = torch.softmax(value.double(), dim=-1)
    elif structure != "none":
        raise ValueError(f"unknown structure {structure!r}: expected none, symmetric, lower_triangular, "
                         "upper_triangular or probability_rows")
    return value.to(dtype).contiguous()
