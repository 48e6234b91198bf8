"""KernelBench's metrics over per-problem results: pure functions, no store, no device.

A :class:`ProblemResult` is what one KernelBench problem came to in a run (or in several runs): whether it
was attempted, whether any of its kernels was correct, and the best correct kernel's speedup over each
PyTorch baseline. :func:`summarize` turns a list of them into :class:`Metrics`:

- ``fast_p`` (KernelBench, Ouyang et al. 2025): the fraction of *all attempted* problems whose kernel is
  correct **and** faster than the baseline by more than ``p`` (a speedup exactly ``p`` does not count).
  ``fast_0`` is the correctness rate. Computed for p in :data:`FAST_P` against eager PyTorch and against
  ``torch.compile`` (mode default) and ``max-autotune``.
- the geometric-mean speedup over each baseline, over the problems with a correct kernel whose speedup
  over that baseline is known (``n`` says how many).
- the correctness rate: problems with at least one correct kernel over problems attempted.
- ``amsr``, the average max speedup ratio: the mean over attempted problems of the best speedup over
  eager, a problem without a correct kernel counting 0. Kernel-Smith names this metric without a formula
  that settles the corner cases; the definition here is ours: a correct problem whose speedup over eager
  is unknown (its eager baseline failed) also counts 0, and the denominator is every attempted problem.

A speedup that is missing (None: the baseline was not timed or failed) never counts as fast: the problem
stays in the denominator, and :class:`BaselineMetrics` ``missing`` counts the correct problems concerned.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

#: The thresholds of fast_p that KernelBench reports.
FAST_P: Tuple[float, ...] = (0.0, 1.0, 1.2, 2.0)

#: The baselines a problem's speedups are measured against, as ProblemResult attribute names, in report order.
BASELINES: Tuple[str, ...] = ("eager", "compile", "max_autotune")

#: How reports name each baseline.
BASELINE_LABELS: Dict[str, str] = {
    "eager": "PyTorch eager",
    "compile": "torch.compile",
    "max_autotune": "torch.compile max-autotune",
}


@dataclass(frozen=True)
class ProblemResult:
    """One problem's outcome: the best correct kernel's speedup over each baseline (None when unknown)."""

    name: str
    level: Optional[int] = None
    attempted: bool = True
    #: At least one kernel of the problem passed the evaluator's checks.
    correct: bool = False
    eager: Optional[float] = None
    compile: Optional[float] = None
    max_autotune: Optional[float] = None

    def __post_init__(self) -> None:
        for baseline in BASELINES:
            value = getattr(self, baseline)
            if value is None:
                continue
            if not self.correct:
                raise ValueError(f"problem {self.name}: a speedup over {baseline} ({value}) was given, but the problem "
                                 f"has no correct kernel (correct=False); give None")
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise ValueError(f"problem {self.name}: the speedup over {baseline} is {value!r}; a speedup is a "
                                 f"finite number > 0, or None when the baseline was not timed")
        if self.correct and not self.attempted:
            raise ValueError(f"problem {self.name}: correct=True but attempted=False")

    def speedup(self, baseline: str) -> Optional[float]:
        """The best correct kernel's speedup over `baseline` (one of BASELINES), None when unknown."""
        if baseline not in BASELINES:
            raise ValueError(f"unknown baseline {baseline!r}; the baselines are {', '.join(BASELINES)}")
        return getattr(self, baseline)


@dataclass
class BaselineMetrics:
    """The metrics against one baseline."""

    baseline: str
    #: fast_p by p (FAST_P), a fraction of the attempted problems; None when no problem was attempted.
    fast_p: Dict[float, Optional[float]] = field(default_factory=dict)
    #: Geometric mean of the speedups of the problems with a correct kernel and a known speedup; None when none.
    geomean: Optional[float] = None
    #: How many problems the geometric mean is over.
    geomean_n: int = 0
    #: Problems with a correct kernel whose speedup over this baseline is unknown (counted as not fast).
    missing: int = 0

    def as_dict(self) -> dict:
        return {
            "baseline": self.baseline,
            "fast_p": {fast_p_name(p): value for p, value in self.fast_p.items()},
            "geomean_speedup": self.geomean,
            "geomean_problems": self.geomean_n,
            "correct_without_speedup": self.missing,
        }


