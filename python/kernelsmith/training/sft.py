"""SFT records from evolution trajectories: one record per kept step.

A step is kept when its child is correct and either its parent is the run's reference or seed (the
first step: translating or first tuning the reference) or the child beats its parent by more than a
threshold. Then duplicates and steps whose answer mostly copies an inspiration of its prompt are
dropped, and the rest is balanced across tasks and difficulty. Every step considered ends up either
kept or counted under exactly one drop reason.

Why these rules (Kernel-Smith): training on every step teaches the model to copy the better programs
that later prompts show; training on first steps only teaches translation, not optimisation. The
correctness-preserving, high-gain revisions are what teaches optimisation.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from kernelsmith import _core as core
from kernelsmith.training.leakage import leakage
from kernelsmith.training.report import ExportReport, write_jsonl
from kernelsmith.training.rewards import DEFAULT_DISQUALIFYING_FLAGS
from kernelsmith.store import StoredRun, load_runs
from kernelsmith.training.trajectory import StepView, step_views, task_difficulties

#: Drop reasons of the SFT export, in the order the filters apply, with what each means.
SFT_DROP_REASON_TEXT = {
    "no_prompt": "the step has no recorded prompt (a non-LLM mutator such as the parameter mutator)",
    "malformed_prompt": "steps.prompt is not a JSON array of chat messages",
    "no_child": "the answer gave no program (unparseable, diff matched nothing, duplicate, ...)",
    "pending": "the child is not evaluated yet (the run is still going, or stopped before it)",
    "not_evaluated": "the child was never evaluated (the step records why)",
    "child_incorrect": "the child failed to compile, launch, run or match the reference",
    "integrity_flag": "the child's timing carries a disqualifying integrity flag",
    "not_modelnew": "style=\"kernelbench\" keeps ModelNew answers to KernelBench problems only (a device-code "
                    "child, or a task without a PyTorch problem)",
    "parent_unknown": "the parent or its evaluation is missing from the store",
    "parent_incorrect": "a repair step (the parent was not correct); see keep_repairs",
    "first_step": "first steps are excluded (first_steps=\"drop\")",
    "below_threshold": "the child does not beat its parent by more than the threshold",
    "leakage": "the answer mostly copies a program its prompt showed for inspiration",
    "duplicate_pair": "the same prompt and response were kept already",
    "duplicate_child": "the same child program (normalised) was kept already, from a better step",
    "task_cap": "over max_per_task for its task",
    "difficulty_cap": "over max_per_difficulty for its difficulty",
}

#: Drop reasons of the SFT export, in the order the filters apply.
SFT_DROP_REASONS = tuple(SFT_DROP_REASON_TEXT)


@dataclass
class SftDecision:
    """What the SFT export did with one step: kept (reason None) or dropped for one of SFT_DROP_REASONS."""

    store: str
    run: int
    step: int
    reason: Optional[str]
    #: Child speedup over parent speedup; None unless both are correct.
    gain: Optional[float] = None
    #: The leakage guard's score, when the step reached the guard.
    leakage: Optional[float] = None
    #: The parent is the run's reference or seed (a first step: kept when correct, by default).
    first_step: bool = False
    #: The parent was not correct (a repair step: kept only with keep_repairs).
    repair: bool = False

    @property
    def kept(self) -> bool:
        """True when the step became a record."""
        return self.reason is None


@dataclass
class SftOptions:
    """Filters and layout of the SFT export."""

    #: Keep a step when child speedup / parent speedup > threshold (1.0: any measured gain).
    threshold: float = 1.0
    #: Steps whose parent is the reference or seed: "keep" (when correct, whatever the gain),
    #: "require_gain" (filter them like any other step) or "drop".
    first_steps: str = "keep"
    #: Keep steps that turned an incorrect parent into a correct child (they have no gain to measure).
    keep_repairs: bool = False
    #: Drop a second copy of the same prompt+response, and of the same child program.
    dedup: bool = True
    #: Leakage guard: drop a step when more than this share of the n-grams its child added to the
    #: parent comes from one other code block of its prompt. None disables the guard.
    leakage_threshold: Optional[float] = 0.6
    leakage_ngram: int = 8
    #: Children that add fewer new n-grams than this are never called copies.
    leakage_min_novel: int = 4
    #: Balancing: at most this many records per task / per difficulty label (the highest gains stay).
    max_per_task: Optional[int] = None
    max_per_difficulty: Optional[int] = None
    #: Task difficulty from its improvement rate: "easy" at or above edges[0], "medium" at or above
    #: edges[1], else "hard".
    difficulty_edges: Tuple[float, float] = (0.25, 0.08)
    disqualifying_flags: Tuple[str, ...] = DEFAULT_DISQUALIFYING_FLAGS
    #: "messages" ({"messages": [...]}, TRL/OpenAI chat SFT), "prompt_completion" (conversational
    #: {"prompt": [...], "completion": [assistant message]}), or "kernelbench": the format the field trains
    #: ModelNew writers on, {"prompt": "<KernelBench-style prompt around the problem's source>",
    #: "completion": "```python\n<the ModelNew file>\n```"}, for ModelNew children only.
    style: str = "messages"

    def validate(self) -> None:
        """Raises ValueError naming the setting that is out of range."""
        if not self.threshold > 0:
            raise ValueError(f"threshold must be a positive ratio (1.0 = any gain), got {self.threshold}")
        if self.first_steps not in ("keep", "require_gain", "drop"):
            raise ValueError(f"first_steps must be 'keep', 'require_gain' or 'drop', not {self.first_steps!r}")
        if self.leakage_threshold is not None and not 0.0 <= self.leakage_threshold <= 1.0:
            raise ValueError(f"leakage_threshold must be in [0, 1] or None, got {self.leakage_threshold}")
        if self.leakage_ngram < 1:
            raise ValueError(f"leakage_ngram must be at least 1, got {self.leakage_ngram}")
        for name in ("max_per_task", "max_per_difficulty"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ValueError(f"{name} must be >= 0 or None, got {value}")
        if self.style not in ("messages", "prompt_completion", "kernelbench"):
            raise ValueError(f"style must be 'messages', 'prompt_completion' or 'kernelbench', not {self.style!r}")


@dataclass
class _Candidate:
    view: StepView
    messages: List[Dict[str, str]]
    leakage_score: float = 0.0
    leakage_containment: float = 0.0
    novel_ngrams: int = 0

    @property
    def sort_gain(self) -> float:
        gain = self.view.gain
        return gain if gain is not None else 0.0


@dataclass
class SftExport:
    """What an SFT export produced: the records and the ExportReport."""

    records: List[Dict[str, Any]] = field(default_factory=list)
    report: ExportReport = field(default_factory=lambda: ExportReport("sft"))
    #: One decision per step considered, in the order of the runs and their steps.
    decisions: List[SftDecision] = field(default_factory=list)


def problem_source(view: StepView) -> Optional[str]:
    """The source of the PyTorch problem the run's task is checked against, or None (a task with a reference
    kernel)."""
    try:
        oracle = core.Task.from_json(view.run.task_json).oracle
    except Exception:  # a stored task this build cannot read: no problem to show
        return None
    return oracle.module.source if oracle is not None else None


def kernelbench_prompt(problem: str, backend: str) -> str:
    """A prompt in the shape KernelBench gives its models: the problem's source, and the request for a ModelNew
    with custom kernels of the backend's kind, in one Python code block."""
    kind = "CUDA" if backend == "cuda" else "C++"
    return (f"Replace PyTorch operators of the architecture below with custom {kind} kernels to make it faster. "
            "You may replace any of them, fuse several into one kernel, or change the algorithm; keep the results "
            "the same.\n\n"
            f"The architecture:\n\n```python\n{problem.rstrip()}\n```\n\n"
            f"Write the optimized architecture as a class named ModelNew, with custom {kind} operators built inline "
            "(torch.utils.cpp_extension.load_inline). Answer with the complete new Python file in one ```python "
            "code block: real, compiling code, no explanation and no testing code.")


