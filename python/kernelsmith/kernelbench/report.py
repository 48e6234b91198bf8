"""`kernelsmith kernelbench report`: per-problem results and KernelBench's metrics from run stores.

A problem is a task named ``kb_l<level>_<number>_<slug>`` (the importer's naming, docs/kernelbench.md); the
runs of other tasks are left out with a note. A problem's result is its best *confirmed* evaluation over every
run of it in the stores given (status ok, strict mode, no doubt-casting flag: kernelsmith.store.unconfirmed_reasons,
docs/evaluation.md#confirmed-evaluations): the one with the largest speedup over PyTorch eager. The metrics count
confirmed evaluations only; a faster correct evaluation that is not confirmed is shown apart, with why, and never
counts. Its speedups over each
baseline come from the evaluation's ``speedups`` (schema ``kernelsmith.evaluation/3`` and later: ``eager``,
``compile``, ``compile_max_autotune``). An evaluation without them (schema 1 or 2, or a task whose
baseline is a reference kernel) has only ``speedup``, the speedup over the task's reference kernel: it
stands in for the speedup over eager, the report says so for each such problem, and the speedups over
torch.compile are then unknown.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from kernelsmith import store as run_store
from kernelsmith.kernelbench.metrics import (
    BASELINE_LABELS,
    BASELINES,
    FAST_P,
    Metrics,
    ProblemResult,
    fast_p_name,
    summarize,
)

#: Schema of the JSON document `kernelsmith kernelbench report --json` prints.
REPORT_SCHEMA = "kernelsmith.kernelbench_report/3"

_PROBLEM_NAME = re.compile(r"^kb_l(\d+)_(\d+)_")

#: Evaluation `speedups` keys of the PyTorch baselines (contract: schema 3) -> ProblemResult attributes.
_SPEEDUP_KEYS = {"eager": "eager", "compile": "compile", "compile_max_autotune": "max_autotune"}

#: What a problem's "eager" speedup is over: PyTorch eager, or the task's reference kernel standing in for it.
EAGER = "eager"
REFERENCE = "reference"


def problem_id(task_name: str) -> Optional[Tuple[int, int]]:
    """(level, number) of a KernelBench problem's task name ('kb_l1_19_relu' -> (1, 19)); None for other tasks."""
    match = _PROBLEM_NAME.match(task_name)
    return (int(match.group(1)), int(match.group(2))) if match else None


def _positive(value) -> Optional[float]:
    """A speedup, or None when it is absent, 0 (the baseline failed or nothing was timed) or not finite."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) and number > 0 else None


def evaluation_speedups(evaluation: run_store.StoredEvaluation) -> Tuple[str, Dict[str, Optional[float]]]:
    """(what the eager speedup is over, speedup per baseline of metrics.BASELINES) of one evaluation.

    With PyTorch baselines in ``speedups`` the first is EAGER; otherwise REFERENCE: ``speedup`` is over the
    task's reference kernel and stands in for eager, the others are None."""
    speedups = evaluation.data.get("speedups")
    if isinstance(speedups, dict) and any(key in speedups for key in _SPEEDUP_KEYS):
        return EAGER, {attribute: _positive(speedups.get(key)) for key, attribute in _SPEEDUP_KEYS.items()}
    return REFERENCE, {"eager": _positive(evaluation.speedup), "compile": None, "max_autotune": None}


def _rank(entry: Tuple[str, Dict[str, Optional[float]], object]) -> Tuple[float, ...]:
    _, speedups, _ = entry
    return tuple(speedups[baseline] if speedups[baseline] is not None else -1.0 for baseline in BASELINES)


@dataclass
class RunSummary:
    """What the report says of one run of a problem."""

    store: str
    id: int
    backend: str
    device: str
    language: str
    status: str
    stop_reason: str
    error: str
    evaluations: int

    def as_dict(self) -> dict:
        return {"store": self.store, "id": self.id, "backend": self.backend, "device": self.device,
                "language": self.language, "status": self.status, "stop_reason": self.stop_reason,
                "error": self.error, "evaluations": self.evaluations}


