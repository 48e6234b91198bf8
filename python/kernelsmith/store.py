"""The run-store reader: the one place in the Python package that runs SQL on a run store.

A run store is the SQLite file the search writes (docs/run-store.md): tables ``runs``, ``programs``,
``evaluations``, ``steps``, ``llm_attempts``, ``islands``, ``migrations`` and ``schema_version``. This module opens it
read-only (a run may be writing it at the same time: the file is in WAL mode, so committed rows are
visible) for the notebook's :class:`kernelsmith.Run` and the training exporters alike:

- :func:`read_runs` / :func:`load_runs` turn whole runs into plain records (:class:`StoredRun` with its
  :class:`StoredProgram`, :class:`StoredEvaluation` and :class:`StoredStep` records);
- :func:`read_run_evaluations` gives each run's row with its evaluations only (:class:`RunEvaluations`), what a
  summary over many runs needs (``kernelsmith kernelbench report``);
- :class:`RunStoreReader` answers the notebook's narrower questions (the latest run, one run's row, its
  evaluated programs in order, the best one) with one short read each.

Schema versions 1 to 4 are read. Version 2 records on each step how the novelty filter judged the
proposal (``novelty_kind``) and which program it duplicates (``duplicate_of``); version 3 records each
HTTP attempt of a step's LLM request (table ``llm_attempts``) and the steps a deadline abandoned
(``abandoned_by``); version 4 the skill each step applied and the experience retrieved into it (``skill``,
``retrieved``), and what each step taught (table ``experience``, read by ``kernelsmith.RunStore.experience``). An older file is upgraded in place the first time the library opens it for writing
(``kernelsmith.RunStore(path)``, or any run or resume on it); read-only here, the two novelty facts of a
version-1 file's steps are derived by the library's own read-only ``RunStore`` from the old failure
messages, exactly as the upgrade would fill them, and an older file has no attempts and no abandoned steps.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
from collections import abc
from contextlib import closing
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, TypeVar

from kernelsmith import _core as core
from kernelsmith import _inputs

_T = TypeVar("_T")

#: Schema versions of docs/run-store.md this reader understands.
SUPPORTED_SCHEMA_VERSIONS = (1, 2, 3, 4)

#: Every origin the library writes (``programs.origin``, ``steps.mutation``): the C++ table
#: ``kernelsmith::kOrigins``. A mutator written in Python may name others.
ORIGINS: Tuple[str, ...] = tuple(core.ORIGINS)

#: Origins of the programs a run starts from (no mutation made them): the reference and the seed.
INITIAL_ORIGINS = frozenset(core.INITIAL_ORIGINS)

#: How the novelty filter can judge a proposal (``steps.novelty_kind``; NULL when it did not judge it).
NOVELTY_KINDS: Tuple[str, ...] = tuple(core.NoveltyVerdict.Kind.__members__)


def _store_error(message: str) -> core.StoreError:
    return core.StoreError(message)


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


def _finite_or_zero(value: Any) -> float:
    number = _number(value)
    return number if number is not None and math.isfinite(number) else 0.0


def _json_array(text: Optional[str], where: str) -> list:
    """A JSON array column; [] when NULL or empty. Raises StoreError naming `where` for anything else."""
    if not text:
        return []
    try:
        value = load_stored_json(text, where)
    except json.JSONDecodeError as error:
        raise _store_error(f"{where} holds {text[:80]!r}, not a JSON array: {error}") from None
    if not isinstance(value, list):
        raise _store_error(f"{where} holds {text[:80]!r}, not a JSON array")
    return value


def _json_list(text: Optional[str], where: str) -> List[str]:
    return [str(item) for item in _json_array(text, where)]


def load_stored_json(text: str, where: str) -> Any:
    """json.loads of a stored JSON text, bounded (kernelsmith._inputs). A document nested too deeply (a damaged or
    forged row: the engine writes a few levels) raises StoreError naming `where` (the store file and the row) and
    the limit. Raises json.JSONDecodeError for a text that is not JSON."""
    try:
        return _inputs.loads(text, where)
    except _inputs.JsonTooDeep as error:
        raise _store_error(f"{error.msg}; keep a copy of the file and start a new run with another --db path") from None


class LazyDocument(abc.Mapping):
    """A stored JSON object, parsed on first use: most readers of a large run need an evaluation's columns, not its
    whole document, and parsing 100,000 documents up front costs seconds and gigabytes. A text that is not a JSON
    object reads as an empty one; one nested too deeply raises StoreError naming `where` (the store and the row)."""

    __slots__ = ("_text", "_value", "_where")

    def __init__(self, text: Optional[str], where: str = "a stored JSON document") -> None:
        self._text = text
        self._value: Optional[Dict[str, Any]] = None
        self._where = where

    def _parsed(self) -> Dict[str, Any]:
        if self._value is None:
            try:
                value = load_stored_json(self._text, self._where) if self._text else {}
            except json.JSONDecodeError:
                value = {}
            self._value = value if isinstance(value, dict) else {}
            self._text = None
        return self._value

    def __getitem__(self, key: str) -> Any:
        return self._parsed()[key]

    def __iter__(self):
        return iter(self._parsed())

    def __len__(self) -> int:
        return len(self._parsed())

    def __repr__(self) -> str:
        return f"LazyDocument({self._parsed()!r})"


# --------------------------------------------------------------------------------------------------
# confirmed evaluations: the only ones whose figures a report headlines


#: The integrity flags (docs/evaluation.md#integrity) that cast doubt on an evaluation's speed or correctness, with
#: what each says, as the library defines them (kernelsmith.doubt_casting_flags(), which the search loop uses to
#: decide what must be confirmed before it leads). An evaluation carrying one is never *confirmed*, whatever its
#: status and mode. The reports, the best-so-far lines, the progress curves, the web view and the KernelBench metrics all ask
#: :func:`unconfirmed_reasons` (or its SQL twin), and docs/evaluation.md#confirmed-evaluations lists the same flags.
#: The other flags say something true of an honest kernel and leave it confirmed: ``nondeterministic`` (atomics),
#: ``ill_conditioned_case`` (decided by the reference and the inputs alone, never by the candidate),
#: ``speedup_above_threshold`` and ``remeasured`` (a large speedup measured twice; ``speedup_unconfirmed`` is added
#: when the two disagree).
DOUBT_FLAGS: Dict[str, str] = dict(core.doubt_casting_flags())

#: The timing mode (the Evaluation's ``timing.mode``) that a confirmed evaluation was measured in: strict mode's
#: checks (adversarial inputs on the timing sizes, the race check) and its sampling; screen mode is for search.
CONFIRMING_MODE = "strict"


def evaluation_mode(document: Mapping[str, Any]) -> str:
    """The mode an Evaluation document was measured in (its ``timing.mode``: 'screen' or 'strict'); '' when it
    was not timed or does not say."""
    timing = document.get("timing")
    mode = timing.get("mode") if isinstance(timing, Mapping) else None
    return mode if isinstance(mode, str) else ""


def integrity_flags(document: Mapping[str, Any]) -> List[str]:
    """The integrity flags of an Evaluation document (``integrity.flags``), [] when absent."""
    integrity = document.get("integrity")
    flags = integrity.get("flags") if isinstance(integrity, Mapping) else None
    if isinstance(flags, str):
        return [flags]
    return [str(flag) for flag in flags] if isinstance(flags, list) else []


def unconfirmed_reasons(status: str, document: Mapping[str, Any]) -> List[str]:
    """Why an evaluation's figures are not confirmed: [] for a confirmed one (status 'ok', measured in strict mode,
    no flag of DOUBT_FLAGS); else its status when not ok, '<mode> mode' (or 'mode unknown') when not strict, and
    each doubt-casting flag it carries, in that order."""
    reasons = [] if status == "ok" else [f"status {status}"]
    mode = evaluation_mode(document)
    if mode != CONFIRMING_MODE:
        reasons.append(f"{mode} mode" if mode else "mode unknown")
    reasons.extend(flag for flag in integrity_flags(document) if flag in DOUBT_FLAGS)
    return reasons


def is_confirmed(status: str, document: Mapping[str, Any]) -> bool:
    """True when the evaluation's figures may be headlined: see unconfirmed_reasons()."""
    return not unconfirmed_reasons(status, document)


