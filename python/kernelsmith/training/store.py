"""Reading run stores for training data, with the standard library's sqlite3.

A run store is the SQLite file the search writes (docs/run-store.md): tables ``runs``, ``programs``,
``evaluations``, ``steps``, ``islands``, ``migrations`` and ``schema_version``. This module opens it
read-only (a run may be writing it at the same time: the file is in WAL mode, so committed rows are
visible) and turns each run into plain Python objects: programs, evaluation summaries and steps, each
step joined with its parent's and its child's outcome.
"""

from __future__ import annotations

import json
import math
import os
import re
import sqlite3
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Sequence

#: Schema versions of docs/run-store.md this reader understands.
SUPPORTED_SCHEMA_VERSIONS = (1,)

#: Lineage origins of the programs a run starts from (no mutation made them).
INITIAL_ORIGINS = frozenset({"reference", "seed"})

_DUPLICATE_FAILURE = re.compile(r"^duplicate of program ([0-9A-Za-z_-]+)")


def _store_error(message: str) -> Exception:
    # kernelsmith.StoreError when the compiled core imports; a plain RuntimeError keeps this module
    # usable for reading stores on a machine whose core is broken.
    try:
        from kernelsmith import StoreError

        return StoreError(message)
    except ImportError:  # pragma: no cover - only without the compiled core
        return RuntimeError(message)


def _number(value: Any) -> Optional[float]:
    """A float from a column or a JSON field ("nan"/"inf" strings and NULL included); None when absent."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None
    try:
        result = float(value)
    except (TypeError, ValueError):
        return None
    return result


def _json_list(text: Optional[str], where: str) -> List[str]:
    if not text:
        return []
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise _store_error(f"{where} holds {text[:80]!r}, not a JSON array: {error}") from None
    if not isinstance(value, list):
        raise _store_error(f"{where} holds {text[:80]!r}, not a JSON array")
    return [str(item) for item in value]


@dataclass
class Program:
    """One row of ``programs``: a program's code and lineage."""

    id: str
    language: str
    source: str
    normalized_hash: str
    parent_ids: List[str]
    origin: str
    island: int
    generation: int

    @property
    def is_initial(self) -> bool:
        """True for the run's reference and seed (what the first mutation steps start from)."""
        return self.origin in INITIAL_ORIGINS