def _first_filter(view: StepView, options: SftOptions) -> Tuple[Optional[str], List[Dict[str, str]]]:
    """The drop reason of the per-step filters (before leakage and dedup), or None, with the messages."""
    step = view.step
    if not step.prompt:
        return "no_prompt", []
    try:
        messages = step.messages()
    except Exception:  # StoreError: counted, so a damaged row never stops an export
        return "malformed_prompt", []
    if not messages:
        return "malformed_prompt", []
    if not step.child_id or view.child is None:
        return "no_child", messages
    if view.child_evaluation is None:
        return ("pending" if step.pending else "not_evaluated"), messages
    if not view.child_evaluation.ok:
        return "child_incorrect", messages
    if any(flag in options.disqualifying_flags for flag in view.child_evaluation.flags):
        return "integrity_flag", messages
    if options.style == "kernelbench" and (view.child.language != "pytorch" or problem_source(view) is None):
        return "not_modelnew", messages
    if view.parent is None or view.parent_evaluation is None:
        return "parent_unknown", messages
    if not view.parent_evaluation.ok:
        return None if options.keep_repairs else "parent_incorrect", messages
    if view.first_step:
        if options.first_steps == "drop":
            return "first_step", messages
        if options.first_steps == "keep":
            return None, messages
    gain = view.gain
    if gain is None or not gain > options.threshold:
        return "below_threshold", messages
    return None, messages