@dataclass
class ProblemRow:
    """One problem of the report: its runs, its best correct evaluation and its result for the metrics."""

    name: str
    level: int
    number: int
    runs: List[RunSummary]
    evaluations: int
    correct_evaluations: int
    #: EAGER, REFERENCE (the reference kernel's speedup stands in for eager), or "" without a confirmed kernel.
    baseline: str
    #: The best confirmed evaluation's speedups: what the metrics count (correct: a confirmed kernel exists).
    result: ProblemResult
    #: The best confirmed evaluation's store, run, program, status, flags and message; None without one.
    best: Optional[dict]
    #: "ok" with the best's flags, or why no kernel is confirmed.
    status: str
    #: Correct evaluations that are confirmed (the others never count).
    confirmed_evaluations: int = 0
    #: The fastest correct evaluation that is not confirmed and beats the confirmed best (store, run, program_id,
    #: evaluation, speedups, mode, flags, reasons: why it is not confirmed); None when there is none. Never counted.
    unconfirmed: Optional[dict] = None

    def as_dict(self) -> dict:
        return {
            "name": self.name,
            "level": self.level,
            "number": self.number,
            "runs": [run.as_dict() for run in self.runs],
            "evaluations": self.evaluations,
            "correct_evaluations": self.correct_evaluations,
            "confirmed_evaluations": self.confirmed_evaluations,
            "correct": self.result.correct,
            "speedup_baseline": self.baseline or None,
            "speedups": {baseline: self.result.speedup(baseline) for baseline in BASELINES},
            "best": self.best,
            "status": self.status,
            "unconfirmed": self.unconfirmed,
        }


def _why_none_confirmed(runs: Sequence[run_store.RunEvaluations]) -> str:
    evaluations = [e for run in runs for e in run.evaluations]
    correct = [e for e in evaluations if e.ok]
    if correct:  # correct kernels, none confirmed: say why, reason by reason
        reasons = Counter(reason for e in correct for reason in e.unconfirmed_reasons)
        return (f"no confirmed kernel: {len(correct)} correct, none confirmed ("
                + ", ".join(f"{reason} x{count}" for reason, count in reasons.most_common()) + ")")
    failed_runs = [run for run in runs if run.status == "failed" and run.error]
    if not evaluations and failed_runs:
        return f"no evaluation stored: run {failed_runs[-1].id} failed: {failed_runs[-1].error}"
    if not evaluations:
        states = ", ".join(f"run {run.id} {run.status}" + (f" ({run.stop_reason})" if run.stop_reason else "")
                           for run in runs)
        text = f"no evaluation stored ({states})"
    else:
        counts = Counter(e.status for e in evaluations)
        text = "no correct kernel: " + ", ".join(f"{status} x{count}" for status, count in counts.most_common())
        latest = evaluations[-1]
        if latest.message:
            text += f"; latest: {latest.message}"
    if failed_runs:
        text += f"; run {failed_runs[-1].id} failed: {failed_runs[-1].error}"
    return text


def problem_row(name: str, runs: Sequence[run_store.RunEvaluations]) -> ProblemRow:
    """The row of one problem from every run of it (runs of one task name, from one or several stores)."""
    identity = problem_id(name)
    if identity is None:
        raise ValueError(f"task {name} is not a KernelBench problem (its name does not start with kb_l<level>_)")
    level, number = identity
    # The task's reference kernel (a task checked against one) is the baseline, not a solution of the problem.
    runs = [replace(run, evaluations=[e for e in run.evaluations if run.origins.get(e.program_id) != "reference"])
            for run in runs]
    correct = [(run, e) for run in runs for e in run.evaluations if e.ok]
    entries = [(*evaluation_speedups(e), (run, e)) for run, e in correct]
    # Speedups over eager and over a reference kernel are not comparable: when any correct evaluation has
    # PyTorch baselines, only those compete.
    if any(kind == EAGER for kind, _, _ in entries):
        entries = [entry for entry in entries if entry[0] == EAGER]
    # Only a confirmed evaluation counts; the fastest of the others is shown apart when it beats the best.
    confirmed = [entry for entry in entries if entry[2][1].confirmed]
    doubted = [entry for entry in entries if not entry[2][1].confirmed]
    best = max(confirmed, key=_rank) if confirmed else None  # the first of equals: the earliest
    fastest_doubted = max(doubted, key=_rank) if doubted else None
    unconfirmed = None
    if fastest_doubted is not None and (best is None or _rank(fastest_doubted) > _rank(best)):
        unconfirmed = _unconfirmed_entry(fastest_doubted)
    summaries = [RunSummary(run.store, run.id, run.backend, run.device, run.language, run.status, run.stop_reason,
                            run.error, len(run.evaluations)) for run in runs]
    confirmed_count = sum(1 for _, e in correct if e.confirmed)
    if best is None:
        return ProblemRow(name, level, number, summaries, sum(s.evaluations for s in summaries), len(correct), "",
                          ProblemResult(name, level, attempted=True, correct=False), None, _why_none_confirmed(runs),
                          confirmed_count, unconfirmed)
    kind, speedups, (run, evaluation) = best
    flags = evaluation.flags
    status = "ok" + (f" [{', '.join(flags)}]" if flags else "")
    return ProblemRow(
        name, level, number, summaries, sum(s.evaluations for s in summaries), len(correct), kind,
        ProblemResult(name, level, attempted=True, correct=True, **speedups),
        {"store": run.store, "run": run.id, "program_id": evaluation.program_id, "evaluation": evaluation.sequence + 1,
         "status": evaluation.status, "mode": evaluation.mode, "flags": list(flags), "message": evaluation.message,
         "median_ms": evaluation.median_ms, "baseline_errors": dict(evaluation.data.get("baseline_errors") or {})},
        status, confirmed_count, unconfirmed,
    )


