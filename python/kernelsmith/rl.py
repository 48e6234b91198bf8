"""Reward functions for online RL: score fresh completions with the real evaluator (docs/training.md).

A completion answers a prompt about a *state*: a task and a parent program to improve (what
``kernelsmith export --format rl`` writes into each record's ``extra_info``). Scoring one means:
parse the completion with the LLM mutator's response parser (a whole file, or SEARCH/REPLACE blocks
applied to the parent), evaluate the program (compile, check, time) in batches, and turn the outcome
into a reward with a :class:`~kernelsmith.training.RewardShaping` on the speedup over the parent.

Two call conventions:

- TRL's GRPOTrainer: ``reward_func(prompts, completions, **kwargs) -> list[float]``; the dataset's
  other columns arrive in ``kwargs`` (``extra_info``, or the flat columns ``task``, ``task_json``,
  ``parent_source``, ``parent_speedup``, ``mode``, ``language``).
- verl: ``compute_score(data_source, solution_str, ground_truth, extra_info=None) -> float`` (and its
  batched form with ``data_sources``, ``solution_strs``, ``ground_truths``, ``extra_infos``).

:class:`KernelReward` holds the evaluator and the caches; the module-level :func:`reward_func` and
:func:`compute_score` use one shared instance over the default evaluator (``create_evaluator()``;
set ``KERNELSMITH_REWARD_BACKEND`` and ``KERNELSMITH_REWARD_SHAPING`` to choose, and
``KERNELSMITH_REWARD_RAY`` to evaluate on a Ray cluster).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from kernelsmith import _inputs
from kernelsmith.training.rewards import Outcome, RewardShaping, outcome_from_evaluation

__all__ = ["KernelReward", "RewardResult", "compute_score", "default_reward", "reward_func"]


@dataclass
class RewardResult:
    """One scored completion."""

    reward: float
    outcome: Outcome
    source: str = ""  # the program read from the completion ("" when none)
    failure: str = ""  # why no program could be read
    evaluation: Any = None  # the kernelsmith.Evaluation, when the program was evaluated

    def as_dict(self) -> Dict[str, Any]:
        """The score, the failure and the outcome's fields as a JSON-ready dict."""
        data = {"score": self.reward, "failure": self.failure}
        data.update(self.outcome.as_dict())
        return data


@dataclass
class _State:
    task_key: str
    task: Any
    language: str
    parent_source: str
    parent_speedup: Optional[float]
    mode: str