def _confirmed_sql(alias: str) -> str:
    """The SQL twin of is_confirmed() over the evaluation row `alias` (DOUBT_FLAGS and CONFIRMING_MODE are the one
    definition; a row whose JSON SQLite cannot read is not confirmed). instr() first: a cheap test that spares the
    JSON parse of most screen-mode rows (a strict document holds the word)."""
    flags = ", ".join(f"'{flag}'" for flag in DOUBT_FLAGS)
    document = f"{alias}.json"
    # CASE, not AND alone: it keeps the order, so the JSON functions never see a text that is not valid JSON.
    return (f"(CASE WHEN {alias}.status = 'ok' AND instr({document}, '{CONFIRMING_MODE}') > 0 "
            f"AND json_valid({document}) THEN json_extract({document}, '$.timing.mode') = '{CONFIRMING_MODE}' "
            f"AND NOT EXISTS (SELECT 1 FROM json_each({document}, '$.integrity.flags') f WHERE f.value IN ({flags})) "
            f"ELSE 0 END)")


# --------------------------------------------------------------------------------------------------
# records


@dataclass
class StoredProgram:
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
class StoredEvaluation:
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
    #: The whole Evaluation document (a dict, or a LazyDocument parsed on first use).
    data: Mapping[str, Any] = field(repr=False, default_factory=dict)

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
        return integrity_flags(self.data)

    @property
    def mode(self) -> str:
        """The mode the evaluation was measured in ('screen', 'strict'; '' when not timed)."""
        return evaluation_mode(self.data)

    @property
    def unconfirmed_reasons(self) -> List[str]:
        """Why its figures are not confirmed ([] when they are): see kernelsmith.store.unconfirmed_reasons."""
        return unconfirmed_reasons(self.status, self.data)

    @property
    def confirmed(self) -> bool:
        """ok, measured in strict mode, and no flag of DOUBT_FLAGS: its figures may be headlined."""
        return not self.unconfirmed_reasons

    @property
    def doubted(self) -> bool:
        """ok but carrying a flag of DOUBT_FLAGS (its speed or correctness is in doubt, whatever the mode)."""
        return self.ok and any(flag in DOUBT_FLAGS for flag in self.flags)

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
class StoredLlmAttempt:
    """One row of ``llm_attempts``: an HTTP attempt of a step's LLM request."""

    step_id: int
    attempt: int  # 0, 1, ... in the order they were made
    http_status: Optional[int]  # None when no answer came (timeout, connection error, cancelled)
    error: str  # empty for the answer used; else its kind first: "HTTP 500 ...", "timeout: ...", ...
    seconds: float


