"""`kernelsmith kernelbench run`: evolves imported KernelBench problems one after another into one run store.

One evaluator (so one worker pool) and one mutator serve every problem; each problem's evolution is an
ordinary run of the store, made by the same pieces as `kernelsmith evolve` (kernelsmith.cli). A problem
already finished in the store is skipped (``--restart`` starts it again); one whose run was interrupted
(Ctrl-C, a killed process) is resumed. At the end the report of `kernelsmith kernelbench report` is printed
for the problems selected.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Tuple

from kernelsmith import _inputs
from kernelsmith.kernelbench.report import build_report, format_json, format_report, problem_id

#: How to go on after a Ctrl-C, for the messages.
_CONTINUE = "rerun the same command to resume the interrupted problem and run the rest"


def parse_problem_numbers(spec: str) -> Set[int]:
    """The problem numbers of a --problems list: '1-20,33' -> {1, ..., 20, 33}. Raises ValueError saying
    which part is wrong."""
    numbers: Set[int] = set()
    for part in spec.split(","):
        part = part.strip()
        match = re.fullmatch(r"(\d+)(?:\s*-\s*(\d+))?", part)
        if not match:
            raise ValueError(f"--problems {spec!r}: {part!r} is neither a number nor a range like 1-20; give "
                             f"comma-separated numbers and ranges, e.g. 1-20,33")
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) else first
        if last < first:
            raise ValueError(f"--problems {spec!r}: the range {part!r} ends before it starts")
        numbers.update(range(first, last + 1))
    return numbers


@dataclass
class Selection:
    """The problem folders chosen from a tasks folder, in (level, number) order, with what was left out."""

    folders: List[Path]
    not_problems: List[str]  # task folders whose names are not kb_l<level>_<number>_...
    not_found: List[int]  # numbers asked for with --problems that no selected level has


def select_problems(tasks_dir: Path, level: Optional[int], numbers: Optional[Set[int]]) -> Selection:
    """The task folders (holding task.json) of `tasks_dir` named as KernelBench problems, of one level and
    numbers when given. Raises ValueError when the folder is missing or nothing matches, saying what is there."""
    if not tasks_dir.is_dir():
        raise ValueError(f"--tasks {tasks_dir}: no such folder; give the --out folder of `kernelsmith kernelbench "
                         f"import`")
    chosen: List[Tuple[Tuple[int, int], Path]] = []
    not_problems: List[str] = []
    levels_there: Dict[int, int] = {}
    for folder in sorted(tasks_dir.iterdir()):
        if not (folder / "task.json").is_file():
            continue
        identity = problem_id(folder.name)
        if identity is None:
            not_problems.append(folder.name)
            continue
        levels_there[identity[0]] = levels_there.get(identity[0], 0) + 1
        if level is not None and identity[0] != level:
            continue
        if numbers is not None and identity[1] not in numbers:
            continue
        chosen.append((identity, folder))
    if not chosen:
        there = ", ".join(f"level {lv}: {count}" for lv, count in sorted(levels_there.items())) or "none"
        wanted = f" of level {level}" if level is not None else ""
        wanted += " with the --problems numbers" if numbers else ""
        raise ValueError(f"--tasks {tasks_dir}: no problem folder{wanted} (folders named kb_l<level>_<number>_... "
                         f"holding task.json; problems there: {there})")
    found = {identity[1] for identity, _ in chosen}
    chosen.sort(key=lambda entry: entry[0])
    return Selection([folder for _, folder in chosen], not_problems, sorted((numbers or set()) - found))


def parse_baselines(ks, text: str) -> List[str]:
    """The --baselines list: known names, eager always among them (speedups are against it)."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    known = list(ks.PytorchOracle().baselines)
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ks.ValidationError(f"--baselines: unknown baseline(s) {', '.join(unknown)}; known: {', '.join(known)}")
    return ["eager"] + [name for name in names if name != "eager"]


def add_seed_from(ks, task, language: str, seeds_dir: Optional[Path]) -> Optional[str]:
    """Gives the task the seed file seeds_dir/<task name>/seed<extension> of `language` when the task has no
    seed in that language (for `pytorch`, a ModelNew file: model_new.py, or seed.py when it defines ModelNew).
    Returns the file's path when one was taken, else None."""
    if language in task.seeds or seeds_dir is None:
        return None
    row = ks.kernel_language(language)
    names = ["model_new.py", "seed.py"] if row.host_code else [f"seed{extension}" for extension in row.extensions]
    for name in names:
        path = seeds_dir / task.name / name
        # The task's name comes from its manifest: neither ".." nor a symbolic link may lead out of seeds_dir.
        try:
            _inputs.path_inside(seeds_dir, path.relative_to(seeds_dir))
        except _inputs.OutsideFolder as error:
            raise ks.ValidationError(f"the seed of task {task.name}: {error}") from None
        if path.is_file():
            text = path.read_text()
            if row.host_code and not ks.defines_model_new(text):
                continue  # a Triton seed.py
            seeds = dict(task.seeds)
            seeds[language] = ks.KernelSource(language, text, str(path))
            task.seeds = seeds
            return str(path)
    return None