def _completion_text(completion: Any) -> str:
    """The text of a completion: a string (standard format) or a list of messages (conversational:
    the last assistant message)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Mapping):
        return str(completion.get("content", ""))
    if isinstance(completion, Sequence):
        for message in reversed(list(completion)):
            if isinstance(message, Mapping) and message.get("role", "assistant") == "assistant":
                return str(message.get("content", ""))
        return ""
    raise TypeError(f"a completion is a string or a list of chat messages, not {type(completion).__name__}")


def _state_dict(value: Any, index: int, where: str) -> Dict[str, Any]:
    if isinstance(value, str):
        try:
            value = _inputs.loads(value)  # the handler below names the sample
        except json.JSONDecodeError as error:
            raise ValueError(f"{where} of sample {index} is a string but not JSON ({error}): {value[:60]!r}") from None
    if not isinstance(value, Mapping):
        raise ValueError(
            f"{where} of sample {index} must be a dict with the state (task, parent_source, ...), "
            f"not {type(value).__name__}: use the records of `kernelsmith export --format rl`"
        )
    return dict(value)


class KernelReward:
    """Scores completions by evaluating the programs they hold. Thread-safe; caches tasks and the
    parents' speedups (so that each parent is evaluated once per evaluator).

    ``evaluator``: any kernelsmith Evaluator (``create_evaluator(...)`` or a Python subclass); None
    creates the built-in one from ``evaluator_options`` (an EvaluatorOptions or a dict of its fields)
    on first use. ``shaping``: a preset name ("kernelsmith", "kernelgym", "kernelgym_tiered"), a dict of
    RewardShaping fields or a RewardShaping. ``reevaluate_parent``: measure the parent with this
    evaluator (True: speedups over the parent compare like with like on this device) or trust the
    state's ``parent_speedup`` (False)."""

    def __init__(
        self,
        evaluator: Any = None,
        shaping: Any = "kernelsmith",
        *,
        evaluator_options: Any = None,
        reevaluate_parent: bool = True,
    ) -> None:
        self.shaping = RewardShaping.from_spec(shaping)
        self._evaluator = evaluator
        self._evaluator_options = evaluator_options
        self.reevaluate_parent = reevaluate_parent
        self._lock = threading.Lock()
        self._tasks: Dict[str, Any] = {}
        # None: the parent was measured here and is not correct on this evaluator.
        self._parent_speedups: Dict[Tuple[str, str], Optional[float]] = {}
        self.last_results: List[RewardResult] = []
        # TRL names the reward in its logs after the function's __name__.
        self.__name__ = f"kernelsmith_{self.shaping.name}_reward"

    # ---- the evaluator and the states

    @property
    def evaluator(self) -> Any:
        """The evaluator that scores completions; the built-in one is created from evaluator_options on first use."""
        with self._lock:
            if self._evaluator is None:
                import kernelsmith as ks

                options = self._evaluator_options
                if options is None or isinstance(options, Mapping):
                    fields = dict(options or {})
                    options = ks.EvaluatorOptions()
                    for name, value in fields.items():
                        if not hasattr(options, name):
                            raise ValueError(f"EvaluatorOptions has no field {name!r}")
                        setattr(options, name, value)
                self._evaluator = ks.create_evaluator(options)
            return self._evaluator

    def _task(self, state: Mapping[str, Any], index: int) -> Tuple[str, Any]:
        import kernelsmith as ks

        task_json = state.get("task_json")
        name = state.get("task")
        if task_json:
            key = "json:" + hashlib.sha256(str(task_json).encode("utf-8")).hexdigest()
        elif name:
            key = "name:" + str(name)
        else:
            raise ValueError(f"sample {index}: the state names no task (give 'task_json' or a built-in 'task' name)")
        with self._lock:
            task = self._tasks.get(key)
        if task is None:
            task = ks.Task.from_json(task_json, f"<state of sample {index}>") if task_json else ks.Task.load(str(name))
            with self._lock:
                self._tasks.setdefault(key, task)
        return key, task

    def _state(self, state: Mapping[str, Any], index: int) -> _State:
        task_key, task = self._task(state, index)
        language = str(state.get("language") or "")
        parent_source = str(state.get("parent_source") or "")
        if not language:
            languages = list(task.languages())
            if not languages:
                raise ValueError(f"sample {index}: task {task.name} has no kernel language")
            language = languages[0]
        if not parent_source:
            # A state without a parent starts from the task's reference (a first step).
            references = task.references
            if language not in references:
                raise ValueError(f"sample {index}: task {task.name} has no {language} reference to start from")
            parent_source = references[language].source
        parent_speedup = state.get("parent_speedup")
        mode = str(state.get("mode") or "full")
        return _State(task_key, task, language, parent_source,
                      float(parent_speedup) if parent_speedup is not None else None, mode)

    # ---- scoring

    def score(self, completions: Sequence[Any], states: Sequence[Any]) -> List[RewardResult]:
        """Scores completions against their states (dicts as in the RL export's ``extra_info``)."""
        import kernelsmith as ks

        if len(completions) != len(states):
            raise ValueError(f"{len(completions)} completions but {len(states)} states: give one state per completion")
        parsed_states = [self._state(_state_dict(s, i, "the state"), i) for i, s in enumerate(states)]
        texts = [_completion_text(c) for c in completions]

        sources: List[Optional[str]] = []
        failures: List[str] = []
        for text, state in zip(texts, parsed_states):
            parsed = ks.parse_response(text, ks.parse_edit_mode(state.mode), state.parent_source)
            if parsed.ok:
                sources.append(parsed.source)
                failures.append("")
            else:
                sources.append(None)
                failures.append(parsed.failure)

        # One evaluate_batch per task: the children, and the parents not measured yet.
        evaluations: Dict[int, Any] = {}
        by_task: Dict[str, List[int]] = {}
        for i, source in enumerate(sources):
            if source is not None:
                by_task.setdefault(parsed_states[i].task_key, []).append(i)
        parents_needed: Dict[str, Dict[Tuple[str, str], _State]] = {}
        if self.reevaluate_parent:
            for state in parsed_states:
                key = (state.task_key, _source_key(state.language, state.parent_source))
                with self._lock:
                    known = key in self._parent_speedups
                if not known:
                    parents_needed.setdefault(state.task_key, {})[key] = state
        for task_key in sorted(set(by_task) | set(parents_needed)):
            indices = by_task.get(task_key, [])
            parent_items = list(parents_needed.get(task_key, {}).items())
            task = self._tasks[task_key]
            candidates = [_candidate(ks, parsed_states[i].language, sources[i]) for i in indices]
            candidates += [_candidate(ks, state.language, state.parent_source) for _, state in parent_items]
            results = list(self.evaluator.evaluate_batch(task, candidates))
            if len(results) != len(candidates):
                raise RuntimeError(
                    f"the evaluator returned {len(results)} evaluations for {len(candidates)} candidates"
                )
            for i, evaluation in zip(indices, results[: len(indices)]):
                evaluations[i] = evaluation
            for (key, _), evaluation in zip(parent_items, results[len(indices):]):
                outcome = outcome_from_evaluation(evaluation, 0.0)
                with self._lock:
                    self._parent_speedups[key] = outcome.speedup if outcome.correct and outcome.speedup > 0 else None

        results_out: List[RewardResult] = []
        for i, state in enumerate(parsed_states):
            parent_speedup = self._parent_speedup(state)
            if sources[i] is None:
                outcome = Outcome(parsed=False, parent_speedup=parent_speedup, message=failures[i])
                results_out.append(RewardResult(self.shaping.reward(outcome), outcome, failure=failures[i]))
                continue
            outcome = outcome_from_evaluation(evaluations[i], parent_speedup)
            results_out.append(RewardResult(self.shaping.reward(outcome), outcome, source=sources[i],
                                            evaluation=evaluations[i]))
        self.last_results = results_out
        return results_out

    def _parent_speedup(self, state: _State) -> float:
        # A parent that is not correct on this evaluator falls back to the speedup the state recorded.
        if self.reevaluate_parent:
            with self._lock:
                measured = self._parent_speedups.get((state.task_key, _source_key(state.language, state.parent_source)))
            if measured is not None:
                return measured
        return state.parent_speedup if state.parent_speedup is not None else 0.0

    # ---- TRL

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any) -> List[float]:
        """TRL GRPOTrainer's reward function: one float per completion. The state of each sample comes
        from the dataset's ``extra_info`` column, or from flat columns of the same names."""
        states = _states_from_columns(len(completions), kwargs)
        return [result.reward for result in self.score(completions, states)]

    # ---- verl

    def compute_score(
        self,
        data_source: Any = None,
        solution_str: Any = None,
        ground_truth: Any = None,
        extra_info: Any = None,
        *,
        data_sources: Optional[Sequence[Any]] = None,
        solution_strs: Optional[Sequence[str]] = None,
        ground_truths: Optional[Sequence[Any]] = None,
        extra_infos: Optional[Sequence[Any]] = None,
        **_: Any,
    ) -> Any:
        """verl's ``compute_score``: one float for one sample, or a list for the batched form."""
        if solution_strs is not None:
            if extra_infos is None:
                raise ValueError("compute_score: the batched form needs extra_infos (the RL export's extra_info)")
            return [r.reward for r in self.score(list(solution_strs), list(extra_infos))]
        if solution_str is None:
            raise ValueError("compute_score needs solution_str (or solution_strs for a batch)")
        if extra_info is None:
            raise ValueError(
                "compute_score needs extra_info with the state (task, parent_source, ...): "
                "train on records of `kernelsmith export --format rl`"
            )
        return self.score([solution_str], [extra_info])[0].reward