@dataclass
class StoredStep:
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
    #: The program the proposal duplicates ('duplicate') or resembles most ('near_duplicate'); None
    #: otherwise, and for a duplicate the mutator rejected without naming it (a version-1 store).
    duplicate_of: Optional[str] = None
    #: How the novelty filter judged the proposal: one of NOVELTY_KINDS, or None when it never reached
    #: the filter (the mutator gave no program, or a program in another language).
    novelty_kind: Optional[str] = None
    #: The stop reason ('wall_time', 'stopped') of a run that ended while the step's mutator call was still
    #: running (cancelled, not waited for); None otherwise.
    abandoned_by: Optional[str] = None
    #: The HTTP attempts of the step's LLM request, in order (rows of ``llm_attempts``).
    llm_attempts: List["StoredLlmAttempt"] = field(default_factory=list)
    #: The skill the mutator said it applied ('unspecified' when an LLM named none); None when the mutator does
    #: not say, and in stores older than version 4 (docs/memory.md).
    skill: Optional[str] = None
    #: The experience items retrieved into the step's request, best first: dicts with "item", "skill", "score",
    #: "value", "similarity" and "explored" (empty before version 4).
    retrieved: List[Dict[str, Any]] = field(default_factory=list)

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
    def is_duplicate(self) -> bool:
        """The proposal's program is already in the run (equal after comments and layout are stripped)."""
        return self.novelty_kind == "duplicate"

    @property
    def is_near_duplicate(self) -> bool:
        """The proposal was rejected as too similar to a program on its island."""
        return self.novelty_kind == "near_duplicate"

    def messages(self) -> List[Dict[str, str]]:
        """The exact chat messages the mutator sent (``steps.prompt``); [] for a step without a prompt.

        Raises StoreError when the prompt is not a JSON array of {role, content} objects."""
        if not self.prompt:
            return []
        try:
            value = load_stored_json(self.prompt, f"step {self.id}: steps.prompt")
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
class StoredRun:
    """One run of a store with its programs, evaluations and steps."""

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
    programs: Dict[str, StoredProgram]
    evaluations: Dict[str, StoredEvaluation]  # by program id
    steps: List[StoredStep]
    #: The file's schema version (1 to 4).
    schema_version: int = core.RUN_STORE_SCHEMA_VERSION

    @property
    def key(self) -> str:
        """Names the run across stores: "<store path>#<run id>"."""
        return f"{self.store}#{self.id}"

    def evaluation(self, program_id: str) -> Optional[StoredEvaluation]:
        """The StoredEvaluation of a program, or None when it is not evaluated."""
        return self.evaluations.get(program_id)

    def best_speedup(self, confirmed_only: bool = False) -> float:
        """The best speedup over the baseline of the run's correct programs whose speed no flag of DOUBT_FLAGS puts
        in doubt (screen mode included: search measures in it), or of its confirmed ones only; 0.0 when none."""
        speedups = [e.speedup for e in self.evaluations.values()
                    if (e.confirmed if confirmed_only else e.ok and not e.doubted) and e.speedup > 0]
        return max(speedups, default=0.0)


# --------------------------------------------------------------------------------------------------
# opening a store


def _uri(path: str) -> str:
    return "file:" + os.path.abspath(path).replace("?", "%3f").replace("#", "%23") + "?mode=ro"


def _database_error(path: str, error: sqlite3.DatabaseError) -> core.StoreError:
    """The StoreError for what SQLite said while reading: a damaged file says how to recover."""
    if isinstance(error, sqlite3.OperationalError):  # locked, unreadable: not the file's contents
        return _store_error(f"cannot read the run store '{path}' ({error}): check that the file is readable")
    return _store_error(
        f"the run store '{path}' is damaged or is not a SQLite database ({error}): keep a copy of the file, "
        f"start a new run with another --db path, and rescue what is left with "
        f"`sqlite3 {path} .recover | sqlite3 recovered.db`"
    )


def connect_read_only(path: str, timeout: float = 30.0) -> Tuple[sqlite3.Connection, int]:
    """A read-only connection to a run store (rows as sqlite3.Row) and the store's schema version.

    Raises StoreError when the file is missing, not a run store, damaged, or of a version this reader
    does not know."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise _store_error(f"run store '{path}' does not exist: give the --db path of a run's SQLite file")
    connection = None
    try:
        connection = sqlite3.connect(_uri(path), uri=True, timeout=timeout)
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "schema_version" not in tables:
            raise _store_error(
                f"'{path}' is a SQLite database but not a kernelsmith run store (no schema_version table)"
            )
        version = connection.execute("SELECT max(version) FROM schema_version").fetchone()[0]
    except sqlite3.DatabaseError as error:
        if connection is not None:
            connection.close()
        raise _database_error(path, error) from None
    except core.StoreError:
        connection.close()
        raise
    connection.row_factory = sqlite3.Row
    if version not in SUPPORTED_SCHEMA_VERSIONS:
        connection.close()
        raise _store_error(
            f"run store '{path}' has schema version {version}; this reader reads versions "
            f"{', '.join(map(str, SUPPORTED_SCHEMA_VERSIONS))}: use the kernelsmith version that wrote it"
        )
    missing = {"runs", "programs", "evaluations", "steps"} - tables
    if missing:
        connection.close()
        raise _store_error(
            f"run store '{path}' lacks the tables {sorted(missing)}: the file is damaged; keep a copy of it and "
            f"start a new run with another --db path"
        )
    return connection, int(version)


# --------------------------------------------------------------------------------------------------
# whole runs


_STEP_COLUMNS = (
    "id, island, parent_ids, selection, mutation, inspiration_ids, prompt, response, model, prompt_tokens, "
    "completion_tokens, coalesce(child_id, '') AS child_id, evaluation_id, failure"
)


def _novelty_facts_of_version_1(path: str, run_id: int) -> Dict[int, Tuple[Optional[str], Optional[str]]]:
    """(duplicate_of, novelty_kind) per step of a version-1 run, derived by the library's read-only
    RunStore from the old failure messages (the same derivation as the upgrade to version 2)."""
    store = core.RunStore(path, True)
    return {s.id: (s.duplicate_of or None, s.novelty_kind or None) for s in store.steps(run_id)}


def _llm_attempts(connection: sqlite3.Connection, version: int, run_id: int) -> Dict[int, List[StoredLlmAttempt]]:
    """The run's LLM attempts by step id, in order (none before version 3)."""
    by_step: Dict[int, List[StoredLlmAttempt]] = {}
    if version < 3:
        return by_step
    for a in connection.execute(
        "SELECT step, attempt, http_status, error, seconds FROM llm_attempts WHERE run = ? ORDER BY step, attempt",
        (run_id,),
    ):
        by_step.setdefault(int(a["step"]), []).append(
            StoredLlmAttempt(int(a["step"]), int(a["attempt"]), a["http_status"], a["error"] or "",
                             _finite_or_zero(a["seconds"]))
        )
    return by_step


