"""Notebook helpers: run an evolution with a progress bar, read its run store while it runs, plot it,
and show evaluations and candidates as HTML.

Only the standard library is needed at import time. tqdm (progress bars), pandas (DataFrames) and
matplotlib (plots) are optional: ``pip install kernelsmith[notebook]``. Without pandas the tables
are lists of dicts; without tqdm the run has no bar; the plots need matplotlib.
"""

from __future__ import annotations

import html
import json
import math
import os
import re
import sqlite3
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Union

from kernelsmith import _core as core
from kernelsmith import _inputs
from kernelsmith.replay import ArchiveReplay, ProgressReplay, program_from_row
from kernelsmith.store import ConfirmedBest, RunStoreReader

__all__ = ["Run", "evolve", "evaluation_html", "candidate_html"]


# --------------------------------------------------------------------------------------------------
# evolve


def _as_task(task: Union["core.Task", str, os.PathLike]) -> "core.Task":
    if isinstance(task, core.Task):
        return task
    return core.Task.load(str(task))


def _default_db(task_name: str) -> str:
    folder = Path(tempfile.gettempdir()) / "kernelsmith-runs"
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return str(folder / f"{task_name}-{stamp}-{os.getpid()}.db")


def _config(budget: int, db: str, fields: Dict[str, Any]) -> "core.EvolutionConfig":
    config = core.EvolutionConfig()
    config.budget = budget
    config.db_path = db
    return _with_fields(config, fields)


def _with_fields(config: "core.EvolutionConfig", fields: Dict[str, Any]) -> "core.EvolutionConfig":
    for name, value in fields.items():
        if name.startswith("_") or not hasattr(config, name):
            known = sorted(n for n in dir(config) if not n.startswith("_") and not callable(getattr(config, n)))
            raise TypeError(f"evolve(): EvolutionConfig has no field '{name}'; the fields are: {', '.join(known)}")
        setattr(config, name, value)
    config.validate()
    return config


class _ProgressBar:
    """A tqdm.auto bar fed by the engine's progress callback; a no-op when tqdm is missing. Its best is the best
    confirmed speedup, read back from the run store (kernelsmith.store.ConfirmedBest), not the engine's."""

    def __init__(self, enabled: bool, total: int, description: str, db_path: str = ""):
        self.bar = None
        self.best = ConfirmedBest(db_path) if db_path else None
        if not enabled:
            return
        try:
            from tqdm.auto import tqdm
        except ImportError:
            print("kernelsmith: no progress bar (tqdm is not installed: pip install tqdm)")
            return
        self.bar = tqdm(total=total, desc=description, unit="eval")

    def update(self, progress: "core.Progress") -> None:
        if self.bar is None:
            return
        self.bar.n = min(progress.evaluations, self.bar.total or progress.evaluations)
        status = str(progress.status).split(".")[-1]
        if self.best is not None and progress.program_id:
            self.best.observe(progress.run_id, progress.program_id, status)
        best = self.best.text() if self.best is not None else "best: none confirmed"
        self.bar.set_postfix_str(f"{best}, last {status}", refresh=False)
        self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def evolve(
    task: Union["core.Task", str, os.PathLike, None] = None,
    backend: Optional[str] = None,
    budget: Optional[int] = None,
    db: Optional[Union[str, os.PathLike]] = None,
    progress: bool = True,
    mutator: Optional["core.Mutator"] = None,
    evaluator: Optional["core.Evaluator"] = None,
    evaluator_options: Optional["core.EvaluatorOptions"] = None,
    background: bool = False,
    llm: Any = None,
    config: Union[Mapping[str, Any], str, os.PathLike, None] = None,
    **fields: Any,
) -> "Run":
    """Evolves `task` (a Task, a built-in task's name or a task folder) and returns its `Run`.

    backend: 'auto' (the best available), 'cuda' or 'opencl', for the built-in evaluator (made with
    `evaluator_options` when given); ignored when `evaluator` is given. budget: evaluations, the
    reference and the seeds included. db: the run store (SQLite); by default a new file in the
    temporary folder. mutator: default ParamMutator() (no LLM needed). llm: a model to mutate with, as
    a plain function (prompt -> text, or messages -> text) or a kernelsmith.LlmClient: the run then uses
    LlmMutator(llm) (docs/llm.md); a function given as `mutator` is taken the same way. Further keywords set
    EvolutionConfig fields (islands=2, seed=7, ...).

    config: a run file (a path to .toml or .yaml) or the same keys as a mapping, describing the run as
    `kernelsmith evolve --config` takes it (docs/cli.md#run-files): task, backend, mutator, model, budgets, ...
    (the defaults of `kernelsmith evolve` fill in the rest; its db is kernelsmith-run.db). `task`, `backend`,
    `budget` and `db` given beside it override its keys; change others in the mapping
    (config={**load_run_file(path), "islands": 4}). The run is built as the command builds it, so mutator=, llm=,
    evaluator= and evaluator_options= are refused beside it; its settings are stored with the run, and
    `kernelsmith report --config` prints them back.

    With background=False (default) the call returns when the run ends; an interrupt (the notebook's
    stop button) stops the run cleanly and the store keeps every finished evaluation. With
    background=True it returns at once: the Run reads the store while the engine writes, and
    `run.wait()` / `run.stop()` end it.
    """
    if config is not None:
        return _evolve_run_file(config, task, backend, budget, db, progress, background, fields,
                                dict(mutator=mutator, llm=llm, evaluator=evaluator, evaluator_options=evaluator_options))
    if task is None:
        raise TypeError("evolve(): give a task (a Task, a built-in task's name or a task folder), or config= naming one")
    backend = backend or "auto"
    budget = 30 if budget is None else budget
    task = _as_task(task)
    db_path = str(db) if db is not None else _default_db(task.name)
    evolution_config = _config(budget, db_path, fields)
    if evaluator is None:
        if evaluator_options is None:
            evaluator_options = core.EvaluatorOptions(backend=backend)
        elif backend != "auto":
            evaluator_options.backend = backend
        evaluator = core.create_evaluator(evaluator_options)
    mutator = _mutator_of(mutator, llm)
    evolution = core.Evolution(task, evaluator, mutator, evolution_config)

    return _started(evolution, task.name, budget, db_path, progress, background)


