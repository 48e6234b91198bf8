"""Trivial programs against a task's checks: can a program that ignores the operation pass?

KernelBench draws most inputs with ``torch.rand`` (uniform on [0, 1)). On such inputs ReLU, LeakyReLU, ELU
and HardTanh are the identity, so a kernel that copies its input passes every check of the task. Before a
problem becomes a task, the probe (:mod:`kernelsmith.kernelbench.probe`) asks of each output whether one of
the :data:`PROGRAMS` passes it on the cases it drew; if one does, the task's inputs are widened
(docs/kernelbench.md, step 12 of "How a problem becomes a task").

The programs, the same list as the evaluator's own check when it prepares a task:

- ``copy``: the output is an input's elements in order (any input of the output's dtype and element count:
  a memcpy);
- ``negated``: the same, negated;
- ``zeros``: every element 0;
- ``constant``: every element one value, the mean of the expected output in the first case (the most common
  value for integer outputs), the same value in every case: what a program learns from one evaluation. Not
  on a task's own sizes (:class:`Verdicts`).

The cases form two groups, judged apart as the evaluator judges them: the check sizes together, and the
task's own (timing) sizes. A program that passes every case of either group makes the task unable to tell it
from a right kernel there.

Whether an answer passes is the evaluator's comparison rule (``compare_output`` in
lib/evaluate/host_tensors.cpp, docs/evaluation.md "Correctness" steps 4 and 5), written here with torch
because the probe runs in a helper process that imports nothing of kernelsmith. Only the standard library
and torch are used, so that the probe can load this file beside itself.
"""

from __future__ import annotations

import math
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

#: The trivial programs, in the order they are tried.
PROGRAMS = ("copy", "zeros", "constant", "negated")

#: Per-dtype default absolute tolerances of the evaluator (docs/task-format.md); rtol equals atol for each,
#: integers are compared exactly.
DEFAULT_ATOL = {"float32": 1e-4, "float16": 1e-2, "bfloat16": 1e-2, "float64": 1e-8}
#: kNearConstantSpread (lib/evaluate/host_tensors.hpp): the near-constant threshold of integer outputs, and
#: the most the candidate-side near-constant check asks of a float output.
NEAR_CONSTANT_SPREAD = 1e-3
#: kNearConstantFraction: a candidate output is near-constant when its spread is also below this fraction of
#: the expected output's.
NEAR_CONSTANT_FRACTION = 0.1
#: An output of more elements is judged on this many, evenly strided (the probe's rows_run is at the
#: problem's own sizes but for the batch: up to hundreds of MiB).
SAMPLE_ELEMENTS = 1 << 22
#: kRelativeL2Fraction: the relative L2 error an output may have, as a fraction of atol + rtol.
RELATIVE_L2_FRACTION = 0.5


def tolerance(dtype: str) -> Tuple[float, float]:
    """(atol, rtol) of an output of the task dtype `dtype` under the default tolerance."""
    atol = DEFAULT_ATOL.get(dtype, 0.0)
    return atol, atol


def distribution_text(distribution: Dict[str, Any]) -> str:
    """uniform(0, 1), normal(0, 1), constant(1), with the structure after a comma: for messages."""
    numbers = [distribution["a"]] + ([distribution["b"]] if distribution["kind"] != "constant" else [])
    text = f"{distribution['kind']}({', '.join(f'{float(n):g}' for n in numbers)})"
    structure = distribution.get("structure", "none")
    return text if structure == "none" else f"{text}, {structure}"


def _spread(n: int, sum_abs: float, deviation_squares: float) -> float:
    # Standard deviation over mean magnitude; 0 for fewer than two values or all zero (spread_of).
    if n < 2 or sum_abs == 0.0:
        return 0.0
    return math.sqrt(deviation_squares / (n - 1)) / (sum_abs / n)


def compare(expected, actual, atol: float, rtol: float) -> Optional[str]:
    """None when `actual` passes against `expected` under the evaluator's rule, else why not (one line).

    Elements where the expected value is NaN or infinite are skipped; a non-finite actual value elsewhere
    fails. An element passes when ``|actual - expected| <= atol * scale + rtol * |expected|``, `scale` the
    expected output's root mean square (1 when 0). A float output also fails when it is near-constant where
    the expected one varies, and when its relative L2 error exceeds half of atol + rtol."""
    import torch

    floating = expected.is_floating_point()
    e = expected.detach().reshape(-1).to(torch.float64).cpu()
    a = actual.detach().reshape(-1).to(torch.float64).cpu()
    if e.numel() != a.numel():
        return f"{a.numel()} elements where {e.numel()} are expected"
    finite_e = torch.isfinite(e)
    both = finite_e & torch.isfinite(a)
    non_finite = int((finite_e & ~both).sum())
    if non_finite:
        return f"{non_finite} elements are NaN or infinite where the reference is finite"
    e, a = e[finite_e], a[finite_e]
    n = e.numel()
    if n == 0:
        return None
    rms = float(e.square().mean().sqrt())
    scale = rms if rms > 0.0 else 1.0
    error = (a - e).abs()
    mismatches = int((error > atol * scale + rtol * e.abs()).sum())
    if floating:
        expected_spread = _spread(n, float(e.abs().sum()), float((e - e.mean()).square().sum()))
        actual_spread = _spread(n, float(a.abs().sum()), float((a - a.mean()).square().sum()))
        threshold = min(NEAR_CONSTANT_SPREAD, atol + rtol)
        if expected_spread >= threshold and actual_spread < min(threshold, NEAR_CONSTANT_FRACTION * expected_spread):
            return f"near-constant (relative spread {actual_spread:.3g}) where the expected output varies " \
                   f"(spread {expected_spread:.3g})"
    if mismatches:
        return f"{mismatches} of {n} elements differ beyond the tolerance (max abs error {float(error.max()):.3g})"
    if floating:
        reference_squares = float(e.square().sum())
        relative_l2 = math.sqrt(float(error.square().sum()) / reference_squares) if reference_squares > 0 else 0.0
        if reference_squares > 0 and relative_l2 > RELATIVE_L2_FRACTION * (atol + rtol):
            return f"relative L2 error {relative_l2:.3g} exceeds {RELATIVE_L2_FRACTION * (atol + rtol):.3g}"
    return None