def _retrievals(text: Optional[str], where: str) -> List[Dict[str, Any]]:
    """A step's retrieved experience (steps.retrieved): a JSON array of objects; [] when NULL."""
    value = _json_array(text, where)
    if not all(isinstance(entry, dict) for entry in value):
        raise _store_error(f"{where} holds {text[:80]!r}, not a JSON array of objects")
    return value


def _read_evaluations(connection: sqlite3.Connection, path: str, run_id: int) -> List[StoredEvaluation]:
    """The run's evaluations in evaluation order, their documents parsed on first use (a JSON column that does not
    parse gives empty data)."""
    evaluations = []
    for e in connection.execute(
        "SELECT id, program_id, sequence, status, fitness, speedup, message, backend, device, json "
        "FROM evaluations WHERE run = ? ORDER BY sequence",
        (run_id,),
    ):
        evaluations.append(StoredEvaluation(
            id=int(e["id"]),
            program_id=e["program_id"],
            sequence=int(e["sequence"]),
            status=e["status"],
            speedup=_finite_or_zero(e["speedup"]),
            fitness=_finite_or_zero(e["fitness"]),
            message=e["message"] or "",
            backend=e["backend"] or "",
            device=e["device"] or "",
            data=LazyDocument(e["json"], f"run store '{path}': evaluations.json of run {run_id}, program "
                                         f"{e['program_id']}"),
        ))
    return evaluations


def _read_steps(connection: sqlite3.Connection, version: int, path: str, run_id: int, condition: str = "",
                parameters: tuple = ()) -> List[StoredStep]:
    """The run's steps (those matching `condition`, an SQL fragment starting with AND, when given), in order, with
    their novelty facts and LLM attempts."""
    novelty_columns = ", duplicate_of, novelty_kind" if version >= 2 else ""
    novelty_columns += ", abandoned_by" if version >= 3 else ""
    novelty_columns += ", skill, retrieved" if version >= 4 else ""
    version_1_facts = _novelty_facts_of_version_1(path, run_id) if version < 2 else {}
    attempts = _llm_attempts(connection, version, run_id)
    steps: List[StoredStep] = []
    for s in connection.execute(
        f"SELECT {_STEP_COLUMNS}{novelty_columns} FROM steps WHERE run = ? {condition} ORDER BY id", (run_id, *parameters)
    ):
        step_id = int(s["id"])
        if version >= 2:
            duplicate_of, novelty_kind = s["duplicate_of"], s["novelty_kind"]
        else:
            duplicate_of, novelty_kind = version_1_facts.get(step_id, (None, None))
        steps.append(
            StoredStep(
                id=step_id,
                island=int(s["island"]),
                parent_ids=_json_list(s["parent_ids"], f"{path}: steps.parent_ids of step {step_id}"),
                selection=s["selection"],
                mutation=s["mutation"],
                inspiration_ids=_json_list(s["inspiration_ids"], f"{path}: steps.inspiration_ids of step {step_id}"),
                prompt=s["prompt"] or "",
                response=s["response"] or "",
                model=s["model"] or "",
                prompt_tokens=int(s["prompt_tokens"] or 0),
                completion_tokens=int(s["completion_tokens"] or 0),
                child_id=s["child_id"] or "",
                evaluation_id=s["evaluation_id"],
                failure=s["failure"] or "",
                duplicate_of=duplicate_of or None,
                novelty_kind=novelty_kind or None,
                abandoned_by=(s["abandoned_by"] or None) if version >= 3 else None,
                llm_attempts=attempts.get(step_id, []),
                skill=(s["skill"] or None) if version >= 4 else None,
                retrieved=_retrievals(s["retrieved"], f"{path}: steps.retrieved of step {step_id}")
                if version >= 4 else [],
            )
        )
    return steps


def _read_run(connection: sqlite3.Connection, version: int, path: str, row: sqlite3.Row) -> StoredRun:
    run_id = int(row["id"])
    programs: Dict[str, StoredProgram] = {}
    for p in connection.execute(
        "SELECT id, language, source, normalized_hash, parent_ids, origin, island, generation "
        "FROM programs WHERE run = ? ORDER BY created, rowid",
        (run_id,),
    ):
        programs[p["id"]] = StoredProgram(
            id=p["id"],
            language=p["language"],
            source=p["source"],
            normalized_hash=p["normalized_hash"],
            parent_ids=_json_list(p["parent_ids"], f"{path}: programs.parent_ids of {p['id']}"),
            origin=p["origin"],
            island=int(p["island"]),
            generation=int(p["generation"]),
        )
    evaluations = {e.program_id: e for e in _read_evaluations(connection, path, run_id)}
    steps = _read_steps(connection, version, path, run_id)
    return StoredRun(
        store=path,
        id=run_id,
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
        schema_version=version,
    )


def _read_snapshot(path: str, read: Callable[[sqlite3.Connection, int], _T]) -> _T:
    """read(connection, schema version) in one read transaction: a consistent snapshot while a run keeps
    writing. Raises StoreError (see connect_read_only; a page damaged past the schema too)."""
    connection, version = connect_read_only(path)
    with closing(connection):
        try:
            connection.execute("BEGIN")
            result = read(connection, version)
            connection.execute("COMMIT")
        except sqlite3.DatabaseError as error:
            raise _database_error(path, error) from None
    return result


