"""Step-centric views of evolution trajectories: each mutation step joined with its parent and child.

A long evolution run is a tree of revisions. Training data is made per step: the prompt the mutator
sent (parent, feedback, inspirations), the answer, and what the answer's program achieved against its
parent. This module does the join once, for the SFT and RL exports alike.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from kernelsmith import _inputs
from kernelsmith.store import StoredEvaluation, StoredProgram, StoredRun, StoredStep


def edit_mode_of(mutation: str) -> str:
    """The LLM edit mode of a step's mutation name ("llm_diff" -> "diff"; "full" for others)."""
    if "crossover" in mutation:
        return "crossover"
    if "diff" in mutation:
        return "diff"
    return "full"


@dataclass
class StepView:
    """One mutation step joined with its parent(s) and child and their evaluations."""

    run: StoredRun
    step: StoredStep
    parent: Optional[StoredProgram]
    parent_evaluation: Optional[StoredEvaluation]
    child: Optional[StoredProgram]
    child_evaluation: Optional[StoredEvaluation]
    # Other parents (crossover), in the order the lineage lists them.
    co_parents: List[StoredProgram] = field(default_factory=list)

    @property
    def task(self) -> str:
        """Name of the run's task."""
        return self.run.task_name

    @property
    def parent_speedup(self) -> float:
        """The parent's speedup over the baseline; 0.0 unless it is correct."""
        e = self.parent_evaluation
        return e.speedup if e is not None and e.ok else 0.0

    @property
    def child_speedup(self) -> float:
        """The child's speedup over the baseline; 0.0 unless it is correct."""
        e = self.child_evaluation
        return e.speedup if e is not None and e.ok else 0.0

    @property
    def gain(self) -> Optional[float]:
        """Child speedup over parent speedup; None unless both are correct and timed."""
        if self.parent_speedup > 0 and self.child_speedup > 0:
            return self.child_speedup / self.parent_speedup
        return None

    @property
    def first_step(self) -> bool:
        """The parent is the run's reference or seed: this step translates or first tunes it."""
        return self.parent is not None and self.parent.is_initial

    @property
    def device(self) -> str:
        """The device the child (else the parent, else the run) was evaluated on."""
        for e in (self.child_evaluation, self.parent_evaluation):
            if e is not None and e.device:
                return e.device
        return self.run.device

    @property
    def backend(self) -> str:
        """The backend the child (else the parent, else the run) was evaluated on."""
        for e in (self.child_evaluation, self.parent_evaluation):
            if e is not None and e.backend:
                return e.backend
        return self.run.backend

    @property
    def edit_mode(self) -> str:
        """The step's LLM edit mode: 'full', 'diff' or 'crossover'."""
        return edit_mode_of(self.step.mutation)

    def parent_sources(self) -> List[str]:
        """The sources of the parent and of any crossover co-parents, in lineage order."""
        return [p.source for p in ([self.parent] if self.parent else []) + self.co_parents]


def step_views(run: StoredRun) -> List[StepView]:
    """Every mutation step of a run (the reference and seed entries left out), in order."""
    views = []
    for step in run.steps:
        if step.is_seed:
            continue
        parent = run.programs.get(step.parent_ids[0])
        co_parents = [run.programs[p] for p in step.parent_ids[1:] if p in run.programs]
        child = run.programs.get(step.child_id) if step.child_id else None
        views.append(
            StepView(
                run=run,
                step=step,
                parent=parent,
                parent_evaluation=run.evaluations.get(parent.id) if parent else None,
                child=child,
                child_evaluation=run.evaluations.get(child.id) if child else None,
                co_parents=co_parents,
            )
        )
    return views


@dataclass
class TaskDifficulty:
    """How hard the search found a task: the share of its mutation steps that gave a correct program
    faster than its parent."""

    task: str
    steps: int
    improvements: int
    best_speedup: float
    label: str

    @property
    def improvement_rate(self) -> float:
        """Improving steps over mutation steps (0..1); 0.0 for a task with no steps."""
        return self.improvements / self.steps if self.steps else 0.0


def task_difficulties(
    views: Iterable[StepView], edges: Tuple[float, float] = (0.25, 0.08)
) -> Dict[str, TaskDifficulty]:
    """Labels each task "easy" (improvement rate >= edges[0]), "medium" (>= edges[1]) or "hard"."""
    steps: Counter = Counter()
    improvements: Counter = Counter()
    best: Dict[str, float] = defaultdict(float)
    for view in views:
        steps[view.task] += 1
        gain = view.gain
        if gain is not None and gain > 1.0:
            improvements[view.task] += 1
        best[view.task] = max(best[view.task], view.child_speedup, view.parent_speedup)
    result = {}
    for task, count in steps.items():
        rate = improvements[task] / count if count else 0.0
        label = "easy" if rate >= edges[0] else "medium" if rate >= edges[1] else "hard"
        result[task] = TaskDifficulty(task, count, improvements[task], best[task], label)
    return result


def best_speedups(runs: Sequence[StoredRun]) -> Dict[str, float]:
    """The best correct speedup of each task over all the runs given."""
    best: Dict[str, float] = defaultdict(float)
    for run in runs:
        best[run.task_name] = max(best[run.task_name], run.best_speedup())
    return dict(best)


def task_json_of(run: StoredRun) -> str:
    """The run's task as stored (Task.to_json(): self-contained), normalised to compact JSON."""
    try:
        return json.dumps(_inputs.loads(run.task_json, f"run {run.id}: its task"), separators=(",", ":"))
    except (TypeError, ValueError):
        return run.task_json