@dataclass
class EvaluationSummary:
    """The parts of an evaluation that training needs; ``data`` is the whole stored JSON document."""

    id: int
    program_id: str
    sequence: int
    status: str
    speedup: float
    fitness: float
    message: str
    backend: str
    device: str
    data: Dict[str, Any] = field(repr=False, default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when the evaluation's status is 'ok' (compiled, correct, timed)."""
        return self.status == "ok"

    @property
    def compiled(self) -> bool:
        """True when the program compiled (the compile report's ok, else any status but compile_error)."""
        compile_report = self.data.get("compile") or {}
        if "ok" in compile_report:
            return bool(compile_report["ok"])
        return self.status != "compile_error"

    @property
    def flags(self) -> List[str]:
        """The integrity flags raised on the evaluation, e.g. 'nondeterministic'."""
        return list((self.data.get("integrity") or {}).get("flags") or [])

    @property
    def sol_fraction(self) -> Optional[float]:
        """How close the program is to the hardware's limit: the larger of its bandwidth and compute
        fractions of the speed of light (0..1); None when not computed."""
        sol = self.data.get("sol") or {}
        fraction = _number(sol.get("fraction"))
        return fraction if fraction is not None and fraction > 0 else None

    @property
    def median_ms(self) -> Optional[float]:
        """Median kernel time in milliseconds, or None when not timed."""
        timing = self.data.get("timing") or {}
        return _number(timing.get("median_ms"))

    @property
    def noise(self) -> Optional[float]:
        """Relative noise of the timing samples, or None when not timed."""
        timing = self.data.get("timing") or {}
        return _number(timing.get("noise"))


@dataclass
class Step:
    """One row of ``steps``: a proposal from parent(s) and what became of it."""

    id: int
    island: int
    parent_ids: List[str]
    selection: str
    mutation: str
    inspiration_ids: List[str]
    prompt: str
    response: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    child_id: str
    evaluation_id: Optional[int]
    failure: str

    @property
    def is_seed(self) -> bool:
        """The run's reference or seed entering the population (no parent, no prompt)."""
        return self.selection == "seed" or not self.parent_ids

    @property
    def pending(self) -> bool:
        """True when the step has a child with neither an evaluation nor a failure (the run stopped before evaluating
        it)."""
        return bool(self.child_id) and self.evaluation_id is None and not self.failure

    @property
    def duplicate_of(self) -> Optional[str]:
        """The program this proposal's code equals (the engine rejected it as an exact duplicate)."""
        match = _DUPLICATE_FAILURE.match(self.failure or "")
        return match.group(1) if match else None

    def messages(self) -> List[Dict[str, str]]:
        """The exact chat messages the mutator sent (``steps.prompt``); [] for a step without a prompt.

        Raises StoreError when the prompt is not a JSON array of {role, content} objects."""
        if not self.prompt:
            return []
        try:
            value = json.loads(self.prompt)
        except json.JSONDecodeError as error:
            raise _store_error(
                f"step {self.id}: steps.prompt is not a JSON array of chat messages ({error}); "
                "was it written by a custom mutator that records plain text?"
            ) from None
        if not isinstance(value, list) or not all(
            isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
            for m in value
        ):
            raise _store_error(
                f"step {self.id}: steps.prompt must be a JSON array of {{\"role\", \"content\"}} objects"
            )
        return [{"role": m["role"], "content": m["content"]} for m in value]


@dataclass
class Run:
    """One run of a store with everything training reads from it."""

    store: str
    id: int
    task_name: str
    task_json: str
    config_json: str
    language: str
    backend: str
    device: str
    mutator: str
    status: str
    programs: Dict[str, Program]
    evaluations: Dict[str, EvaluationSummary]  # by program id
    steps: List[Step]

    @property
    def key(self) -> str:
        """Names the run across stores: "<store path>#<run id>"."""
        return f"{self.store}#{self.id}"

    def evaluation(self, program_id: str) -> Optional[EvaluationSummary]:
        """The EvaluationSummary of a program, or None when it is not evaluated."""
        return self.evaluations.get(program_id)

    def best_speedup(self) -> float:
        """The best speedup over the baseline of the run's correct programs; 0.0 when none."""
        speedups = [e.speedup for e in self.evaluations.values() if e.ok and e.speedup > 0]
        return max(speedups, default=0.0)


def connect_read_only(path: str) -> sqlite3.Connection:
    """A read-only connection to a run store; raises StoreError when the file is missing or not a store."""
    if not os.path.exists(path):
        raise _store_error(f"run store '{path}' does not exist: give the --db path of a run's SQLite file")
    uri = "file:" + os.path.abspath(path).replace("?", "%3f").replace("#", "%23") + "?mode=ro"
    try:
        connection = sqlite3.connect(uri, uri=True, timeout=30.0)
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as error:
        raise _store_error(f"'{path}' is not a readable SQLite database: {error}") from None
    if "schema_version" not in tables:
        connection.close()
        raise _store_error(f"'{path}' is a SQLite database but not a kernelsmith run store (no schema_version table)")
    version = connection.execute("SELECT max(version) FROM schema_version").fetchone()[0]
    if version not in SUPPORTED_SCHEMA_VERSIONS:
        connection.close()
        raise _store_error(
            f"run store '{path}' has schema version {version}; this exporter reads versions "
            f"{', '.join(map(str, SUPPORTED_SCHEMA_VERSIONS))}: use the kernelsmith version that wrote it"
        )
    missing = {"runs", "programs", "evaluations", "steps"} - tables
    if missing:
        connection.close()
        raise _store_error(f"run store '{path}' lacks the tables {sorted(missing)}: the file is damaged")
    return connection


def _read_run(connection: sqlite3.Connection, path: str, row: sqlite3.Row) -> Run:
    run_id = row["id"]
    programs: Dict[str, Program] = {}
    for p in connection.execute(
        "SELECT id, language, source, normalized_hash, parent_ids, origin, island, generation "
        "FROM programs WHERE run = ? ORDER BY created, rowid",
        (run_id,),
    ):
        programs[p["id"]] = Program(
            id=p["id"],
            language=p["language"],
            source=p["source"],
            normalized_hash=p["normalized_hash"],
            parent_ids=_json_list(p["parent_ids"], f"{path}: programs.parent_ids of {p['id']}"),
            origin=p["origin"],
            island=int(p["island"]),
            generation=int(p["generation"]),
        )
    evaluations: Dict[str, EvaluationSummary] = {}
    for e in connection.execute(
        "SELECT id, program_id, sequence, status, fitness, speedup, message, backend, device, json "
        "FROM evaluations WHERE run = ? ORDER BY sequence",
        (run_id,),
    ):
        try:
            data = json.loads(e["json"]) if e["json"] else {}
        except json.JSONDecodeError:
            data = {}
        speedup = _number(e["speedup"])
        fitness = _number(e["fitness"])
        evaluations[e["program_id"]] = EvaluationSummary(
            id=int(e["id"]),
            program_id=e["program_id"],
            sequence=int(e["sequence"]),
            status=e["status"],
            speedup=speedup if speedup is not None and math.isfinite(speedup) else 0.0,
            fitness=fitness if fitness is not None and math.isfinite(fitness) else 0.0,
            message=e["message"] or "",
            backend=e["backend"] or "",
            device=e["device"] or "",
            data=data,
        )
    steps: List[Step] = []
    for s in connection.execute(
        "SELECT id, island, parent_ids, selection, mutation, inspiration_ids, prompt, response, model, "
        "prompt_tokens, completion_tokens, coalesce(child_id, '') AS child_id, evaluation_id, failure "
        "FROM steps WHERE run = ? ORDER BY id",
        (run_id,),
    ):
        steps.append(
            Step(
                id=int(s["id"]),
                island=int(s["island"]),
                parent_ids=_json_list(s["parent_ids"], f"{path}: steps.parent_ids of step {s['id']}"),
                selection=s["selection"],
                mutation=s["mutation"],
                inspiration_ids=_json_list(s["inspiration_ids"], f"{path}: steps.inspiration_ids of step {s['id']}"),
                prompt=s["prompt"] or "",
                response=s["response"] or "",
                model=s["model"] or "",
                prompt_tokens=int(s["prompt_tokens"] or 0),
                completion_tokens=int(s["completion_tokens"] or 0),
                child_id=s["child_id"] or "",
                evaluation_id=s["evaluation_id"],
                failure=s["failure"] or "",
            )
        )
    return Run(
        store=path,
        id=int(run_id),
        task_name=row["task_name"],
        task_json=row["task"],
        config_json=row["config"],
        language=row["language"] or "",
        backend=row["backend"] or "",
        device=row["device"] or "",
        mutator=row["mutator"] or "",
        status=row["status"],
        programs=programs,
        evaluations=evaluations,
        steps=steps,
    )


def read_runs(path: str, run_ids: Optional[Iterable[int]] = None) -> List[Run]:
    """The runs of one store (all of them, or those named), oldest first."""
    connection = connect_read_only(path)
    connection.row_factory = sqlite3.Row
    try:
        # One read transaction: a consistent snapshot while a run keeps writing.
        connection.execute("BEGIN")
        wanted = None if run_ids is None else {int(r) for r in run_ids}
        runs = []
        for row in connection.execute(
            "SELECT id, task_name, config, task, language, backend, device, mutator, status FROM runs ORDER BY id"
        ).fetchall():
            if wanted is not None and row["id"] not in wanted:
                continue
            runs.append(_read_run(connection, path, row))
        connection.execute("COMMIT")
    finally:
        connection.close()
    if wanted is not None:
        found = {r.id for r in runs}
        if wanted - found:
            raise _store_error(f"run store '{path}' has no run {sorted(wanted - found)}")
    return runs


def load_runs(paths: Sequence[str], run_ids: Optional[Iterable[int]] = None) -> List[Run]:
    """The runs of several stores, store by store. Raises StoreError naming the first bad path."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    if not paths:
        raise ValueError("no run store given: pass at least one path")
    runs: List[Run] = []
    seen = set()
    for path in paths:
        path = os.fspath(path)
        # The same file named twice is read once (its runs would otherwise count double).
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        runs.extend(read_runs(path, run_ids))
    return runs