def read_runs(path: str, run_ids: Optional[Iterable[int]] = None) -> List[StoredRun]:
    """The runs of one store (all of them, or those named), oldest first."""
    path = os.fspath(path)
    wanted = None if run_ids is None else {int(r) for r in run_ids}

    def read(connection: sqlite3.Connection, version: int) -> List[StoredRun]:
        rows = connection.execute(
            "SELECT id, task_name, config, task, language, backend, device, mutator, status FROM runs ORDER BY id"
        ).fetchall()
        return [_read_run(connection, version, path, row) for row in rows if wanted is None or row["id"] in wanted]

    runs = _read_snapshot(path, read)
    if wanted is not None:
        found = {r.id for r in runs}
        if wanted - found:
            raise _store_error(f"run store '{path}' has no run {sorted(wanted - found)}")
    return runs


def load_runs(paths: Sequence[str], run_ids: Optional[Iterable[int]] = None) -> List[StoredRun]:
    """The runs of several stores, store by store. Raises StoreError naming the first bad path."""
    runs: List[StoredRun] = []
    for path in distinct_store_paths(paths):
        runs.extend(read_runs(path, run_ids))
    return runs


def distinct_store_paths(paths: "Sequence[str] | str | os.PathLike") -> List[str]:
    """The paths in order, each file once: the same file named twice would count its runs double."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    if not paths:
        raise ValueError("no run store given: pass at least one path")
    distinct: List[str] = []
    seen = set()
    for path in paths:
        path = os.fspath(path)
        real = os.path.realpath(path)
        if real not in seen:
            seen.add(real)
            distinct.append(path)
    return distinct


@dataclass
class RunEvaluations:
    """One run's row and its evaluations, without programs and steps: what a summary over many runs needs."""

    store: str
    id: int
    task_name: str
    language: str
    backend: str
    device: str
    mutator: str
    status: str
    stop_reason: str
    error: str  # why a failed run failed
    evaluations: List[StoredEvaluation]  # in evaluation order
    #: How each program of the run was made (programs.origin by program id): tells the reference from kernels.
    origins: Dict[str, str] = field(default_factory=dict)
    schema_version: int = core.RUN_STORE_SCHEMA_VERSION


def read_run_evaluations(path: "str | os.PathLike") -> List[RunEvaluations]:
    """Every run of one store with its evaluations and the origins of its programs (oldest run first), from one
    consistent snapshot. Raises StoreError (see connect_read_only)."""
    path = os.fspath(path)

    def read(connection: sqlite3.Connection, version: int) -> List[RunEvaluations]:
        runs = []
        for row in connection.execute(
            "SELECT id, task_name, language, backend, device, mutator, status, stop_reason, error FROM runs ORDER BY id"
        ).fetchall():
            run_id = int(row["id"])
            runs.append(RunEvaluations(
                store=path, id=run_id, task_name=row["task_name"], language=row["language"] or "",
                backend=row["backend"] or "", device=row["device"] or "", mutator=row["mutator"] or "",
                status=row["status"] or "", stop_reason=row["stop_reason"] or "", error=row["error"] or "",
                evaluations=_read_evaluations(connection, path, run_id),
                origins={p["id"]: p["origin"] for p in connection.execute(
                    "SELECT id, origin FROM programs WHERE run = ?", (run_id,))},
                schema_version=version,
            ))
        return runs

    return _read_snapshot(path, read)


# --------------------------------------------------------------------------------------------------
# the notebook's questions


#: The columns of RunStoreReader.evaluated_programs(): an evaluated program joined with its evaluation.
EVALUATED_PROGRAM_COLUMNS = (
    "sequence", "id", "language", "source", "parent_ids", "origin", "island", "generation", "status", "fitness",
    "speedup", "message", "wall_seconds", "json",
)


#: The id of a run's fittest confirmed evaluation (the earlier on ties; see unconfirmed_reasons); {run} is the run's
#: id or a column naming it. The index evaluations_by_fitness gives the rows fittest first, so the scan stops at the
#: first confirmed one.
_BEST_EVALUATION = ("SELECT c.id FROM evaluations c WHERE c.run = {run} AND c.status = 'ok' AND "
                    + _confirmed_sql("c") + " ORDER BY c.fitness DESC, c.sequence ASC LIMIT 1")