class Case:
    """One input set and the expected outputs on it: `inputs` maps each task input's name to its values (a
    number becomes a 0-d tensor), `outputs` are the expected outputs in order, `where` says which case it is
    (for messages)."""

    def __init__(self, inputs: Dict[str, Any], outputs: Sequence[Any], where: str):
        import torch

        self.inputs = {}
        for name, value in inputs.items():
            if not isinstance(value, torch.Tensor):
                value = torch.tensor(value)
            if value.dtype == torch.bool:
                value = value.to(torch.uint8)  # the task's tensor is uint8
            self.inputs[name] = value
        self.outputs = list(outputs)
        self.where = where


def _sampled(values, count: int):
    """`values` flattened: every element when `count` (its number of elements) is at most SAMPLE_ELEMENTS,
    else the same evenly strided ones for every tensor of `count` elements. A program that fails only on
    elements outside the sample is taken to pass: the error is toward widening."""
    flat = values.reshape(-1)
    if count > SAMPLE_ELEMENTS:
        flat = flat[::count // SAMPLE_ELEMENTS][:SAMPLE_ELEMENTS]
    return flat


def _answers(case: Case, index: int, constant) -> Iterator[Tuple[str, Any, Any]]:
    """(description, answer, expected) for each trivial program's answer to output `index` of `case`, both
    flattened (sampled alike when large), one at a time."""
    import torch

    count = case.outputs[index].numel()
    expected = _sampled(case.outputs[index], count)
    for name, value in case.inputs.items():
        if value.numel() != count or value.dtype != expected.dtype:
            continue
        source = _sampled(value, count).to(expected.device)
        yield f"copy of {name}", source, expected
        yield f"{name} negated", -source, expected
    yield "zeros", torch.zeros_like(expected), expected
    if constant is not None:
        yield f"the constant {constant:.6g}", torch.full_like(expected, constant), expected


def _constant_of(expected) -> Optional[float]:
    import torch

    data = expected.detach().reshape(-1)
    if data.numel() == 0:
        return 0.0
    if data.is_floating_point():
        finite = data[torch.isfinite(data)].to(torch.float64)
        return float(finite.mean()) if finite.numel() else 0.0
    return float(torch.mode(data.to(torch.int64).cpu()).values)


class Verdicts:
    """Which trivial programs pass every case of one group added so far, per output: the cases are judged as
    they come (:meth:`add`), so that large ones need not be kept. The constant program's value is taken from
    the first case and kept for the others; without `constant` it is not tried (the evaluator does not try it
    on the timing sizes, where a single-value output, a mean of many draws, may stay near one value)."""

    def __init__(self, output_dtypes: Sequence[str], constant: bool = True):
        self.output_dtypes = list(output_dtypes)
        self.constant = constant
        self.cases = 0
        self.constants: List[float] = []
        self.passed: List[Dict[str, bool]] = [{} for _ in self.output_dtypes]
        self.answered: List[Dict[str, int]] = [{} for _ in self.output_dtypes]

    def add(self, case: Case) -> None:
        if not self.constants:
            self.constants = [_constant_of(expected) if self.constant else None for expected in case.outputs]
        self.cases += 1
        for index, dtype in enumerate(self.output_dtypes):
            atol, rtol = tolerance(dtype)
            passed, answered = self.passed[index], self.answered[index]
            for description, answer, expected in _answers(case, index, self.constants[index]):
                answered[description] = answered.get(description, 0) + 1
                if passed.get(description, True):
                    passed[description] = compare(expected, answer, atol, rtol) is None

    def passing(self) -> List[str]:
        """Each program that answered every case (an input of the output's size in each) and passed it, as
        "output N: <program>"; empty when none did, or when no case was added."""
        return [f"output {index}: {description}" for index, passed in enumerate(self.passed)
                for description, ok in passed.items() if ok and self.answered[index][description] == self.cases]


def passing_programs(cases: Sequence[Case], output_dtypes: Sequence[str], constant: bool = True) -> List[str]:
    """The trivial programs that pass every one of `cases` (Verdicts.passing); `output_dtypes` are the
    outputs' task dtypes (their tolerances)."""
    verdicts = Verdicts(output_dtypes, constant)
    for case in cases:
        verdicts.add(case)
    return verdicts.passing()