def _started(evolution: "core.Evolution", task_name: str, budget: int, db_path: str, progress: bool,
             background: bool, feedback: Any = None) -> "Run":
    bar = _ProgressBar(progress, budget, task_name, db_path)

    def on_progress(report: "core.Progress") -> None:
        if feedback is not None:  # an ensemble of models learns from each step's outcome
            feedback(report)
        bar.update(report)

    evolution.on_progress(on_progress)
    run = Run(db_path)
    run._start(evolution, bar)
    if not background:
        run.wait()
    return run


def _evolve_run_file(config: Any, task: Any, backend: Optional[str], budget: Optional[int], db: Any, progress: bool,
                     background: bool, fields: Dict[str, Any], objects: Dict[str, Any]) -> "Run":
    """evolve(config=...): the run a run file describes, built by the code of `kernelsmith evolve --config`."""
    from kernelsmith import cli, run_file

    given = [name for name, value in objects.items() if value is not None]
    if given:
        raise ValueError(f"evolve(): config= describes the whole run, its mutator and evaluator included; drop "
                         f"{', '.join(given)}= (for a model, write mutator = \"llm\", llm_url and model in the run file), "
                         "or leave config= out")
    if task is not None and not isinstance(task, (str, os.PathLike)):
        raise TypeError("evolve(config=...): give task as a built-in task's name or a task folder (the run file "
                        f"records it), not a {type(task).__qualname__}")
    if isinstance(config, (str, os.PathLike)):
        settings = run_file.load_run_file(config)
    else:
        settings = run_file.check_settings(config, "evolve(config=...)")
    overrides = {"task": task, "backend": backend, "budget": budget, "db": db}
    settings.update({key: os.fspath(value) if isinstance(value, os.PathLike) else value
                     for key, value in overrides.items() if value is not None})
    args = run_file.namespace_of(run_file.check_settings(settings, "evolve(config=...)"))
    args.resume = bool(fields.pop("resume", False))
    task_object, evaluator, mutator, evolution_config, _ = cli.prepare_evolution(args)
    _with_fields(evolution_config, fields)
    evolution = core.Evolution(task_object, evaluator, mutator, evolution_config)
    return _started(evolution, task_object.name, args.budget, args.db, progress, background,
                    getattr(args, "llm_feedback", None))


