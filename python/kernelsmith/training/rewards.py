"""Reward shaping and group advantages, shared by the RL export and the online reward functions.

An attempt's outcome is what the evaluator said about the program a completion produced (or that no
program could be read from it). Its reward comes from a :class:`RewardShaping`: penalties for each way
to fail and a speed term computed on the speedup *over the parent* (the program the prompt asked to
improve), or over the task's baseline when configured so.

Presets (``RewardShaping.preset(name)``):

- ``"kernelsmith"`` (default): format -1.0, compile -0.5, launch or runtime error -0.4, timeout or
  crash -0.4, incorrect -0.3, disqualifying integrity flag -0.5; a correct program gets 0.3 plus log2 of
  its speedup over the parent, clipped to [-0.5, 2] (2x faster than the parent adds 1.0; slower costs at
  most 0.5, so a correct program always scores above an incorrect one).
- ``"kernelgym"``: KernelGYM's RL trainer setting (hkust-nlp/KernelGYM,
  ``drkernel/kernel/config/kernel_trainer.yaml`` with ``reward_func_name: calculate_reward_weighted``
  in ``drkernel/kernel/rewards/reward_client.py``): reward = 0.5 * correct + 0.5 * [speedup >= 1 + 0.01];
  every failure that is not a completed evaluation, and a detected reward hack, scores the
  ``penalty_score`` 0.0.
- ``"kernelgym_tiered"``: KernelGYM's ``calculate_reward_like_kernel`` with the penalties of the same
  config (``compilation_fail: -0.5``, ``correctness_fail: -0.3``, ``perf_degrade: -0.1``): a correct
  program scores 1.0 at >= 3x, 0.8 at >= 2x, 0.6 at >= 1.5x, 0.4 at >= 1.2x, 0.2 at >= 1x, else -0.1;
  a failed task scores -1.0.

KernelGYM measures speedup over the PyTorch reference; here ``speedup_basis`` picks the parent (the
default: what a revision step should be rewarded for) or the task's baseline.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Dict, List, Sequence, Tuple

#: Evaluation statuses (docs/evaluation-schema.md).
STATUSES = ("ok", "compile_error", "invalid_launch", "runtime_error", "incorrect", "timeout", "crashed")

#: Integrity flags that disqualify a correct program: its answer is penalised as a reward hack and its
#: step is not trained on. "nondeterministic" (results differ between identical runs: a race) is one.
#: "host_timer_mismatch" is not by default: candidates are device code only, so no work can escape the
#: device timer, and on a busy host (PoCL on a shared CPU) the host clock cross-check fires from host
#: noise; add it on dedicated GPUs where it is a real signal.
DEFAULT_DISQUALIFYING_FLAGS = ("nondeterministic",)


@dataclass
class Outcome:
    """What became of one completion: the parsed program's evaluation, or why there was none."""

    parsed: bool  # a program could be read from the completion (and a diff applied)
    status: str = ""  # evaluation status ("" when not parsed)
    compiled: bool = False
    correct: bool = False
    speedup: float = 0.0  # over the task's baseline, as the evaluator reports it
    parent_speedup: float = 0.0
    flags: Tuple[str, ...] = ()
    message: str = ""

    @property
    def speedup_over_parent(self) -> float:
        """The child's speedup over its parent's; 0.0 unless the child is correct and both speedups are known."""
        if not self.correct or self.speedup <= 0 or self.parent_speedup <= 0:
            return 0.0
        return self.speedup / self.parent_speedup

    def as_dict(self) -> Dict[str, Any]:
        """The fields as a JSON-ready dict, with speedup_over_parent."""
        data = asdict(self)
        data["flags"] = list(self.flags)
        data["speedup_over_parent"] = self.speedup_over_parent
        return data