class RunStoreReader:
    """Short read-only queries on one store, each on a fresh connection, so that a notebook sees what a
    running engine has committed since the last call. Raises StoreError (see connect_read_only)."""

    def __init__(self, path: "str | os.PathLike", timeout: float = 10.0):
        self.path = os.fspath(path)
        self.timeout = timeout

    def _rows(self, sql: str, parameters: tuple = ()) -> List[sqlite3.Row]:
        connection, _ = connect_read_only(self.path, self.timeout)
        with closing(connection):
            try:
                return connection.execute(sql, parameters).fetchall()
            except sqlite3.DatabaseError as error:
                raise _database_error(self.path, error) from None

    def latest_run_id(self) -> Optional[int]:
        """The id of the store's most recent run, or None when it holds none yet."""
        rows = self._rows("SELECT max(id) AS id FROM runs")
        return None if not rows or rows[0]["id"] is None else int(rows[0]["id"])

    def run_row(self, run_id: int) -> Optional[Dict[str, Any]]:
        """Every column of the run's row in ``runs`` (config and task as JSON text), or None."""
        rows = self._rows("SELECT * FROM runs WHERE id = ?", (run_id,))
        return dict(rows[0]) if rows else None

    def llm_attempts(self, run_id: int) -> List[StoredLlmAttempt]:
        """Every HTTP attempt of the run's LLM requests, by step then attempt ([] for a store older than
        version 3, which did not record them)."""
        connection, version = connect_read_only(self.path, self.timeout)
        with closing(connection):
            by_step = _llm_attempts(connection, version, run_id)
        return [attempt for step in sorted(by_step) for attempt in by_step[step]]

    def evaluation_count(self, run_id: int) -> int:
        """Evaluations stored for the run so far."""
        return int(self._rows("SELECT count(*) AS n FROM evaluations WHERE run = ?", (run_id,))[0]["n"])

    def evaluated_programs(
        self, run_id: int, program_id: Optional[str] = None, correct_only: bool = False, best_first: bool = False,
        limit: Optional[int] = None, after_sequence: int = -1, confirmed_only: bool = False,
    ) -> List[Dict[str, Any]]:
        """The run's evaluated programs as dicts of EVALUATED_PROGRAM_COLUMNS (parent_ids parsed, json the
        whole Evaluation document), in evaluation order, or fittest first (earlier first on ties) with
        best_first; only one program, only correct ones, only confirmed ones (unconfirmed_reasons), only those
        evaluated after `after_sequence`, or at most `limit` of them when asked."""
        sql = (
            "SELECT e.sequence, p.id, p.language, p.source, p.parent_ids, p.origin, p.island, p.generation, "
            "e.status, e.fitness, e.speedup, e.message, e.wall_seconds, e.json "
            "FROM evaluations e JOIN programs p ON p.run = e.run AND p.id = e.program_id WHERE e.run = ?"
        )
        parameters: List[Any] = [run_id]
        if after_sequence >= 0:
            sql += " AND e.sequence > ?"
            parameters.append(int(after_sequence))
        if program_id is not None:
            sql += " AND p.id = ?"
            parameters.append(program_id)
        if correct_only or confirmed_only:
            sql += " AND e.status = 'ok'"
        if confirmed_only:
            sql += " AND " + _confirmed_sql("e")
        sql += " ORDER BY e.fitness DESC, e.sequence ASC" if best_first else " ORDER BY e.sequence"
        if limit is not None:
            sql += " LIMIT ?"
            parameters.append(int(limit))
        programs = []
        for row in self._rows(sql, tuple(parameters)):
            program = dict(row)
            program["parent_ids"] = _json_list(program["parent_ids"], f"{self.path}: programs.parent_ids of {row['id']}")
            programs.append(program)
        return programs

    # -- paged and incremental queries (the web view, docs/web.md; the notebook's replays) ---------

    def runs_overview(self) -> List[Dict[str, Any]]:
        """Every run of the store, newest first, without its config and task: the row's columns (id, task_name,
        language, backend, device, mutator, seed, started, updated, finished, status, stop_reason, error) plus
        ``evaluations`` and ``steps`` (counts), the fittest confirmed program's ``best_program_id``, ``best_speedup``
        and ``best_fitness`` (None when none is confirmed yet), and ``unconfirmed``: the fastest correct evaluation
        that is not confirmed and beats the confirmed best, as unconfirmed_above() gives it (None when none)."""
        runs = [dict(row) for row in self._rows(
            f"SELECT r.id, r.task_name, r.language, r.backend, r.device, r.mutator, r.seed, r.started, r.updated, "
            f"r.finished, r.status, r.stop_reason, r.error, "
            f"(SELECT count(*) FROM evaluations e WHERE e.run = r.id) AS evaluations, "
            f"(SELECT count(*) FROM steps s WHERE s.run = r.id) AS steps, "
            f"b.program_id AS best_program_id, b.speedup AS best_speedup, b.fitness AS best_fitness "
            f"FROM runs r LEFT JOIN evaluations b ON b.id = ({_BEST_EVALUATION.format(run='r.id')}) "
            f"ORDER BY r.id DESC"
        )]
        for run in runs:
            above = self.unconfirmed_above(run["id"], run["best_speedup"] or 0.0, 1)
            run["unconfirmed"] = above[0] if above else None
        return runs

    def best_evaluation(self, run_id: int) -> Optional[Dict[str, Any]]:
        """The fittest confirmed evaluation of the run (the earlier on ties; see unconfirmed_reasons) as a dict of
        program_id, sequence, speedup and fitness, or None when none is confirmed. Uses the index
        evaluations_by_fitness where the store has it."""
        rows = self._rows(
            f"SELECT program_id, sequence, speedup, fitness FROM evaluations WHERE id = ({_BEST_EVALUATION.format(run='?')})",
            (run_id,),
        )
        return dict(rows[0]) if rows else None

    def unconfirmed_above(self, run_id: int, speedup: float = 0.0, limit: int = 5) -> List[Dict[str, Any]]:
        """The correct evaluations of the run faster than `speedup` that are not confirmed, fastest first, at most
        `limit`: dicts of program_id, sequence, speedup, fitness, mode, flags (all of them) and reasons (why not
        confirmed: unconfirmed_reasons). What a report shows apart from its confirmed figures."""
        found: List[Dict[str, Any]] = []
        offset, page = 0, max(4 * int(limit), 16)
        while len(found) < limit:
            rows = self._rows(
                "SELECT program_id, sequence, speedup, fitness, status, json FROM evaluations "
                "WHERE run = ? AND status = 'ok' AND speedup > ? ORDER BY speedup DESC, sequence ASC LIMIT ? OFFSET ?",
                (run_id, float(speedup), page, offset))
            for row in rows:
                where = f"run store '{self.path}': evaluations.json of run {run_id}, program {row['program_id']}"
                document = LazyDocument(row["json"], where)
                reasons = unconfirmed_reasons(row["status"], document)
                if reasons and len(found) < limit:
                    found.append({"program_id": row["program_id"], "sequence": row["sequence"],
                                  "speedup": row["speedup"], "fitness": row["fitness"],
                                  "mode": evaluation_mode(document), "flags": integrity_flags(document),
                                  "reasons": reasons})
            if len(rows) < page:
                break
            offset += page
        return found

    def confirmation(self, run_id: int, program_id: str) -> Optional[Dict[str, Any]]:
        """One evaluation's status, speedup, mode, flags and reasons (unconfirmed_reasons: [] when confirmed), or None
        when the program is not evaluated (yet)."""
        rows = self._rows("SELECT status, speedup, json FROM evaluations WHERE run = ? AND program_id = ?",
                          (run_id, program_id))
        if not rows:
            return None
        document = LazyDocument(rows[0]["json"], f"run store '{self.path}': evaluations.json of run {run_id}, "
                                                 f"program {program_id}")
        return {"status": rows[0]["status"], "speedup": _finite_or_zero(rows[0]["speedup"]),
                "mode": evaluation_mode(document), "flags": integrity_flags(document),
                "reasons": unconfirmed_reasons(rows[0]["status"], document)}

    def run_counts(self, run_id: int) -> Optional[Dict[str, Any]]:
        """What changes while a run goes on, in one short read: status, stop_reason, updated, finished, and the
        counts of evaluations and steps; None when the store has no such run."""
        rows = self._rows(
            "SELECT status, stop_reason, updated, finished, "
            "(SELECT count(*) FROM evaluations e WHERE e.run = r.id) AS evaluations, "
            "(SELECT count(*) FROM steps s WHERE s.run = r.id) AS steps FROM runs r WHERE r.id = ?",
            (run_id,),
        )
        return dict(rows[0]) if rows else None

    def llm_tokens_by_model(self, run_id: int) -> Dict[str, Dict[str, int]]:
        """The run's model calls (steps with a recorded prompt, as the engine's LlmSpend counts them) by model: calls,
        prompt_tokens and completion_tokens (as the endpoint reported them). Empty when the run used no model."""
        return {row["model"]: {"calls": int(row["calls"]), "prompt_tokens": int(row["prompt_tokens"] or 0),
                               "completion_tokens": int(row["completion_tokens"] or 0)}
                for row in self._rows(
                    "SELECT model, count(*) AS calls, sum(prompt_tokens) AS prompt_tokens, "
                    "sum(completion_tokens) AS completion_tokens FROM steps WHERE run = ? AND prompt != '' "
                    "GROUP BY model ORDER BY model", (run_id,))}

    def island_rows(self, run_id: int) -> List[Dict[str, Any]]:
        """The run's rows of ``islands`` (programs, best program, fitness and speedup per island)."""
        return [dict(row) for row in self._rows(
            "SELECT island, programs, best_program_id, best_fitness, best_speedup, updated FROM islands "
            "WHERE run = ? ORDER BY island", (run_id,))]

    def progress_rows(self, run_id: int, after_sequence: int = -1, limit: Optional[int] = None) -> List[Dict[str, Any]]:
        """The run's evaluations after `after_sequence` (at most `limit` of them), in order, as dicts of sequence,
        program_id, island, origin, status, speedup and sol_fraction (the Evaluation's sol.fraction; None when not
        computed): what a progress chart needs, without the sources; and ``confirmed`` (1 or 0: see
        unconfirmed_reasons), which alone may raise a best-so-far curve."""
        return [dict(row) for row in self._rows(
            "SELECT e.sequence, e.program_id, p.island, p.origin, e.status, e.speedup, "
            "CASE WHEN json_valid(e.json) THEN json_extract(e.json, '$.sol.fraction') END AS sol_fraction, "
            f"{_confirmed_sql('e')} AS confirmed "
            "FROM evaluations e JOIN programs p ON p.run = e.run AND p.id = e.program_id "
            "WHERE e.run = ? AND e.sequence > ? ORDER BY e.sequence LIMIT ?",
            (run_id, after_sequence, -1 if limit is None else int(limit)))]

    def evaluations_page(self, run_id: int, before_sequence: Optional[int] = None, limit: int = 50) -> List[Dict[str, Any]]:
        """A page of the run's evaluations, newest first (keyset paging: those before `before_sequence`), as dicts
        of sequence, program_id, status, speedup, fitness, message, island, generation, origin and noise (the timing's
        relative standard deviation; None when not timed)."""
        sql = ("SELECT e.sequence, e.program_id, e.status, e.speedup, e.fitness, e.message, p.island, p.generation, "
               "p.origin, CASE WHEN json_valid(e.json) THEN json_extract(e.json, '$.timing.noise') END AS noise "
               "FROM evaluations e JOIN programs p ON p.run = e.run AND p.id = e.program_id WHERE e.run = ?")
        parameters: List[Any] = [run_id]
        if before_sequence is not None:
            sql += " AND e.sequence < ?"
            parameters.append(int(before_sequence))
        sql += " ORDER BY e.sequence DESC LIMIT ?"
        parameters.append(int(limit))
        return [dict(row) for row in self._rows(sql, tuple(parameters))]

    def program_record(self, run_id: int, program_id: str) -> Optional[Dict[str, Any]]:
        """One program (every column of ``programs``, parent_ids parsed) with its evaluation's sequence, status,
        speedup, fitness, message and whole JSON document (None where it is not evaluated yet); None when the run
        has no such program."""
        rows = self._rows(
            "SELECT p.id, p.language, p.source, p.normalized_hash, p.parent_ids, p.origin, p.island, p.generation, "
            "p.created, e.id AS evaluation_id, e.sequence, e.status, e.speedup, e.fitness, e.message, e.json "
            "FROM programs p LEFT JOIN evaluations e ON e.run = p.run AND e.program_id = p.id "
            "WHERE p.run = ? AND p.id = ?",
            (run_id, program_id),
        )
        if not rows:
            return None
        program = dict(rows[0])
        program["parent_ids"] = _json_list(program["parent_ids"], f"{self.path}: programs.parent_ids of {program_id}")
        return program

    def program_sources(self, run_id: int, program_ids: Sequence[str]) -> Dict[str, str]:
        """The sources of the programs named (those the run has), by id."""
        if not program_ids:
            return {}
        marks = ", ".join("?" for _ in program_ids)
        return {row["id"]: row["source"] for row in self._rows(
            f"SELECT id, source FROM programs WHERE run = ? AND id IN ({marks})", (run_id, *program_ids))}

    def migration_rows(self, run_id: int, after_id: int = 0) -> List[Dict[str, Any]]:
        """The run's migrations recorded after the row `after_id`, in order, as dicts of id, program_id, from_island,
        to_island and sequence (the evaluations done when it happened)."""
        return [dict(row) for row in self._rows(
            "SELECT id, program_id, from_island, to_island, sequence FROM migrations WHERE run = ? AND id > ? "
            "ORDER BY id", (run_id, after_id))]

    def steps(self, run_id: int) -> List[StoredStep]:
        """Every step of the run in order, with its novelty facts and LLM attempts (read like read_runs() reads
        them)."""
        connection, version = connect_read_only(self.path, self.timeout)
        with closing(connection):
            try:
                return _read_steps(connection, version, self.path, run_id)
            except sqlite3.DatabaseError as error:
                raise _database_error(self.path, error) from None

    def steps_of_child(self, run_id: int, program_id: str) -> List[StoredStep]:
        """The steps whose proposal became the program (one, or none for a program no step made), with their LLM
        attempts; read like read_runs() reads steps."""
        connection, version = connect_read_only(self.path, self.timeout)
        with closing(connection):
            try:
                return _read_steps(connection, version, self.path, run_id, "AND child_id = ?", (program_id,))
            except sqlite3.DatabaseError as error:
                raise _database_error(self.path, error) from None

    def ancestors(self, run_id: int, program_id: str, limit: int = 200) -> List[Dict[str, Any]]:
        """The program and its nearest ancestors (breadth first over parent_ids, through every parent), at most
        `limit` of them, nearest first, as dicts of id, depth (0 for the program, 1 for its parents, ...),
        parent_ids (parsed), origin, island, generation, and the evaluation's sequence, status, speedup and fitness
        (None where not evaluated)."""
        rows = self._rows(
            "WITH RECURSIVE lineage(id, depth) AS (SELECT ?, 0 UNION "
            "SELECT j.value, l.depth + 1 FROM lineage l JOIN programs p ON p.run = ? AND p.id = l.id, "
            "json_each(p.parent_ids) j LIMIT ?) "
            "SELECT p.id, min(l.depth) AS depth, p.parent_ids, p.origin, p.island, p.generation, e.sequence, e.status, "
            "e.speedup, e.fitness FROM lineage l JOIN programs p ON p.run = ? AND p.id = l.id "
            "LEFT JOIN evaluations e ON e.run = p.run AND e.program_id = p.id "
            "GROUP BY p.id ORDER BY depth, p.generation DESC, p.id LIMIT ?",
            (program_id, run_id, 4 * int(limit), run_id, int(limit)),
        )
        nodes = []
        for row in rows:
            node = dict(row)
            node["parent_ids"] = _json_list(node["parent_ids"], f"{self.path}: programs.parent_ids of {row['id']}")
            nodes.append(node)
        return nodes