def _mutator_of(mutator: Any, llm: Any) -> "core.Mutator":
    """The Mutator evolve() runs with: `mutator` as it is, an LlmMutator over `llm` (or over a function given as
    `mutator`), else the ParamMutator."""
    if llm is not None:
        if mutator is not None:
            raise ValueError("evolve: give either mutator= or llm= (llm=fn runs LlmMutator(fn)), not both")
        return core.LlmMutator(llm)
    if mutator is None:
        return core.ParamMutator()
    if isinstance(mutator, core.Mutator):
        return mutator
    if callable(mutator):
        return core.LlmMutator(mutator)
    raise TypeError(f"evolve: mutator must be a kernelsmith.Mutator (ParamMutator, LlmMutator, a Python subclass) or "
                    f"a model function (prompt -> text, or messages -> text); got {type(mutator).__qualname__}")


# --------------------------------------------------------------------------------------------------
# Run


def _table(rows: List[Dict[str, Any]]):
    try:
        import pandas
    except ImportError:
        return rows
    return pandas.DataFrame(rows)


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise ImportError("kernelsmith plots need matplotlib: pip install matplotlib") from error
    return plt


class Run:
    """One evolution run in a run store, read through kernelsmith.store (read-only; safe while the engine
    writes).

    `Run.open(path)` opens the latest run of a store; `evolve()` returns a Run that also holds the
    engine (`wait()`, `stop()`, `result`).
    """

    def __init__(self, db_path: Union[str, os.PathLike], run_id: Optional[int] = None):
        self.db_path = str(db_path)
        self._reader = RunStoreReader(self.db_path)
        self._run_id = run_id
        self._evolution = None
        self._thread: Optional[threading.Thread] = None
        self._bar: Optional[_ProgressBar] = None
        self._error: Optional[BaseException] = None
        self.result: Optional["core.EvolutionResult"] = None

    @classmethod
    def open(cls, db_path: Union[str, os.PathLike], run_id: Optional[int] = None) -> "Run":
        """The run `run_id` of the store at db_path, or its latest run."""
        if not Path(db_path).is_file():
            raise FileNotFoundError(f"Run.open: no run store at '{db_path}' (evolve(..., db=PATH) writes one)")
        run = cls(db_path, run_id)
        run.run_id  # fails now, with the reason, when the store holds no such run
        return run

    # -- the engine -----------------------------------------------------------------------------

    def _start(self, evolution: "core.Evolution", bar: _ProgressBar) -> None:
        self._evolution = evolution
        self._bar = bar

        self._done = threading.Event()

        def target() -> None:
            try:
                self.result = evolution.run()
                self._run_id = self.result.run_id
            except BaseException as error:  # handed to wait(), which raises it in the caller's thread
                self._error = error
            finally:
                self._done.set()

        self._thread = threading.Thread(target=target, name="kernelsmith-evolution", daemon=True)
        self._thread.start()

    @property
    def running(self) -> bool:
        """True while the engine this Run started is still running (False for a Run opened on a store)."""
        return self._thread is not None and not self._done.is_set()

    def stop(self) -> None:
        """Asks the engine to stop and waits for it: an evaluation in progress finishes, mutator calls in
        flight (LLM requests) are cancelled, and the run ends within a few seconds, marked stopped."""
        if self._evolution is not None:
            self._evolution.stop()
        self.wait()

    def wait(self) -> "Run":
        """Waits for the run to end; an interrupt stops it cleanly first. Raises what the run raised."""
        if self._thread is None:
            return self
        # An Event, not Thread.join: a join interrupted by KeyboardInterrupt can leave the thread
        # looking finished while it still runs (CPython gh-90882).
        try:
            while not self._done.wait(0.1):
                pass
        except KeyboardInterrupt:
            self._evolution.stop()
            while not self._done.wait(0.1):
                pass
            print("kernelsmith: interrupted; the run stopped cleanly and its store is complete")
        finally:
            if self._bar is not None:
                self._bar.close()
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        return self

    # -- reading the store ----------------------------------------------------------------------

    def _store(self) -> RunStoreReader:
        if not Path(self.db_path).is_file():
            raise FileNotFoundError(f"Run: the run store '{self.db_path}' does not exist (yet)")
        return self._reader

    @property
    def run_id(self) -> int:
        """The run's id in the store: the engine's run, or the store's latest when none was named. Raises LookupError
        when the store holds no run yet."""
        if self._run_id is None:
            if self._evolution is not None and self._evolution.run_id:
                self._run_id = self._evolution.run_id
            else:
                try:
                    latest = self._store().latest_run_id()
                except (core.StoreError, sqlite3.OperationalError) as error:  # a store being created, or another file
                    raise LookupError(f"Run: '{self.db_path}' holds no kernelsmith run yet ({error})") from error
                if latest is None:
                    raise LookupError(f"Run: the store '{self.db_path}' holds no run yet")
                self._run_id = latest
        return self._run_id

    def info(self) -> Dict[str, Any]:
        """The run's row: task, backend, device, mutator, status, stop reason, and its config (a dict)."""
        info = self._store().run_row(self.run_id)
        if info is None:
            raise LookupError(f"Run: the store '{self.db_path}' has no run {self.run_id}")
        info["config"] = _inputs.loads(info["config"], f"'{self.db_path}': run {self.run_id}: its config")
        info.pop("task", None)
        return info

    # The columns of programs() and records(), in order.
    _PROGRAM_COLUMNS = ("sequence", "id", "island", "generation", "origin", "parent_ids", "status", "fitness", "speedup",
                        "message", "wall_seconds")

    def _program_rows(self) -> List[Dict[str, Any]]:
        return [{name: program[name] for name in self._PROGRAM_COLUMNS}
                for program in self._store().evaluated_programs(self.run_id)]

    def records(self) -> List[Dict[str, Any]]:
        """programs() as a list of dicts, with or without pandas."""
        return self._program_rows()

    def programs(self):
        """Every evaluated program in evaluation order: id, island, generation, origin, parents,
        status, fitness, speedup, message. A pandas DataFrame, or a list of dicts without pandas."""
        return _table(self._program_rows())

    def evaluation_count(self) -> int:
        """Number of evaluations stored for the run so far."""
        return self._store().evaluation_count(self.run_id)

    def program(self, program_id: str) -> "core.Program":
        """One stored program with its candidate and full Evaluation."""
        rows = self._store().evaluated_programs(self.run_id, program_id=program_id)
        if not rows:
            raise LookupError(f"Run: run {self.run_id} in '{self.db_path}' has no evaluated program '{program_id}'")
        return program_from_row(rows[0])

    def best(self) -> Optional["core.Program"]:
        """The fittest confirmed program so far (the earlier one on ties), or None: status ok, measured in strict
        mode, no doubt-casting flag (kernelsmith.store.unconfirmed_reasons; docs/evaluation.md#confirmed-evaluations).
        The faster correct ones that are not confirmed are in unconfirmed()."""
        rows = self._store().evaluated_programs(self.run_id, confirmed_only=True, best_first=True, limit=1)
        return program_from_row(rows[0]) if rows else None

    def unconfirmed(self, limit: int = 5) -> List[Dict[str, Any]]:
        """The correct programs faster than the best confirmed one that are not confirmed, fastest first (at most
        `limit`): program_id, sequence, speedup, fitness, mode, flags and reasons (why not confirmed). Never counted
        as the best."""
        best = self.best()
        return self._store().unconfirmed_above(self.run_id, best.evaluation.speedup if best else 0.0, limit)

    def _history_rows(self) -> List[Dict[str, Any]]:
        """The rows of speedup_history(), each with `_island_bests`: the best so far on every island the program
        stands on (all of them for the reference and the seeds)."""
        replay = ProgressReplay(int(self.info()["config"].get("islands", 1)))
        history = []
        for row in self._store().progress_rows(self.run_id):
            point = replay.add(row)
            history.append(
                {
                    "sequence": point.sequence,
                    "program_id": point.program_id,
                    "island": point.island,
                    "status": point.status,
                    "speedup": point.speedup,
                    "confirmed": point.confirmed,
                    "best_speedup": point.best_speedup,
                    "island_best_speedup": point.island_best_speedup,
                    "_island_bests": {island: replay.island_best_speedup.get(island, 0.0) for island in point.islands},
                }
            )
        return history

    def speedup_history(self):
        """Per evaluation: sequence, island, status, speedup (NaN when incorrect), whether it is confirmed, and the
        best confirmed speedup so far overall and on its island (an evaluation that is not confirmed never raises
        them). A DataFrame, or a list of dicts without pandas."""
        return _table([{key: value for key, value in row.items() if not key.startswith("_")}
                       for row in self._history_rows()])

    # -- plots ----------------------------------------------------------------------------------

    def plot_progress(self, ax=None):
        """Best confirmed speedup so far over evaluations (numbered from 1, as `kernelsmith report` numbers them), one
        line per island (each starting from the reference, which stands on every island) and one for the whole run;
        correct evaluations that are not confirmed are drawn apart (hollow) and raise no line."""
        plt = _pyplot()
        if ax is None:
            _, ax = plt.subplots(figsize=(7, 4))
        history = self._history_rows()
        islands = sorted({island for point in history for island in point["_island_bests"]})
        for island in islands:
            points = [p for p in history if island in p["_island_bests"]]
            ax.step([p["sequence"] + 1 for p in points], [p["_island_bests"][island] for p in points], where="post",
                    label=f"island {island}", alpha=0.8)
        ax.step([p["sequence"] + 1 for p in history], [p["best_speedup"] for p in history], where="post",
                color="black", linewidth=2, label="best")
        correct = [p for p in history if not math.isnan(p["speedup"]) and p["confirmed"]]
        ax.scatter([p["sequence"] + 1 for p in correct], [p["speedup"] for p in correct], s=10, color="grey",
                   alpha=0.6, label="confirmed evaluation")
        doubted = [p for p in history if not math.isnan(p["speedup"]) and not p["confirmed"]]
        if doubted:
            ax.scatter([p["sequence"] + 1 for p in doubted], [p["speedup"] for p in doubted], s=14, facecolors="none",
                       edgecolors="tab:orange", alpha=0.8, label="not confirmed (not counted)")
        ax.axhline(1.0, color="red", linestyle=":", linewidth=1)
        _whole_number_ticks(ax, [p["sequence"] + 1 for p in history])
        ax.set_xlabel("evaluation")
        ax.set_ylabel("speedup over the reference")
        ax.set_title(f"run {self.run_id}: best confirmed {max([p['best_speedup'] for p in history], default=0):.3g}x")
        ax.legend(loc="best", fontsize="small")
        return ax

    def _rebuilt_archive(self) -> ArchiveReplay:
        """The run's MAP-Elites grid, rebuilt as the engine rebuilds it on resume (kernelsmith.replay)."""
        replay = ArchiveReplay(json.dumps(self.info()["config"]))
        replay.update(self._store(), self.run_id)
        return replay

    def archive_cells(self) -> List[Dict[str, Any]]:
        """The occupied cells of the rebuilt grid: island, bins (one per feature), program, fitness."""
        return [{"island": cell.island, "bins": cell.bins, "program_id": cell.program_id, "fitness": cell.fitness,
                 "speedup": cell.speedup} for cell in self._rebuilt_archive().cells()]

    def plot_archive(self, ax=None, x: int = 0, y: Optional[int] = None):
        """The archive grid over features x and y (indices into the run's feature descriptors; default
        the first and the last: complexity and log_speedup): each cell's best fitness over the other
        features and the islands; empty cells are blank."""
        plt = _pyplot()
        replay = self._rebuilt_archive()
        features = replay.features
        if y is None:
            y = len(features) - 1
        replay.check_axes(x, y, "plot_archive")
        cells, occupied = replay.grid(x, y)
        grid = [[float("nan") if cell is None else cell.fitness for cell in row] for row in cells]
        if ax is None:
            _, ax = plt.subplots(figsize=(6, 4.5))
        image = ax.imshow(grid, origin="lower", cmap="viridis", aspect="auto",
                          extent=(features[x].min, features[x].max, features[y].min, features[y].max))
        plt.colorbar(image, ax=ax, label="best fitness")
        ax.set_xlabel(features[x].name)
        ax.set_ylabel(features[y].name)
        ax.set_title(f"archive: {occupied} occupied cell(s) over {replay.config.islands} island(s)")
        return ax

    def lineage(self, program_id: Optional[str] = None) -> List[Dict[str, Any]]:
        """The ancestors of a program (default: the best), itself included, oldest first."""
        if program_id is None:
            best = self.best()
            if best is None:
                raise LookupError(f"Run: run {self.run_id} has no correct program yet")
            program_id = best.id
        by_id = {program["id"]: program for program in self._program_rows()}
        if program_id not in by_id:
            raise LookupError(f"Run: run {self.run_id} has no evaluated program '{program_id}'")
        seen, order, stack = set(), [], [program_id]
        while stack:
            current = stack.pop()
            if current in seen or current not in by_id:
                continue
            seen.add(current)
            order.append(by_id[current])
            stack.extend(by_id[current]["parent_ids"])
        return sorted(order, key=lambda program: program["sequence"])

    def plot_lineage(self, program_id: Optional[str] = None, ax=None):
        """The lineage of a program (default: the best) as a tree: generation across, speedup up, an
        arrow from each parent to its child, labelled with how the child was made."""
        plt = _pyplot()
        nodes = self.lineage(program_id)
        by_id = {node["id"]: node for node in nodes}
        if ax is None:
            _, ax = plt.subplots(figsize=(7, 4))

        def height(node):
            return node["speedup"] if node["status"] == "ok" else 0.0

        for node in nodes:
            for parent_id in node["parent_ids"]:
                parent = by_id.get(parent_id)
                if parent is not None:
                    ax.annotate("", xy=(node["generation"], height(node)),
                                xytext=(parent["generation"], height(parent)),
                                arrowprops={"arrowstyle": "->", "color": "grey"})
        colors = ["tab:green" if node["status"] == "ok" else "tab:red" for node in nodes]
        ax.scatter([n["generation"] for n in nodes], [height(n) for n in nodes], c=colors, zorder=3)
        for node in nodes:
            ax.annotate(f"{node['origin']} {node['id'][:6]}", (node["generation"], height(node)),
                        textcoords="offset points", xytext=(4, 4), fontsize="x-small")
        _whole_number_ticks(ax, [n["generation"] for n in nodes])
        ax.set_xlabel("generation")
        ax.set_ylabel("speedup (0: incorrect)")
        ax.set_title(f"lineage of {nodes[-1]['id']}")
        return ax

    # -- display --------------------------------------------------------------------------------

    def __repr__(self) -> str:
        state = "running" if self.running else "idle"
        return f"<Run {self._run_id if self._run_id is not None else '?'} of '{self.db_path}' ({state})>"

    def _repr_html_(self) -> str:
        try:
            info = self.info()
            count = self.evaluation_count()
            best = self.best()
            unconfirmed = self.unconfirmed(1)
        except (LookupError, FileNotFoundError, sqlite3.Error, core.StoreError) as error:
            return f"<p>Run of <code>{html.escape(self.db_path)}</code>: {html.escape(str(error))}</p>"
        rows = [
            ("task", info["task_name"]),
            ("status", info["status"] + (f" ({info['stop_reason']})" if info["stop_reason"] else "")),
            ("backend", f"{info['backend']} / {info['device']}"),
            ("mutator", info["mutator"]),
            ("evaluations", str(count)),
            ("best confirmed", f"{best.evaluation.speedup:.3g}x ({best.id})" if best else "none confirmed yet"),
        ]
        if unconfirmed:
            rows.append(("not confirmed (not counted)", f"{unconfirmed[0]['speedup']:.3g}x "
                                                        f"({unconfirmed[0]['program_id']}: "
                                                        f"{', '.join(unconfirmed[0]['reasons'])})"))
        rows.append(("store", self.db_path))
        return _html_table(f"Run {self.run_id}", rows)