def _finished(run) -> bool:
    """A run that needs nothing more: it ended by a stop rule, or used its wall time. A run that was stopped
    (Ctrl-C), aborted, killed (still 'running') or failed is resumed instead."""
    return run.status == "finished" or (run.status == "stopped" and run.stop_reason == "wall_time")


class SweepSpend:
    """What this `kernelbench run` spent on a model over its problems, held against its --sweep-max-llm-* caps
    (docs/kernelbench.md, "LLM budgets"): each problem's run is capped at what the sweep has left, and once a cap
    is reached the remaining problems are not started (a later `kernelbench run` resumes them, with caps of its
    own). A resumed run's earlier sessions count toward its own caps, not this sweep's."""

    # (EvolutionConfig field, the sweep's option, LlmSpend property)
    _CAPS = (("max_llm_calls", "sweep_max_llm_calls", "calls"),
             ("max_llm_tokens", "sweep_max_llm_tokens", "tokens"),
             ("max_llm_cost", "sweep_max_llm_cost", "cost"))

    def __init__(self, ks: Any, args: argparse.Namespace):
        self.caps = {field: getattr(args, option, 0) or 0 for field, option, _ in self._CAPS}
        for field, option, _ in self._CAPS:
            if self.caps[field] < 0:
                raise ks.ValidationError(f"--{option.replace('_', '-')} is {self.caps[field]:g}: give 0 (no cap) or more")
        self.spent = {field: 0 for field, _, _ in self._CAPS}

    def capping(self) -> bool:
        return any(cap > 0 for cap in self.caps.values())

    def spent_reason(self) -> str:
        """Why no further problem starts ("" while every cap has something left)."""
        for field, option, unit in self._CAPS:
            cap = self.caps[field]
            if cap > 0 and self.spent[field] >= cap:
                return (f"the sweep's LLM budget is spent ({self.spent[field]:g} {unit} of --{option.replace('_', '-')} "
                        f"{cap:g}; run again to resume)")
        return ""

    @staticmethod
    def earlier_spend(ks: Any, db: str, previous: Any) -> Dict[str, float]:
        """What the run being resumed spent in its earlier sessions (nothing for a new run)."""
        from kernelsmith import cli

        if previous is None:
            return {"calls": 0, "tokens": 0, "cost": 0.0}
        spend = cli._llm_spend_summary(ks, previous, ks.RunStore(db, read_only=True).steps(previous.id))
        return {"calls": spend["calls"], "tokens": spend["prompt_tokens"] + spend["completion_tokens"],
                "cost": spend["cost"]}

    def capped(self, config: Any, earlier: Dict[str, float]) -> Any:
        """`config` with each cap lowered to what the sweep has left (plus what a resumed run spent before)."""
        for field, _, unit in self._CAPS:
            cap = self.caps[field]
            if cap <= 0:
                continue
            run_cap = earlier[unit] + (cap - self.spent[field])
            if isinstance(cap, int):
                run_cap = int(run_cap)
            current = getattr(config, field)
            setattr(config, field, run_cap if current <= 0 else min(current, run_cap))
        return config

    def add(self, earlier: Dict[str, float], spend: Any) -> None:
        """Counts a problem's run: its spend less what its earlier sessions spent."""
        for field, _, unit in self._CAPS:
            self.spent[field] += getattr(spend, unit) - earlier[unit]

    def summary(self) -> str:
        return ", ".join(f"{self.spent[field]:g} {unit}" + (f" of {self.caps[field]:g}" if self.caps[field] > 0 else "")
                         for field, _, unit in self._CAPS)