def _unconfirmed_entry(entry: Tuple[str, Dict[str, Optional[float]], tuple]) -> dict:
    """What the report shows of a correct evaluation that is not confirmed: where it is, its speedups, and why."""
    kind, speedups, (run, evaluation) = entry
    return {"store": run.store, "run": run.id, "program_id": evaluation.program_id,
            "evaluation": evaluation.sequence + 1, "speedup_baseline": kind, "speedups": dict(speedups),
            "mode": evaluation.mode, "flags": evaluation.flags, "reasons": evaluation.unconfirmed_reasons,
            "message": evaluation.message}


@dataclass
class Report:
    """The per-problem rows, the metrics (over all problems, and per level when there are several), notes."""

    stores: List[str]
    level: Optional[int]
    problems: List[ProblemRow]
    metrics: Dict[str, Metrics]  # "all", then "level <n>" for each level when there are several
    ignored: Dict[str, int] = field(default_factory=dict)  # task name -> runs left out (not a problem)
    skipped: List[Tuple[str, str]] = field(default_factory=list)  # (problem, reason): the runner's
    notes: List[str] = field(default_factory=list)
    #: The baselines of metrics.BASELINES these runs timed (or tried to): a baseline no run asked for has no
    #: column, since counting every kernel as not faster than it would print fast_0 = 0%.
    baselines: Tuple[str, ...] = BASELINES

    def as_dict(self) -> dict:
        return {
            "schema": REPORT_SCHEMA,
            "stores": self.stores,
            "level": self.level,
            "problems": [problem.as_dict() for problem in self.problems],
            "baselines_timed": list(self.baselines),
            "metrics": {name: _timed_only(metrics.as_dict(), self.baselines) for name, metrics in self.metrics.items()},
            "fast_p_thresholds": list(FAST_P),
            "ignored_tasks": [{"task": task, "runs": runs} for task, runs in self.ignored.items()],
            "skipped": [{"problem": problem, "reason": reason} for problem, reason in self.skipped],
            "notes": self.notes,
        }


def _timed_only(metrics: dict, timed: Sequence[str]) -> dict:
    """`metrics` (Metrics.as_dict) with null for the baselines not timed."""
    metrics["baselines"] = {name: (value if name in timed else None) for name, value in metrics["baselines"].items()}
    return metrics


def _timed_baselines(problems: Sequence[ProblemRow]) -> Tuple[str, ...]:
    """Eager, and each other baseline that some problem's best kernel has a speedup over or a timing error for."""
    keys = {baseline: key for key, baseline in _SPEEDUP_KEYS.items()}
    return tuple(b for b in BASELINES if b == EAGER or any(
        p.result.speedup(b) is not None or (p.best and keys[b] in p.best["baseline_errors"]) for p in problems))