@dataclass
class Metrics:
    """KernelBench's metrics over a set of problems."""

    attempted: int
    correct: int
    #: correct / attempted; None when nothing was attempted.
    correctness_rate: Optional[float]
    #: Average max speedup ratio over eager (see the module's documentation); None when nothing was attempted.
    amsr: Optional[float]
    baselines: Dict[str, BaselineMetrics]

    def as_dict(self) -> dict:
        return {
            "attempted": self.attempted,
            "correct": self.correct,
            "correctness_rate": self.correctness_rate,
            "amsr": self.amsr,
            "baselines": {name: metrics.as_dict() for name, metrics in self.baselines.items()},
        }


def fast_p_name(p: float) -> str:
    """'fast_0', 'fast_1', 'fast_1.2', 'fast_2': KernelBench's names."""
    return f"fast_{p:g}"


def _attempted(problems: Iterable[ProblemResult]) -> List[ProblemResult]:
    return [problem for problem in problems if problem.attempted]


def fast_p(problems: Sequence[ProblemResult], p: float, baseline: str = "eager") -> Optional[float]:
    """The fraction of attempted problems that are correct with a speedup over `baseline` strictly above `p`;
    None when no problem was attempted."""
    attempted = _attempted(problems)
    if not attempted:
        return None
    fast = 0
    for problem in attempted:
        speedup = problem.speedup(baseline)
        if problem.correct and speedup is not None and speedup > p:
            fast += 1
    return fast / len(attempted)


def geometric_mean_speedup(problems: Sequence[ProblemResult], baseline: str = "eager") -> Tuple[Optional[float], int]:
    """(geometric mean, n) of the speedups over `baseline` of the attempted problems with a correct kernel and
    a known speedup; (None, 0) when there is none."""
    speedups = [problem.speedup(baseline) for problem in _attempted(problems) if problem.correct]
    known = [speedup for speedup in speedups if speedup is not None]
    if not known:
        return None, 0
    return math.exp(sum(math.log(speedup) for speedup in known) / len(known)), len(known)


def correctness_rate(problems: Sequence[ProblemResult]) -> Optional[float]:
    """Problems with a correct kernel over problems attempted; None when none was attempted."""
    attempted = _attempted(problems)
    if not attempted:
        return None
    return sum(1 for problem in attempted if problem.correct) / len(attempted)


def amsr(problems: Sequence[ProblemResult]) -> Optional[float]:
    """Average max speedup ratio: the mean over attempted problems of the best speedup over eager, 0 for a
    problem without a correct kernel or without a known speedup over eager; None when none was attempted."""
    attempted = _attempted(problems)
    if not attempted:
        return None
    return sum(problem.eager or 0.0 for problem in attempted) / len(attempted)


def summarize(problems: Sequence[ProblemResult]) -> Metrics:
    """Every metric over the problems (the attempted ones count; the others are ignored)."""
    attempted = _attempted(problems)
    names = [problem.name for problem in attempted]
    duplicated = sorted({name for name in names if names.count(name) > 1})
    if duplicated:
        raise ValueError(f"problems named more than once: {', '.join(duplicated)}; give one result per problem")
    baselines = {}
    for baseline in BASELINES:
        geomean, n = geometric_mean_speedup(attempted, baseline)
        baselines[baseline] = BaselineMetrics(
            baseline=baseline,
            fast_p={p: fast_p(attempted, p, baseline) for p in FAST_P},
            geomean=geomean,
            geomean_n=n,
            missing=sum(1 for problem in attempted if problem.correct and problem.speedup(baseline) is None),
        )
    return Metrics(
        attempted=len(attempted),
        correct=sum(1 for problem in attempted if problem.correct),
        correctness_rate=correctness_rate(attempted),
        amsr=amsr(attempted),
        baselines=baselines,
    )