class ConfirmedBest:
    """A running run's best confirmed speedup, followed from the engine's progress reports (kernelsmith.Progress):
    what a best-so-far line shows, since the engine's own best (Progress.best_speedup) may be an evaluation that is
    not confirmed. Each correct evaluation reported is read back from the store (the engine stores an evaluation
    before it reports it); a run resumed starts from what the store holds. The fastest correct evaluation that is
    not confirmed and beats the confirmed best is kept apart (``unconfirmed``, with its reasons)."""

    def __init__(self, path: "str | os.PathLike") -> None:
        self.reader = RunStoreReader(path)
        self.run_id: Optional[int] = None
        self.speedup = 0.0  # the best confirmed speedup; 0.0 while none is confirmed
        self.program_id: Optional[str] = None
        self.unconfirmed: Optional[Dict[str, Any]] = None  # program_id, speedup, reasons

    def _start(self, run_id: int) -> None:
        self.run_id, self.speedup, self.program_id, self.unconfirmed = run_id, 0.0, None, None
        best = self.reader.best_evaluation(run_id)
        if best is not None:
            self.speedup, self.program_id = _finite_or_zero(best["speedup"]), best["program_id"]
        above = self.reader.unconfirmed_above(run_id, self.speedup, 1)
        if above:
            self.unconfirmed = {key: above[0][key] for key in ("program_id", "speedup", "reasons")}

    def observe(self, run_id: int, program_id: str, status: str) -> bool:
        """Takes one progress report; True when it raised the confirmed best. A store that cannot be read leaves the
        figures as they were (the run itself reports a store it cannot write)."""
        try:
            if run_id != self.run_id:
                self._start(run_id)
                return self.program_id == program_id and program_id is not None
            if status != "ok" or not program_id:
                return False
            found = self.reader.confirmation(run_id, program_id)
        except core.StoreError:
            return False
        if found is None or found["status"] != "ok":
            return False
        if not found["reasons"]:
            if found["speedup"] > self.speedup:
                self.speedup, self.program_id = found["speedup"], program_id
                if self.unconfirmed is not None and self.unconfirmed["speedup"] <= self.speedup:
                    self.unconfirmed = None
                return True
            return False
        if found["speedup"] > self.speedup and (self.unconfirmed is None or
                                                found["speedup"] > self.unconfirmed["speedup"]):
            self.unconfirmed = {"program_id": program_id, "speedup": found["speedup"], "reasons": found["reasons"]}
        return False

    def text(self) -> str:
        """'best 6.900x' (or 'best: none confirmed'), and the faster unconfirmed one apart, with its reasons."""
        line = f"best {self.speedup:.3f}x" if self.program_id else "best: none confirmed"
        if self.unconfirmed is not None:
            line += (f" (unconfirmed {self.unconfirmed['speedup']:.3f}x: "
                     f"{', '.join(self.unconfirmed['reasons'])})")
        return line