def build_report(paths: Sequence[str], level: Optional[int] = None, only: Optional[Iterable[str]] = None,
                 skipped: Sequence[Tuple[str, str]] = (), missing_ok: bool = False) -> Report:
    """The report over the runs of the stores at `paths`: every KernelBench problem in them, or those of one
    level, or only the named ones (the runner's selection); `skipped` lists problems the runner left out and why.

    Raises StoreError for a missing (unless missing_ok: then it holds no run) or unreadable store."""
    stores = run_store.distinct_store_paths(paths)
    wanted = set(only) if only is not None else None
    by_task: Dict[str, List[run_store.RunEvaluations]] = {}
    ignored: Dict[str, int] = {}
    for path in stores:
        if missing_ok and not os.path.exists(path):
            continue
        for run in run_store.read_run_evaluations(path):
            identity = problem_id(run.task_name)
            if identity is None:
                ignored[run.task_name] = ignored.get(run.task_name, 0) + 1
                continue
            if (level is not None and identity[0] != level) or (wanted is not None and run.task_name not in wanted):
                continue
            by_task.setdefault(run.task_name, []).append(run)
    problems = sorted((problem_row(name, runs) for name, runs in by_task.items()), key=lambda p: (p.level, p.number))
    metrics = {"all": summarize([p.result for p in problems])}
    levels = sorted({p.level for p in problems})
    if len(levels) > 1:
        for each in levels:
            metrics[f"level {each}"] = summarize([p.result for p in problems if p.level == each])
    timed = _timed_baselines(problems) if problems else BASELINES
    return Report(list(stores), level, problems, metrics, dict(sorted(ignored.items())), list(skipped),
                  _notes(problems, ignored, level, timed), timed)


def _notes(problems: Sequence[ProblemRow], ignored: Dict[str, int], level: Optional[int],
           timed: Sequence[str]) -> List[str]:
    notes = []
    untimed = [BASELINE_LABELS[b] for b in BASELINES if b not in timed]
    if untimed:
        notes.append(f"not timed in these runs, so left out: {', '.join(untimed)} (choose the baselines with "
                     f"`kernelsmith kernelbench run --baselines`)")
    stand_ins = [p.name for p in problems if p.baseline == REFERENCE]
    if stand_ins:
        notes.append(
            f"{len(stand_ins)} problem(s) have no PyTorch baselines in their evaluations (evaluation schema 1 or 2, "
            f"or a task checked against a reference kernel): their speedup over the task's reference kernel is "
            f"counted as the speedup over eager, and their speedups over torch.compile are unknown: "
            f"{', '.join(stand_ins)}")
    for key, baseline in _SPEEDUP_KEYS.items():
        if baseline not in timed:
            continue
        missing = []
        for p in problems:
            if p.baseline == EAGER and p.result.speedup(baseline) is None:
                why = p.best["baseline_errors"].get(key)
                missing.append(f"{p.name} ({why})" if why else p.name)
        if missing:
            notes.append(f"the {BASELINE_LABELS[baseline]} baseline is unknown (failed or not timed) for "
                         f"{', '.join(missing)}: counted as not faster in fast_p over it")
    mixed = [p.name for p in problems if len({(run.backend, run.device) for run in p.runs}) > 1]
    if mixed:
        notes.append(f"the runs of {', '.join(mixed)} are on several backends or devices (see runs in --json): the "
                     f"best over all of them is reported")
    doubted = [p for p in problems if p.unconfirmed is not None]
    if doubted:
        notes.append(f"{len(doubted)} problem(s) have a correct kernel faster than their best confirmed one that is "
                     f"not confirmed (the 'not confirmed' column: why): it is left out of every figure above "
                     f"(docs/evaluation.md#confirmed-evaluations): {', '.join(p.name for p in doubted)}")
    flagged = [p.name for p in problems if p.best and p.best["flags"]]
    if flagged:
        notes.append(f"the best kernel of {', '.join(flagged)} carries integrity flags (see status; "
                     f"docs/evaluation.md#integrity)")
    if ignored:
        runs = sum(ignored.values())
        notes.append(f"{runs} run(s) of {len(ignored)} task(s) not named kb_l<level>_<number>_... left out: "
                     f"{', '.join(ignored)}")
    if not problems:
        notes.append("no KernelBench problem" + (f" of level {level}" if level is not None else "") +
                     " in the store(s): run `kernelsmith kernelbench run` first")
    return notes


# ---- text

#: The per-problem table's column of each baseline but eager.
_COLUMN_NAMES = {"compile": "over compile", "max_autotune": "over max-autotune"}