def _record(candidate: _Candidate, difficulty: str, options: SftOptions) -> Dict[str, Any]:
    view = candidate.view
    step = view.step
    answer = {"role": "assistant", "content": step.response}
    metadata = {
        "task": view.task,
        "store": view.run.store,
        "run": view.run.id,
        "step": step.id,
        "parent_id": view.parent.id if view.parent else None,
        "child_id": view.child.id if view.child else None,
        "parent_origin": view.parent.origin if view.parent else None,
        "mutation": step.mutation,
        "edit_mode": view.edit_mode,
        "model": step.model,
        "parent_speedup": float(view.parent_speedup),
        "child_speedup": float(view.child_speedup),
        "gain": float(view.gain) if view.gain is not None else None,
        "first_step": bool(view.first_step),
        "repair": bool(view.parent_evaluation is not None and not view.parent_evaluation.ok),
        "device": view.device,
        "backend": view.backend,
        "language": view.child.language if view.child else view.run.language,
        "difficulty": difficulty,
        "leakage": float(candidate.leakage_score),
        "prompt_tokens": int(step.prompt_tokens),
        "completion_tokens": int(step.completion_tokens),
    }
    if options.style == "kernelbench":
        source = view.child.source.rstrip("\n")
        return {"prompt": kernelbench_prompt(problem_source(view) or "", view.backend),
                "completion": f"```python\n{source}\n```", "metadata": metadata}
    if options.style == "messages":
        return {"messages": candidate.messages + [answer], "metadata": metadata}
    return {"prompt": candidate.messages, "completion": [answer], "metadata": metadata}


def build_sft(runs: Sequence[StoredRun], options: Optional[SftOptions] = None) -> SftExport:
    """SFT records from loaded runs (see :func:`kernelsmith.training.load_runs`)."""
    options = options or SftOptions()
    options.validate()
    export = SftExport()
    report = export.report
    report.stores = sorted({run.store for run in runs})
    report.runs = len(runs)

    views: List[StepView] = []
    for run in runs:
        views.extend(step_views(run))
    report.considered = len(views)
    difficulty = task_difficulties(views, options.difficulty_edges)
    export.decisions = [
        SftDecision(view.run.store, view.run.id, view.step.id, None, view.gain, first_step=view.first_step,
                    repair=view.parent_evaluation is not None and not view.parent_evaluation.ok)
        for view in views
    ]
    decision_of = {id(view): decision for view, decision in zip(views, export.decisions)}

    def drop(view: StepView, reason: str) -> None:
        report.drop(reason)
        decision_of[id(view)].reason = reason

    survivors: List[_Candidate] = []
    for view in views:
        reason, messages = _first_filter(view, options)
        if reason is not None:
            drop(view, reason)
            continue
        candidate = _Candidate(view, messages)
        if options.leakage_threshold is not None:
            prompt_texts = [m["content"] for m in messages if m["role"] != "assistant"]
            measured = leakage(view.child.source, view.parent_sources(), prompt_texts, n=options.leakage_ngram)
            candidate.leakage_score = measured.score
            candidate.leakage_containment = measured.containment
            candidate.novel_ngrams = measured.novel_ngrams
            decision_of[id(view)].leakage = measured.score
            if measured.leaks(options.leakage_threshold, options.leakage_min_novel):
                drop(view, "leakage")
                continue
        survivors.append(candidate)

    # The best revisions first, so that dedup and the caps keep them.
    survivors.sort(key=lambda c: (-c.sort_gain, c.view.run.store, c.view.run.id, c.view.step.id))
    if options.dedup:
        seen_pairs, seen_children = set(), set()
        unique = []
        for candidate in survivors:
            step = candidate.view.step
            pair = hashlib.sha256((step.prompt + "\x00" + step.response).encode("utf-8")).hexdigest()
            child = candidate.view.child
            child_key = (child.language, child.normalized_hash or child.id)
            if pair in seen_pairs:
                drop(candidate.view, "duplicate_pair")
                continue
            if child_key in seen_children:
                drop(candidate.view, "duplicate_child")
                continue
            seen_pairs.add(pair)
            seen_children.add(child_key)
            unique.append(candidate)
        survivors = unique

    per_task: Counter = Counter()
    per_difficulty: Counter = Counter()
    selected = []
    for candidate in survivors:
        task = candidate.view.task
        label = difficulty[task].label if task in difficulty else "unknown"
        if options.max_per_task is not None and per_task[task] >= options.max_per_task:
            drop(candidate.view, "task_cap")
            continue
        if options.max_per_difficulty is not None and per_difficulty[label] >= options.max_per_difficulty:
            drop(candidate.view, "difficulty_cap")
            continue
        per_task[task] += 1
        per_difficulty[label] += 1
        selected.append((candidate, label))

    selected.sort(key=lambda item: (item[0].view.task, item[0].view.run.store, item[0].view.run.id, item[0].view.step.id))
    export.records = [_record(candidate, label, options) for candidate, label in selected]
    report.kept = len(export.records)
    report.per_task = per_task
    return export


def export_sft(
    stores: Sequence[str],
    out: Optional[str] = None,
    options: Optional[SftOptions] = None,
    run_ids: Optional[Sequence[int]] = None,
) -> SftExport:
    """Reads the run stores, builds the SFT records and, when ``out`` is given, writes them as JSONL."""
    export = build_sft(load_runs(stores, run_ids), options)
    if out is not None:
        write_jsonl(export.records, out)
        export.report.out = str(out)
    return export
