"""RL data from evolution trajectories: parent states worth improving, with per-attempt rewards.

A *state* is a correct parent program of a run. The attempts the search made on it (its sibling steps:
every LLM step whose first parent it is) form a group: each attempt's outcome (no program, compile
error, incorrect, correct at some speed) gets a reward from a :class:`RewardShaping`, on the speedup
over the parent, and the group gives GRPO and RLOO advantages. A state is kept when its parent is
correct and has room to improve (its speedup is below the best known for the task, or its fraction of
the hardware limit is low), and its prompt is the prompt of its best attempt.

Each record carries what an online reward function needs to score a fresh completion for the same
state (``extra_info``: the task, the parent's source and speedup, the edit mode), in the columns that
TRL's GRPOTrainer passes to reward functions and that verl passes to ``compute_score``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from kernelsmith.training.report import ExportReport, write_jsonl
from kernelsmith.training.rewards import (
    Outcome,
    RewardShaping,
    grpo_advantages,
    group_stats,
    outcome_from_evaluation,
    rloo_advantages,
)
from kernelsmith.store import StoredRun, load_runs
from kernelsmith.training.trajectory import StepView, best_speedups, step_views, task_json_of

#: Drop reasons for parent states, with what each means.
RL_DROP_REASON_TEXT = {
    "parent_unknown": "the parent or its evaluation is missing",
    "parent_incorrect": "the parent is not a correct program: nothing to measure a speedup against",
    "no_headroom": "the parent is already within min_headroom of the best known / of the hardware limit",
    "group_too_small": "fewer usable attempts than min_group_size",
    "no_reward_variance": "all attempts scored the same (require_variance)",
    "duplicate_state": "the same parent program (normalised) is kept from another run already",
    "task_cap": "over max_per_task for its task",
}

#: Drop reasons for parent states.
RL_DROP_REASONS = tuple(RL_DROP_REASON_TEXT)

#: Reasons an attempt is left out of its group, with what each means.
RL_COMPLETION_DROP_REASON_TEXT = {
    "no_prompt": "not an LLM step (e.g. the parameter mutator)",
    "malformed_prompt": "steps.prompt is not a JSON array of chat messages",
    "no_response": "the client failed: no answer to reward",
    "pending": "the child is not evaluated yet",
    "not_evaluated": "the child was never evaluated",
    "near_duplicate": "rejected as a near duplicate: its own outcome was never measured",
    "duplicate_unresolved": "rejected as a duplicate, but no stored program matches its code",
    "duplicate_unevaluated": "a duplicate of a program without an evaluation",
}

#: Reasons an attempt is left out of its group.
RL_COMPLETION_DROP_REASONS = tuple(RL_COMPLETION_DROP_REASON_TEXT)


@dataclass
class RlAttemptDecision:
    """One attempt (step) on a parent state: left out of its group (reason) or scored (reward, advantages; set when
    the group got that far)."""

    step: int
    reason: Optional[str] = None
    reward: Optional[float] = None
    advantage_grpo: Optional[float] = None
    advantage_rloo: Optional[float] = None


@dataclass
class RlDecision:
    """What the RL export did with one parent state: kept (reason None) or dropped for one of RL_DROP_REASONS."""

    store: str
    run: int
    parent_id: str
    reason: Optional[str]
    #: Room to improve (best known speedup / parent's, or 1 / its fraction of the hardware limit); None when the
    #: state was dropped before it was measured.
    headroom: Optional[float] = None
    attempts: List[RlAttemptDecision] = field(default_factory=list)

    @property
    def kept(self) -> bool:
        """True when the state became a record (records, with layout "completions")."""
        return self.reason is None


_STATE_LABEL = "kernel_optimization"


@dataclass
class RlOptions:
    """Settings of the RL export: reward shaping, which parent states to keep, the group filters and the
    record layout."""

    shaping: Any = "kernelsmith"  # a preset name, a dict of fields, or a RewardShaping
    #: Keep a state when max(best known speedup / parent speedup, 1 / parent's fraction of the hardware
    #: limit) is at least this.
    min_headroom: float = 1.05
    #: Attempts a group needs (1 keeps single attempts, whose advantages are 0).
    min_group_size: int = 1
    #: Keep only groups whose rewards differ (GRPO learns nothing from a flat group).
    require_variance: bool = False
    #: One record per state ("groups") or per attempt ("completions").
    layout: str = "groups"
    max_per_task: Optional[int] = None
    dedup: bool = True
    grpo_eps: float = 1e-6

    def validate(self) -> None:
        """Raises ValueError naming the setting that is out of range."""
        RewardShaping.from_spec(self.shaping)
        if not self.min_headroom >= 0:
            raise ValueError(f"min_headroom must be >= 0 (0 keeps every correct parent), got {self.min_headroom}")
        if self.min_group_size < 1:
            raise ValueError(f"min_group_size must be at least 1, got {self.min_group_size}")
        if self.layout not in ("groups", "completions"):
            raise ValueError(f"layout must be 'groups' or 'completions', not {self.layout!r}")
        if self.max_per_task is not None and self.max_per_task < 0:
            raise ValueError(f"max_per_task must be >= 0 or None, got {self.max_per_task}")


@dataclass
class Attempt:
    view: StepView
    messages: List[Dict[str, str]]
    outcome: Outcome
    duplicate_of: Optional[str] = None
    reward: float = 0.0
    advantage_grpo: float = 0.0
    advantage_rloo: float = 0.0


@dataclass
class RlExport:
    """What an RL export produced: the records, the ExportReport and the RewardShaping used."""

    records: List[Dict[str, Any]] = field(default_factory=list)
    report: ExportReport = field(default_factory=lambda: ExportReport("rl"))
    shaping: RewardShaping = field(default_factory=RewardShaping)
    #: One decision per parent state considered, in the order of the runs and their first attempts.
    decisions: List[RlDecision] = field(default_factory=list)


def _attempt(view: StepView, parent_speedup: float) -> Tuple[Optional[Attempt], Optional[str]]:
    step = view.step
    if not step.prompt:
        return None, "no_prompt"
    try:
        messages = step.messages()
    except Exception:
        return None, "malformed_prompt"
    if not messages:
        return None, "malformed_prompt"
    if view.child is not None:
        if view.child_evaluation is None:
            return None, "pending" if step.pending else "not_evaluated"
        return Attempt(view, messages, outcome_from_evaluation(view.child_evaluation, parent_speedup)), None
    if step.is_near_duplicate:
        return None, "near_duplicate"
    if step.is_duplicate:
        # The answer's program equals a stored one (the engine or the mutator rejected it before
        # evaluation): its outcome is that program's evaluation. A version-1 store does not name the
        # program the mutator's own check found: the answer is parsed again to find it.
        duplicate = step.duplicate_of or _find_duplicate(view)
        if duplicate is None:
            return None, "duplicate_unresolved"
        evaluation = view.run.evaluations.get(duplicate)
        if evaluation is None:
            return None, "duplicate_unevaluated"
        attempt = Attempt(view, messages, outcome_from_evaluation(evaluation, parent_speedup), duplicate_of=duplicate)
        return attempt, None
    if not step.response:
        return None, "no_response"
    # An answer with no usable program (unparseable, diff matched nothing, wrong language).
    return Attempt(view, messages, Outcome(parsed=False, parent_speedup=parent_speedup, message=step.failure)), None


def _find_duplicate(view: StepView) -> Optional[str]:
    """The stored program an answer duplicates: the answer parsed again as the mutator did (the same
    parser, against the parent's source) and matched by normalised source hash."""
    if view.parent is None or not view.step.response:
        return None
    import kernelsmith as ks

    parsed = ks.parse_response(view.step.response, ks.parse_edit_mode(view.edit_mode), view.parent.source)
    if not parsed.ok:
        return None
    language = view.parent.language
    wanted = ks.normalized_source_hash(language, parsed.source)
    for program in view.run.programs.values():
        if program.language == language and program.normalized_hash == wanted:
            return program.id
    return None


def _state(view: StepView) -> Dict[str, Any]:
    parent = view.parent
    return {
        "task": view.task,
        "task_json": task_json_of(view.run),
        "language": parent.language,
        "parent_id": parent.id,
        "parent_source": parent.source,
        "parent_speedup": float(view.parent_speedup),
        "mode": view.edit_mode,
        "device": view.device,
        "backend": view.backend,
        "store": view.run.store,
        "run": view.run.id,
        "step": view.step.id,
    }


def _completion_entry(attempt: Attempt) -> Dict[str, Any]:
    outcome = attempt.outcome
    view = attempt.view
    return {
        "step": view.step.id,
        "completion": view.step.response,
        "child_id": view.child.id if view.child else attempt.duplicate_of,
        "duplicate_of": attempt.duplicate_of,
        "mode": view.edit_mode,
        "model": view.step.model,
        "parsed": outcome.parsed,
        "status": outcome.status,
        "compiled": outcome.compiled,
        "correct": outcome.correct,
        "speedup": float(outcome.speedup),
        "speedup_over_parent": float(outcome.speedup_over_parent),
        "reward": float(attempt.reward),
        "advantage_grpo": float(attempt.advantage_grpo),
        "advantage_rloo": float(attempt.advantage_rloo),
    }


def build_rl(runs: Sequence[StoredRun], options: Optional[RlOptions] = None) -> RlExport:
    """RL records from loaded runs (see :func:`kernelsmith.training.load_runs`)."""
    options = options or RlOptions()
    options.validate()
    shaping = RewardShaping.from_spec(options.shaping)
    export = RlExport(shaping=shaping)
    report = export.report
    report.stores = sorted({run.store for run in runs})
    report.runs = len(runs)
    best_known = best_speedups(runs)

    groups: Dict[Tuple[str, str], List[StepView]] = defaultdict(list)
    for run in runs:
        for view in step_views(run):
            groups[(run.key, view.step.parent_ids[0])].append(view)
    report.considered = len(groups)
    decision_of: Dict[Tuple[str, str], RlDecision] = {}
    for key, views in groups.items():
        decision_of[key] = RlDecision(views[0].run.store, views[0].run.id, key[1], None,
                                      attempts=[RlAttemptDecision(view.step.id) for view in views])
    export.decisions = list(decision_of.values())

    def drop(key: Tuple[str, str], reason: str) -> None:
        report.drop(reason)
        decision_of[key].reason = reason

    kept: List[Tuple[float, List[Attempt], StepView, float]] = []
    for key, views in groups.items():
        first = views[0]
        if first.parent is None or first.parent_evaluation is None:
            drop(key, "parent_unknown")
            continue
        if not first.parent_evaluation.ok or first.parent_speedup <= 0:
            drop(key, "parent_incorrect")
            continue
        parent_speedup = first.parent_speedup
        headroom = best_known.get(first.task, 0.0) / parent_speedup
        fraction = first.parent_evaluation.sol_fraction
        if fraction is not None:
            headroom = max(headroom, 1.0 / fraction)
        decision_of[key].headroom = headroom
        if headroom < options.min_headroom:
            drop(key, "no_headroom")
            continue
        attempts: List[Attempt] = []
        left_out: Counter = Counter()
        for view, attempt_decision in zip(views, decision_of[key].attempts):
            attempt, reason = _attempt(view, parent_speedup)
            if attempt is None:
                left_out[reason] += 1
                attempt_decision.reason = reason
            else:
                attempts.append(attempt)
        if len(attempts) < options.min_group_size:
            drop(key, "group_too_small")
            report.dropped_completions.update(left_out)
            report.dropped_completions["in_dropped_group"] += len(attempts)
            continue
        rewards = [shaping.reward(a.outcome) for a in attempts]
        scored = {a.view.step.id: reward for a, reward in zip(attempts, rewards)}
        for attempt_decision in decision_of[key].attempts:
            attempt_decision.reward = scored.get(attempt_decision.step)
        if options.require_variance and len(set(rewards)) < 2:
            drop(key, "no_reward_variance")
            report.dropped_completions.update(left_out)
            report.dropped_completions["in_dropped_group"] += len(attempts)
            continue
        for attempt, reward, a_grpo, a_rloo in zip(
            attempts, rewards, grpo_advantages(rewards, options.grpo_eps), rloo_advantages(rewards)
        ):
            attempt.reward, attempt.advantage_grpo, attempt.advantage_rloo = reward, a_grpo, a_rloo
        advantages = {a.view.step.id: (a.advantage_grpo, a.advantage_rloo) for a in attempts}
        for attempt_decision in decision_of[key].attempts:
            if attempt_decision.step in advantages:
                attempt_decision.advantage_grpo, attempt_decision.advantage_rloo = advantages[attempt_decision.step]
        report.dropped_completions.update(left_out)
        # The state's prompt is its best attempt's (ties: the latest, whose prompt saw the most).
        best = max(attempts, key=lambda a: (a.reward, a.view.step.id))
        kept.append((headroom, attempts, best.view, best.reward))

    # The most rewarding states first, so that dedup and the cap keep them.
    kept.sort(key=lambda item: (-item[3], -len(item[1]), item[2].run.store, item[2].run.id, item[2].step.id))
    seen_states = set()
    per_task: Counter = Counter()
    selected = []
    for headroom, attempts, best_view, _ in kept:
        parent = best_view.parent
        state_key = (best_view.task, parent.language, parent.normalized_hash or parent.id)
        group_key = (best_view.run.key, best_view.step.parent_ids[0])
        if options.dedup and state_key in seen_states:
            drop(group_key, "duplicate_state")
            report.dropped_completions["in_dropped_group"] += len(attempts)
            continue
        if options.max_per_task is not None and per_task[best_view.task] >= options.max_per_task:
            drop(group_key, "task_cap")
            report.dropped_completions["in_dropped_group"] += len(attempts)
            continue
        seen_states.add(state_key)
        per_task[best_view.task] += 1
        selected.append((headroom, attempts, best_view))

    selected.sort(key=lambda item: (item[2].task, item[2].run.store, item[2].run.id, item[2].step.id))
    for headroom, attempts, best_view in selected:
        export.records.extend(_records(headroom, attempts, best_view, best_known, shaping, options))
        report.completions += len(attempts)
    report.kept = len(selected)
    report.per_task = per_task
    return export


def _records(
    headroom: float,
    attempts: List[Attempt],
    best_view: StepView,
    best_known: Dict[str, float],
    shaping: RewardShaping,
    options: RlOptions,
) -> List[Dict[str, Any]]:
    stats = group_stats([a.reward for a in attempts])
    parent_evaluation = best_view.parent_evaluation
    common = {
        "data_source": f"kernelsmith/{best_view.task}",
        "ability": _STATE_LABEL,
        "task": best_view.task,
        "reward_model": {"style": "rule", "ground_truth": best_view.parent.id},
        "group": f"{best_view.run.key}/{best_view.parent.id}",
        "group_size": stats.size,
        "reward_mean": stats.mean,
        "reward_std": stats.std,
        "reward_best": stats.best,
        "headroom": float(headroom),
        "best_known_speedup": float(best_known.get(best_view.task, 0.0)),
        "parent_sol_fraction": parent_evaluation.sol_fraction,
        "shaping": shaping.name,
    }
    if options.layout == "groups":
        record = {"prompt": attempts_prompt(attempts, best_view), "extra_info": _state(best_view)}
        record.update(common)
        record["attempts"] = [_completion_entry(a) for a in attempts]
        return [record]
    records = []
    for attempt in attempts:
        entry = _completion_entry(attempt)
        record = {"prompt": attempt.messages, "extra_info": _state(attempt.view)}
        record.update(common)
        record.update(entry)
        records.append(record)
    return records


def attempts_prompt(attempts: List[Attempt], best_view: StepView) -> List[Dict[str, str]]:
    for attempt in attempts:
        if attempt.view is best_view:
            return attempt.messages
    return best_view.step.messages()


def export_rl(
    stores: Sequence[str],
    out: Optional[str] = None,
    options: Optional[RlOptions] = None,
    run_ids: Optional[Sequence[int]] = None,
) -> RlExport:
    """Reads the run stores, builds the RL records and, when ``out`` is given, writes them as JSONL."""
    export = build_rl(load_runs(stores, run_ids), options)
    if out is not None:
        write_jsonl(export.records, out)
        export.report.out = str(out)
    return export