# --------------------------------------------------------------------------------------------------
# HTML


_STATUS_COLORS = {"ok": "#1a7f37"}


def _html_table(title: str, rows) -> str:
    body = "".join(
        f"<tr><th style='text-align:left;padding-right:1em'>{html.escape(name)}</th>"
        f"<td style='text-align:left'>{value if is_html else html.escape(value)}</td></tr>"
        for name, value, is_html in ((row[0], row[1], len(row) > 2 and row[2]) for row in rows)
    )
    return f"<div><b>{html.escape(title)}</b><table>{body}</table></div>"


def _first_failure(evaluation: "core.Evaluation") -> Optional[str]:
    status = str(evaluation.status).split(".")[-1]
    if status == "ok":
        return None
    if status == "compile_error" and evaluation.compile is not None and evaluation.compile.log:
        lines = [line for line in evaluation.compile.log.splitlines() if line.strip()]
        errors = [line for line in lines if "error" in line.lower()]
        return (errors or lines)[0]
    if evaluation.correctness is not None:
        for check in evaluation.correctness.checks:
            if not check.passed:
                return f"{check.sizes} / {check.inputs}: {check.message}"
        if evaluation.correctness.message:
            return evaluation.correctness.message
    return evaluation.message or None


def evaluation_html(evaluation: "core.Evaluation") -> str:
    """An Evaluation as an HTML table: status, timing with noise, baseline, speedup, speed of light and
    the first failure."""
    status = str(evaluation.status).split(".")[-1]
    color = _STATUS_COLORS.get(status, "#cf222e")
    rows = [
        ("status", f"<span style='color:{color};font-weight:bold'>{html.escape(status)}</span> "
                   f"{html.escape(evaluation.message)}", True),
        ("device", f"{evaluation.backend} / {evaluation.device}"),
    ]
    timing = evaluation.timing
    if timing is not None:
        rows.append(("time", f"{timing.median_ms:.4g} ms median ± {timing.noise * 100:.1f}% "
                             f"({timing.samples} samples, {timing.mode})"))
    if evaluation.baseline_timing is not None:
        rows.append(("reference", f"{evaluation.baseline_timing.median_ms:.4g} ms median"))
    if status == "ok":
        rows.append(("speedup", f"<b>{evaluation.speedup:.3g}x</b>", True))
    sol = evaluation.sol
    if sol is not None and sol.fraction > 0:
        rows.append(("speed of light", f"{sol.fraction * 100:.1f}% of the device's limit "
                                       f"({sol.achieved_gbps:.3g} GB/s, {sol.achieved_gflops:.3g} GFLOP/s)"))
    failure = _first_failure(evaluation)
    if failure:
        rows.append(("first failure", f"<code>{html.escape(failure)}</code>", True))
    if evaluation.integrity is not None and evaluation.integrity.flags:
        rows.append(("flags", ", ".join(evaluation.integrity.flags)))
    rows.append(("fitness", f"{evaluation.fitness:.4g}"))
    title = f"Evaluation of {evaluation.candidate_id}" if evaluation.candidate_id else "Evaluation"
    if evaluation.task:
        title += f" ({evaluation.task})"
    return _html_table(title, rows)