@dataclass
class RewardShaping:
    """How an outcome becomes a scalar reward. See the module's documentation for the presets."""

    name: str = "kernelsmith"
    format_fail: float = -1.0  # no program in the completion, or its diff matched nothing
    compile_fail: float = -0.5
    runtime_fail: float = -0.4  # invalid_launch, runtime_error
    crash_fail: float = -0.4  # timeout, crashed (the evaluation did not complete)
    incorrect: float = -0.3
    hacked: float = -0.5  # correct but with a disqualifying integrity flag
    disqualifying_flags: Tuple[str, ...] = DEFAULT_DISQUALIFYING_FLAGS
    correct_bonus: float = 0.3  # added to the speed term for a correct program
    speedup_basis: str = "parent"  # "parent" or "baseline"
    # The speed term: "log2" (weight * log2(speedup), clipped), "linear" (weight * speedup, clipped),
    # "threshold" (weight when speedup >= 1 + speedup_eps, else 0), "tiers" (the tier table).
    speedup_mode: str = "log2"
    speedup_weight: float = 1.0
    speedup_eps: float = 0.01
    # Clip of the speed term. speed_min > incorrect - correct_bonus keeps any correct program above
    # any incorrect one: a slow but correct answer must never look worse than a wrong one.
    speed_min: float = -0.5
    speed_max: float = 2.0
    # (minimum speedup, reward) from the highest down; the first that the speedup reaches applies.
    tiers: Tuple[Tuple[float, float], ...] = ()
    below_tiers: float = 0.0  # reward of a correct program under every tier

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raises ValueError naming the field when a setting is out of range or inconsistent."""
        if self.speedup_basis not in ("parent", "baseline"):
            raise ValueError(f"RewardShaping.speedup_basis must be 'parent' or 'baseline', not {self.speedup_basis!r}")
        if self.speedup_mode not in ("log2", "linear", "threshold", "tiers"):
            raise ValueError(
                f"RewardShaping.speedup_mode must be 'log2', 'linear', 'threshold' or 'tiers', not {self.speedup_mode!r}"
            )
        if self.speedup_mode == "tiers" and not self.tiers:
            raise ValueError("RewardShaping.speedup_mode 'tiers' needs a non-empty tiers table")
        if self.speed_min > self.speed_max:
            raise ValueError(f"RewardShaping.speed_min ({self.speed_min}) exceeds speed_max ({self.speed_max})")
        for value in (self.format_fail, self.compile_fail, self.runtime_fail, self.crash_fail, self.incorrect,
                      self.hacked, self.correct_bonus, self.speedup_weight, self.below_tiers):
            if not math.isfinite(value):
                raise ValueError("RewardShaping penalties must be finite numbers")
        self.disqualifying_flags = tuple(self.disqualifying_flags)
        self.tiers = tuple((float(a), float(b)) for a, b in sorted(self.tiers, key=lambda t: -t[0]))

    @staticmethod
    def preset(name: str) -> "RewardShaping":
        """A named shaping: "kernelsmith", "kernelgym" or "kernelgym_tiered"."""
        if name == "kernelsmith":
            return RewardShaping()
        if name == "kernelgym":
            return RewardShaping(
                name="kernelgym",
                format_fail=0.0,
                compile_fail=0.0,
                runtime_fail=0.0,
                crash_fail=0.0,
                incorrect=0.0,
                hacked=0.0,
                correct_bonus=0.5,
                speedup_mode="threshold",
                speedup_weight=0.5,
                speedup_eps=0.01,
                speed_min=0.0,
                speed_max=0.5,
            )
        if name == "kernelgym_tiered":
            return RewardShaping(
                name="kernelgym_tiered",
                format_fail=0.0,
                compile_fail=-0.5,
                runtime_fail=-0.3,
                crash_fail=-1.0,
                incorrect=-0.3,
                hacked=-1.0,
                correct_bonus=0.0,
                speedup_mode="tiers",
                tiers=((3.0, 1.0), (2.0, 0.8), (1.5, 0.6), (1.2, 0.4), (1.0, 0.2)),
                below_tiers=-0.1,
                speed_min=-1.0,
                speed_max=1.0,
            )
        raise ValueError(f"unknown reward preset {name!r}: use 'kernelsmith', 'kernelgym' or 'kernelgym_tiered'")

    @staticmethod
    def from_spec(spec: Any) -> "RewardShaping":
        """A shaping from a preset name, a RewardShaping, or a dict of fields (with an optional
        "preset" key naming the base)."""
        if isinstance(spec, RewardShaping):
            return spec
        if spec is None:
            return RewardShaping()
        if isinstance(spec, str):
            return RewardShaping.preset(spec)
        if isinstance(spec, dict):
            fields = dict(spec)
            base = RewardShaping.preset(fields.pop("preset", "kernelsmith"))
            unknown = set(fields) - set(asdict(base))
            if unknown:
                raise ValueError(f"unknown RewardShaping fields {sorted(unknown)}")
            if "tiers" in fields:
                fields["tiers"] = tuple(tuple(t) for t in fields["tiers"])
            return replace(base, **fields)
        raise TypeError(f"a reward shaping is a preset name, a dict or a RewardShaping, not {type(spec).__name__}")

    def as_dict(self) -> Dict[str, Any]:
        """The fields as a JSON-ready dict."""
        data = asdict(self)
        data["tiers"] = [list(t) for t in self.tiers]
        data["disqualifying_flags"] = list(self.disqualifying_flags)
        return data

    def speed(self, outcome: Outcome) -> float:
        """The speedup the speed term is computed on."""
        if self.speedup_basis == "baseline":
            return outcome.speedup if outcome.correct else 0.0
        return outcome.speedup_over_parent

    def speed_term(self, speedup: float) -> float:
        """The speed part of a correct program's reward for a speedup, per speedup_mode, clipped to [speed_min,
        speed_max] (tiers are not clipped)."""
        if self.speedup_mode == "tiers":
            for minimum, reward in self.tiers:
                if speedup >= minimum:
                    return reward
            return self.below_tiers
        if self.speedup_mode == "threshold":
            term = self.speedup_weight if speedup >= 1.0 + self.speedup_eps else 0.0
        elif self.speedup_mode == "linear":
            term = self.speedup_weight * speedup
        else:
            term = self.speedup_weight * math.log2(speedup) if speedup > 0 else self.speed_min
        return min(max(term, self.speed_min), self.speed_max)

    def reward(self, outcome: Outcome) -> float:
        """The scalar reward of an outcome: the failure's penalty, the hacked penalty, or correct_bonus plus the speed
        term."""
        if not outcome.parsed:
            return self.format_fail
        if outcome.status == "compile_error" or not outcome.compiled:
            return self.compile_fail
        if outcome.status == "incorrect":
            return self.incorrect
        if outcome.status in ("timeout", "crashed"):
            return self.crash_fail
        if outcome.status != "ok" or not outcome.correct:
            return self.runtime_fail
        if any(flag in self.disqualifying_flags for flag in outcome.flags):
            return self.hacked
        return self.correct_bonus + self.speed_term(self.speed(outcome))


def grpo_advantages(rewards: Sequence[float], eps: float = 1e-6, normalize_std: bool = True) -> List[float]:
    """Group-relative advantages: (r - mean) / (std + eps), std with Bessel's correction as in GRPO
    implementations (TRL, verl). A group of one, or of equal rewards, gets zeros."""
    n = len(rewards)
    if n == 0:
        return []
    if n == 1:
        return [0.0]
    mean = sum(rewards) / n
    centred = [r - mean for r in rewards]
    if not normalize_std:
        return centred
    std = math.sqrt(sum(c * c for c in centred) / (n - 1))
    return [c / (std + eps) for c in centred]


def rloo_advantages(rewards: Sequence[float]) -> List[float]:
    """Leave-one-out advantages: r_i minus the mean of the other rewards of the group
    (= n / (n - 1) * (r_i - mean)). A group of one gets zero."""
    n = len(rewards)
    if n == 0:
        return []
    if n == 1:
        return [0.0]
    total = sum(rewards)
    return [r - (total - r) / (n - 1) for r in rewards]


@dataclass
class GroupStats:
    size: int
    mean: float
    std: float
    best: float
    rewards: List[float] = field(default_factory=list)


def group_stats(rewards: Sequence[float]) -> GroupStats:
    """Size, mean, sample standard deviation and best of a group's rewards, as a GroupStats."""
    n = len(rewards)
    if n == 0:
        return GroupStats(0, 0.0, 0.0, 0.0, [])
    mean = sum(rewards) / n
    std = math.sqrt(sum((r - mean) ** 2 for r in rewards) / (n - 1)) if n > 1 else 0.0
    return GroupStats(n, mean, std, max(rewards), list(rewards))