#: The table cuts a longer status (a failure message) to this many characters; --json has it whole.
_STATUS_WIDTH = 100


def _percent(value: Optional[float]) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _speedup(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.3f}x"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool]) -> List[str]:
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    lines = []
    for row in [header, *rows]:
        cells = [str(cell).rjust(width) if align else str(cell).ljust(width)
                 for cell, width, align in zip(row, widths, right)]
        lines.append("  ".join(cells).rstrip())
    return lines


def _metrics_lines(name: str, metrics: Metrics, timed: Sequence[str], subject: str = "problem(s)",
                   counted: Optional[str] = "confirmed evaluations only", correct: str = "with a confirmed kernel",
                   with_amsr: bool = True) -> List[str]:
    """The metrics table; the judge (judge.py) names its own subject ("file(s)") and what counts as correct."""
    if not metrics.attempted:
        return [f"metrics ({name}): no {subject.removesuffix('(s)')} attempted"]
    scope = f"{name}, {counted}" if counted else name
    lines = [f"metrics ({scope}): {metrics.attempted} {subject} attempted, {metrics.correct} {correct}"]
    header = ["", *(BASELINE_LABELS[b] for b in timed)]
    rows = [[fast_p_name(p), *(_percent(metrics.baselines[b].fast_p[p]) for b in timed)] for p in FAST_P]
    rows.append(["geomean speedup", *(
        _speedup(metrics.baselines[b].geomean) + (f" (n={metrics.baselines[b].geomean_n})"
                                                  if metrics.baselines[b].geomean is not None else "")
        for b in timed)])
    lines += ["  " + line for line in _table(header, rows, [False, *(True for _ in timed)])]
    lines.append(f"  correctness rate: {_percent(metrics.correctness_rate)}")
    if not with_amsr:
        return lines
    lines.append(f"  amsr (mean best confirmed speedup over eager, 0 without a confirmed kernel): "
                 + ("-" if metrics.amsr is None else f"{metrics.amsr:.3f}"))
    return lines


def _unconfirmed_cell(entry: Optional[dict]) -> str:
    """'92.300x over eager [screen mode, speedup_unconfirmed]', or '-'."""
    if entry is None:
        return "-"
    over = "eager" if entry["speedup_baseline"] == EAGER else "ref"
    return f"{_speedup(entry['speedups']['eager'])} over {over} [{', '.join(entry['reasons'])}]"


def format_report(report: Report) -> str:
    """The report as text: the per-problem table, the metrics tables, skipped problems and notes."""
    scope = f"level {report.level}" if report.level is not None else "all levels"
    lines = [f"KernelBench report ({scope}) from {', '.join(report.stores)}: {len(report.problems)} problem(s)"]
    if report.problems:
        others = [b for b in report.baselines if b != EAGER]
        header = ["problem", "runs", "evals", "correct", "confirmed", "over eager",
                  *(_COLUMN_NAMES[b] for b in others), "status", "not confirmed (not counted)"]
        rows = []
        for p in report.problems:
            eager = _speedup(p.result.eager) + (" (ref)" if p.baseline == REFERENCE else "")
            status = p.status if len(p.status) <= _STATUS_WIDTH else p.status[:_STATUS_WIDTH - 3] + "..."
            rows.append([p.name, str(len(p.runs)), str(p.evaluations), str(p.correct_evaluations),
                         str(p.confirmed_evaluations), eager, *(_speedup(p.result.speedup(b)) for b in others),
                         status, _unconfirmed_cell(p.unconfirmed)])
        lines += _table(header, rows, [False, True, True, True, True, True, *(True for _ in others), False, False])
        if any(p.baseline == REFERENCE for p in report.problems):
            lines.append("(ref): the speedup over the task's reference kernel, standing in for eager (see notes)")
    for name, metrics in report.metrics.items():
        lines.append("")
        lines += _metrics_lines(name, metrics, report.baselines)
    if report.skipped:
        lines.append("")
        lines.append(f"skipped (not attempted, not in the metrics): {len(report.skipped)}")
        lines += [f"  {problem}: {reason}" for problem, reason in report.skipped]
    if report.notes:
        lines.append("")
        lines.append("notes:")
        lines += [f"  - {note}" for note in report.notes]
    return "\n".join(lines)


def format_json(report: Report) -> str:
    return json.dumps(report.as_dict(), indent=2)