_PLAN_LINE = re.compile(r"^\s*///?\s*@(launch|workspace|specialize|tune|require)\b")


def candidate_html(candidate: "core.Candidate") -> str:
    """A Candidate's source as an escaped <pre>, its launch-plan lines (@launch, @tune, ...) highlighted."""
    lines = []
    for line in candidate.source.splitlines():
        escaped = html.escape(line)
        if _PLAN_LINE.match(line):
            escaped = f"<span style='background:#fff3b0;color:#5a3e00;font-weight:bold'>{escaped}</span>"
        lines.append(escaped)
    origin = candidate.lineage.origin
    header = f"Candidate {candidate.id()} ({html.escape(candidate.language)}"
    header += f", {html.escape(origin)})" if origin else ")"
    return (f"<div><b>{header}</b><pre style='line-height:1.25;padding:0.5em;border:1px solid #ddd'>"
            + "\n".join(lines) + "</pre></div>")


def _whole_number_ticks(ax, values) -> None:
    """Ticks at whole numbers only on the x axis of a plot of counted things (generations, evaluations): a tick
    at generation 0.5 means nothing. matplotlib's integer locator falls back to fractions where it finds fewer
    than min_n_ticks whole numbers in view (every point at one generation): one is enough, in a view widened to
    at least one unit."""
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    if values and max(values) - min(values) < 1:
        ax.set_xlim(min(values) - 0.5, max(values) + 0.5)