def run_problems(args: argparse.Namespace) -> int:
    """The `kernelbench run` command; returns the exit status (130 after Ctrl-C)."""
    import time

    from kernelsmith import cli

    ks = cli._core()
    cli._check_evolution_options(ks, args)
    sweep = SweepSpend(ks, args)  # the caps over all the problems (a bad one refused before anything starts)
    try:
        numbers = parse_problem_numbers(args.problems) if args.problems else None
        selection = select_problems(Path(args.tasks), args.level, numbers)
    except ValueError as error:
        raise ks.ValidationError(str(error)) from None
    seeds_dir = Path(args.seeds) if args.seeds else None
    baselines = parse_baselines(ks, args.baselines) if getattr(args, "baselines", None) else None
    if seeds_dir is not None and not seeds_dir.is_dir():
        raise ks.NotFoundError(f"--seeds {seeds_dir}: no such folder; give a folder holding <task name>/seed.cu, "
                               f"seed.cl or seed.py")
    backend = args.backend
    if args.language:
        backend = cli._backend_for_language(ks, args.language, args.backend)
    # The runs already in the store: read before anything starts (StoreError for a file that is not a store).
    stored: Dict[str, Any] = {}
    if os.path.exists(args.db) and os.path.getsize(args.db) > 0:
        for run in ks.RunStore(args.db, read_only=True).runs():
            if run.task_name not in stored or run.id > stored[run.task_name].id:
                stored[run.task_name] = run  # the latest run of each task: the one a resume continues
    mutator = cli._make_mutator(ks, args)  # before the evaluator: a missing LLM option fails at once
    evaluator = cli._create_evaluator(ks, args, backend)
    language = args.language or evaluator.backend_name()

    log = sys.stderr if args.json else sys.stdout
    restart = " (--restart: new runs)" if args.restart else ""
    print(f"kernelbench run: {len(selection.folders)} problem(s) from {args.tasks} in {language} on "
          f"{evaluator.backend_name()} '{evaluator.device_name()}' with the {mutator.name()} mutator: budget "
          f"{args.budget} evaluations per problem, store {args.db}{restart}", file=log, flush=True)
    if selection.not_found:
        print(f"  no problem folder numbered {', '.join(map(str, selection.not_found))}"
              + (f" at level {args.level}" if args.level is not None else ""), file=log, flush=True)
    if selection.not_problems:
        print(f"  left out {len(selection.not_problems)} task folder(s) not named kb_l<level>_<number>_...: "
              f"{', '.join(selection.not_problems)}", file=log, flush=True)

    skipped: List[Tuple[str, str]] = []
    interrupted = False
    for index, folder in enumerate(selection.folders):
        name = folder.name
        if interrupted:
            skipped.append((name, f"not started: interrupted ({_CONTINUE})"))
            continue
        if sweep.spent_reason():
            skipped.append((name, f"not started: {sweep.spent_reason()}"))
            continue
        previous = stored.get(name)
        if previous is not None and (previous.language, previous.backend) != (language, evaluator.backend_name()):
            # A run in another language or on another backend is other work: this one gets its own run.
            print(f"{name}: the store's run {previous.id} is in {previous.language} on {previous.backend}; a new run",
                  file=log, flush=True)
            previous = None
        if previous is not None and not args.restart and _finished(previous):
            print(f"{name}: already finished in the store (run {previous.id}, {previous.stop_reason}); skipped "
                  f"(--restart runs it again)", file=log, flush=True)
            continue
        try:
            task = ks.Task.load(str(folder))
        except ks.Error as error:
            skipped.append((name, f"cannot load the task: {error}"))
            print(f"{name}: skipped: cannot load the task: {error}", file=log, flush=True)
            continue
        if baselines is not None and task.oracle is not None:
            oracle = task.oracle
            oracle.baselines = baselines
            task.oracle = oracle
        seed_path = add_seed_from(ks, task, language, seeds_dir)
        # Without a seed, an LLM run starts from the problem's own Model written as a ModelNew (a cold start,
        # docs/kernelbench-modelnew.md); the parameter mutator has nothing to vary in it.
        if language not in task.seeds and args.mutator == "param":
            where = (f"; {seeds_dir}/{name}/ holds no seed file either" if seeds_dir
                     else " and no --seeds folder was given")
            why = "the parameter mutator varies a seed's @tune values (give --seeds DIR, or --mutator llm)"
            reason = f"no {language} seed: the task has none{where}; {why}"
            skipped.append((name, reason))
            print(f"{name}: skipped: {reason}", file=log, flush=True)
            continue
        resume = previous is not None and not args.restart
        earlier = sweep.earlier_spend(ks, args.db, previous if resume else None)
        evolution = ks.Evolution(task, evaluator, mutator,
                                 sweep.capped(cli._evolution_config(ks, args, resume), earlier))
        evolution.on_progress(cli._progress_printer(args, log, prefix=f"{name} "))
        how = "new run"
        if resume:
            how = f"resuming run {previous.id} ({previous.status}" + (
                f", {previous.stop_reason})" if previous.stop_reason else ")")
        print(f"{name} ({index + 1}/{len(selection.folders)}): {how}"
              + (f", seed from {seed_path}" if seed_path else ""), file=log, flush=True)
        started = time.monotonic()
        try:
            result, interrupted = cli._run_interruptibly(evolution, args.db, _CONTINUE)
        except ks.Error as error:
            # The engine marks its run failed with the error (the report shows it); with no run stored the problem
            # was not attempted.
            if evolution.run_id:
                print(f"{name}: run {evolution.run_id} failed: {error}", file=log, flush=True)
            else:
                skipped.append((name, f"the run could not start: {error}"))
                print(f"{name}: skipped: the run could not start: {error}", file=log, flush=True)
            continue
        sweep.add(earlier, result.llm_spend)
        best = cli._confirmed_best_text(cli._confirmed_best(args.db, result.run_id), separator="; ")
        print(f"{name}: {result.stop_reason} after {result.evaluations} evaluations in "
              f"{time.monotonic() - started:.1f} s, {best} (run {result.run_id})", file=log, flush=True)

    if sweep.capping():
        print(f"kernelbench run: the sweep spent {sweep.summary()}", file=log, flush=True)
    # No store when every problem was skipped before its run began: the report then lists why.
    report = build_report([args.db], only=[folder.name for folder in selection.folders], skipped=skipped,
                          missing_ok=True)
    if args.json:
        print(format_json(report))
    else:
        print()
        print(format_report(report))
    if interrupted:
        return 130
    return 0 if report.problems else 1