def _source_key(language: str, source: str) -> str:
    return hashlib.sha256((language + "\x00" + source).encode("utf-8")).hexdigest()


def _candidate(ks: Any, language: str, source: str) -> Any:
    candidate = ks.Candidate()
    candidate.language = language
    candidate.source = source
    return candidate


_STATE_COLUMNS = ("task", "task_json", "language", "parent_source", "parent_speedup", "mode")


def _states_from_columns(count: int, columns: Mapping[str, Any]) -> List[Any]:
    infos = columns.get("extra_info")
    if infos is not None:
        if len(infos) != count:
            raise ValueError(f"extra_info has {len(infos)} entries for {count} completions")
        return list(infos)
    present = [name for name in _STATE_COLUMNS if name in columns]
    if "task" not in present and "task_json" not in present:
        raise ValueError(
            "the reward function needs each sample's state: an 'extra_info' column (as the RL export writes) "
            f"or the columns {', '.join(_STATE_COLUMNS)}; got only {sorted(columns)}"
        )
    states = []
    for i in range(count):
        states.append({name: columns[name][i] for name in present})
    return states


_default_lock = threading.Lock()
_default: Optional[KernelReward] = None


def default_reward() -> KernelReward:
    """The shared KernelReward of :func:`reward_func` and :func:`compute_score`: the built-in evaluator
    on ``$KERNELSMITH_REWARD_BACKEND`` (default "auto"), shaping ``$KERNELSMITH_REWARD_SHAPING``
    (default "kernelsmith"). With ``$KERNELSMITH_REWARD_RAY`` set to a Ray address ("auto" inside a Ray
    job such as verl's), the programs are evaluated by a :class:`kernelsmith.distributed.RayEvaluator`
    there, one actor per GPU (docs/distributed.md)."""
    global _default
    with _default_lock:
        if _default is None:
            shaping = os.environ.get("KERNELSMITH_REWARD_SHAPING", "kernelsmith")
            backend = os.environ.get("KERNELSMITH_REWARD_BACKEND", "auto")
            ray_address = os.environ.get("KERNELSMITH_REWARD_RAY", "")
            if ray_address:
                from kernelsmith.distributed import RayEvaluator

                _default = KernelReward(RayEvaluator(ray_address, {"backend": backend}), shaping=shaping)
            else:
                _default = KernelReward(shaping=shaping, evaluator_options={"backend": backend})
        return _default


def reward_func(prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any) -> List[float]:
    """TRL GRPOTrainer reward function over :func:`default_reward`."""
    return default_reward()(prompts, completions, **kwargs)


def compute_score(
    data_source: Any = None,
    solution_str: Any = None,
    ground_truth: Any = None,
    extra_info: Any = None,
    **kwargs: Any,
) -> Any:
    """verl reward function (``custom_reward_function.name: compute_score``) over :func:`default_reward`."""
    return default_reward().compute_score(data_source, solution_str, ground_truth, extra_info, **kwargs)