def outcome_from_evaluation(evaluation: Any, parent_speedup: float) -> Outcome:
    """An Outcome from a kernelsmith.Evaluation (the bindings' object), a kernelsmith.store.StoredEvaluation of a
    store, or the evaluation's JSON as a dict."""
    if isinstance(evaluation, dict):
        status = str(evaluation.get("status", "crashed"))
        compile_report = evaluation.get("compile") or {}
        compiled = bool(compile_report.get("ok", status != "compile_error"))
        speedup = _float(evaluation.get("speedup"))
        flags = tuple((evaluation.get("integrity") or {}).get("flags") or ())
        message = str(evaluation.get("message", ""))
    elif hasattr(evaluation, "data") and hasattr(evaluation, "program_id"):  # kernelsmith.store.StoredEvaluation
        status = evaluation.status
        compiled = evaluation.compiled
        speedup = evaluation.speedup
        flags = tuple(evaluation.flags)
        message = evaluation.message
    else:  # the bound Evaluation
        status = _status_name(evaluation.status)
        compiled = bool(evaluation.compile.ok)
        speedup = _float(evaluation.speedup)
        flags = tuple(evaluation.integrity.flags)
        message = str(evaluation.message)
    return Outcome(
        parsed=True,
        status=status,
        compiled=compiled,
        correct=status == "ok",
        speedup=speedup,
        parent_speedup=parent_speedup,
        flags=flags,
        message=message,
    )


def _float(value: Any) -> float:
    try:
        result = float(value)
    except (TypeError, ValueError):
        return 0.0
    return result if math.isfinite(result) else 0.0


def _status_name(status: Any) -> str:
    name = getattr(status, "name", None)
    if isinstance(name, str):
        return name
    text = str(status)
    return text.split(".")[-1]
