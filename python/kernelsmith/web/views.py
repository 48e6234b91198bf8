"""What the pages of the web view show, computed from the run stores and kept per run between requests.

Every read goes through :mod:`kernelsmith.store` (read-only connections, the one module that runs SQL on a
store). The views derived from a whole run (the progress series, the archive, the training-data decisions)
are kept per run and brought up to date on each request: the replays of :mod:`kernelsmith.replay` read
only the evaluations committed since their last look, and the training decisions are made again only when
the run has new steps or evaluations. No HTML here: the templates escape whatever they show.
"""

from __future__ import annotations

import difflib
import json
import math
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from kernelsmith import _core as core
from kernelsmith import _inputs
from kernelsmith.replay import ArchiveReplay, ProgressReplay, config_json_of, islands_of
from kernelsmith.store import RunStoreReader, connect_read_only, distinct_store_paths, read_runs

#: Ancestors shown by the lineage page at first; "older" links ask for more, up to LINEAGE_MAX.
LINEAGE_NODES = 200
LINEAGE_MAX = 5000
#: Rows per page of the evaluations and training-data tables.
PAGE_ROWS = 50

#: A timing whose samples spread more than this (relative standard deviation) is marked as not trustworthy.
NOISY_TIMING = 0.10
#: What the pages say about such a timing (the evaluations table's tooltip and the program page's note).
NOISY_TIMING_TEXT = (
    "The timing samples spread widely (a relative standard deviation above 10%), so this time, and the speedup "
    "computed from it, are not trustworthy. On a CPU (PoCL) other work on the machine and the CPU's changing clock "
    "cause this; time the program again on a quiet machine or on a GPU before trusting the difference.")
#: What the fraction of the hardware limit is, and why it can pass 100% (docs/evaluation.md, "Speed of light").
LIMIT_TEXT = (
    "The device's limit is an estimate: its copy bandwidth and arithmetic rate as kernelsmith measures them with its "
    "own kernels on data larger than the caches. A kernel whose data fit in a cache can run faster than that and "
    "pass 100%, which is common on a CPU (PoCL); there the figure compares programs with one another rather than "
    "with a true bound.")


class NotFound(LookupError):
    """A page names a store, run or program that is not there."""


@dataclass
class ProgressSeries:
    """The change points of the best-so-far curves: [sequence, value] pairs where a best rose, for the run
    ('all') and each island (by island number as a string, as JSON keys are)."""

    speedup: Dict[str, List[Tuple[int, float]]] = field(default_factory=dict)
    fraction: Dict[str, List[Tuple[int, float]]] = field(default_factory=dict)
    #: Correct evaluations that are not confirmed and beat the confirmed best (and every such one before them) when
    #: they came: [sequence, speedup] pairs, shown apart from the curves, which only confirmed evaluations raise.
    unconfirmed: List[Tuple[int, float]] = field(default_factory=list)

    def add_unconfirmed(self, sequence: int, speedup: float, confirmed_best: float) -> None:
        """Records a correct evaluation that is not confirmed when it beats the confirmed best and the last one."""
        if speedup > confirmed_best and (not self.unconfirmed or speedup > self.unconfirmed[-1][1]):
            self.unconfirmed.append((sequence, speedup))

    def add(self, series: Dict[str, List[Tuple[int, float]]], key: str, sequence: int, value: float) -> None:
        """Records (sequence, value) on the curve `key` of `series` when the value rises above its last point."""
        points = series.setdefault(key, [])
        if value > 0 and (not points or value > points[-1][1]):
            points.append((sequence, value))

    def since(self, sequence: int) -> Dict[str, Dict[str, List[Tuple[int, float]]]]:
        """The change points after `sequence`."""

        def after(series: Dict[str, List[Tuple[int, float]]]) -> Dict[str, List[Tuple[int, float]]]:
            return {key: [p for p in points if p[0] > sequence] for key, points in series.items()}

        return {"speedup": after(self.speedup), "fraction": after(self.fraction),
                "unconfirmed": [p for p in self.unconfirmed if p[0] > sequence]}


class Job:
    """A view of one run that a background thread brings up to date (the progress curves, the archive, the
    training-data decisions): a page never waits for more than a moment, and shows what is ready with how far the
    work has come. One thread per job at a time; a failure is kept for the page to show, and the next request
    tries again."""

    def __init__(self, name: str, work: Callable[["Job"], None]) -> None:
        self.name = name
        self.work = work
        self.lock = threading.Lock()  # guards the view's data between the worker and the requests
        self.thread: Optional[threading.Thread] = None
        self.done = 0  # evaluations (or steps) taken in so far
        self.total = 0  # of how many, as far as the worker knows
        self.started = 0.0
        self.seconds = 0.0  # of the last complete pass
        self.error: Optional[str] = None

    def ensure(self, wait: float) -> None:
        """Starts the worker unless it is running, then waits at most `wait` seconds for it to finish."""
        with self.lock:
            if self.thread is None or not self.thread.is_alive():
                self.error = None
                self.started = time.perf_counter()
                self.thread = threading.Thread(target=self._run, name=f"kernelsmith-web-{self.name}", daemon=True)
                self.thread.start()
            thread = self.thread
        thread.join(wait)

    def _run(self) -> None:
        try:
            self.work(self)
            self.seconds = time.perf_counter() - self.started
        except Exception as error:  # shown on the page; the next request starts the job again
            self.error = f"{type(error).__name__}: {error}"

    @property
    def busy(self) -> bool:
        """True while the worker runs."""
        return self.thread is not None and self.thread.is_alive()

    def status(self) -> Dict[str, Any]:
        """How far the view is: done of total, busy, seconds so far (or of the last pass), the error if any."""
        seconds = time.perf_counter() - self.started if self.busy else self.seconds
        return {"done": self.done, "total": self.total, "busy": self.busy, "seconds": seconds, "error": self.error}


class RunCache:
    """The views of one run kept between requests, each with the job that keeps it up to date."""

    def __init__(self) -> None:
        self.progress = ProgressReplay()
        self.series = ProgressSeries()
        self.islands: set = set()
        self.archive: Optional[ArchiveReplay] = None
        self.training: Optional["TrainingView"] = None
        self.jobs: Dict[str, Job] = {}
        self.config: Optional["core.EvolutionConfig"] = None  # read once, for the LLM prices
        self.llm_spend: Optional[Tuple[int, Optional[Dict[str, Any]]]] = None  # (at step count, spend)


@dataclass
class TrainingView:
    """The SFT and RL exports' decisions on a run, made by kernelsmith.training with its default options."""

    sft: Any  # training.SftExport
    rl: Any  # training.RlExport
    evaluations: int
    step_count: int
    status: str
    seconds: float
    #: Per step id: its parent, child and mutation, for the table of steps.
    steps_by_id: Dict[int, Dict[str, Any]] = field(default_factory=dict)
    #: When the pass ended (time.monotonic()).
    finished: float = 0.0


#: Seconds a request waits for a view's worker before it answers with what is ready.
JOB_WAIT_SECONDS = 0.25
#: The training decisions of a run that moves on are worked out again at most this often, and never sooner than
#: twice the last pass took after it.
TRAINING_PAUSE_SECONDS = 10.0
#: Evaluations a worker reads in one query (each a short read transaction, so the page sees partial results).
CHUNK = 5000


class Stores:
    """The run stores served, by index (their order on the command line). Raises StoreError at start for a path
    that is not a readable run store."""

    def __init__(self, paths: Sequence[str]) -> None:
        self.paths = distinct_store_paths(list(paths))
        for path in self.paths:
            connection, _ = connect_read_only(path)  # fails now, saying why, rather than on the first page
            connection.close()
        self.readers = [RunStoreReader(path) for path in self.paths]
        self._caches: Dict[Tuple[int, int], RunCache] = {}
        self._caches_lock = threading.Lock()

    # -- lookups ------------------------------------------------------------------------------------

    def reader(self, store: int) -> RunStoreReader:
        """The reader of store number `store`; raises NotFound for a number this server does not serve."""
        if not 0 <= store < len(self.readers):
            raise NotFound(f"there is no store {store}: this server shows stores 0 to {len(self.readers) - 1}")
        return self.readers[store]

    def run_row(self, store: int, run: int) -> Dict[str, Any]:
        """The run's row in ``runs`` (every column); raises NotFound when the store has no such run."""
        row = self.reader(store).run_row(run)
        if row is None:
            raise NotFound(f"the store '{self.paths[store]}' has no run {run}")
        return row

    def _cache(self, store: int, run: int) -> RunCache:
        with self._caches_lock:
            return self._caches.setdefault((store, run), RunCache())

    def _job(self, store: int, run: int, name: str) -> Job:
        cache = self._cache(store, run)
        with self._caches_lock:
            if name not in cache.jobs:
                work = {"progress": self._progress_work, "archive": self._archive_work,
                        "training": self._training_work}[name]
                cache.jobs[name] = Job(f"{name}-{store}-{run}", lambda job: work(job, store, run, cache))
            return cache.jobs[name]

    def warm_up(self) -> None:
        """Starts the progress and archive workers of each store's newest run, so that their pages are ready when
        someone opens them."""
        for store, reader in enumerate(self.readers):
            latest = reader.latest_run_id()
            if latest is not None:
                for name in ("progress", "archive"):
                    self._job(store, latest, name).ensure(0.0)

    # -- the workers --------------------------------------------------------------------------------

    def _progress_work(self, job: Job, store: int, run: int, cache: RunCache) -> None:
        reader = self.reader(store)
        if cache.progress.last_sequence < 0:  # the reference and the seeds count on every island
            cache.progress = ProgressReplay(islands_of(self.run_row(store, run)))
        job.total = reader.evaluation_count(run)
        while True:
            rows = reader.progress_rows(run, cache.progress.last_sequence, CHUNK)
            if not rows:
                break
            with job.lock:
                for row in rows:
                    point = cache.progress.add(row)
                    cache.series.add(cache.series.speedup, "all", point.sequence, point.best_speedup)
                    cache.series.add(cache.series.fraction, "all", point.sequence, point.best_sol_fraction)
                    for island in point.islands:
                        cache.islands.add(island)
                        cache.series.add(cache.series.speedup, str(island), point.sequence,
                                         cache.progress.island_best_speedup.get(island, 0.0))
                        cache.series.add(cache.series.fraction, str(island), point.sequence,
                                         cache.progress.island_best_sol_fraction.get(island, 0.0))
                    if point.status == "ok" and not point.confirmed:
                        cache.series.add_unconfirmed(point.sequence, point.speedup, point.best_speedup)
                job.done += len(rows)
                job.total = max(job.total, job.done)

    def _archive_work(self, job: Job, store: int, run: int, cache: RunCache) -> None:
        reader = self.reader(store)
        if cache.archive is None:
            cache.archive = ArchiveReplay(config_json_of(self.run_row(store, run)))
        job.total = reader.evaluation_count(run)

        def taken(count: int) -> None:
            job.done += count
            job.total = max(job.total, job.done)

        cache.archive.update(reader, run, CHUNK, job.lock, taken)

    def _training_work(self, job: Job, store: int, run: int, cache: RunCache) -> None:
        from kernelsmith import training

        counts = self.reader(store).run_counts(run) or {}
        key = (counts.get("evaluations"), counts.get("steps"), counts.get("status"))
        last = cache.training
        if last is not None and (last.evaluations, last.step_count, last.status) == key:
            return  # nothing new since the last pass
        if last is not None:
            # A run that keeps moving is not worked out again at once; the page shows the last pass meanwhile,
            # and the job stays busy, so that the page polls on and shows the next one.
            pause = last.finished + max(TRAINING_PAUSE_SECONDS, 2 * last.seconds) - time.monotonic()
            if pause > 0:
                time.sleep(pause)
        started = time.perf_counter()
        job.done, job.total = 0, counts.get("steps", 0)
        runs = read_runs(self.paths[store], [run])  # one snapshot: the decisions agree with one state of the run
        steps_by_id = {step.id: {"parent": step.parent_ids[0] if step.parent_ids else None,
                                 "child": step.child_id or None, "mutation": step.mutation}
                       for run_record in runs for step in run_record.steps}
        view = TrainingView(training.build_sft(runs), training.build_rl(runs), len(runs[0].evaluations),
                            len(runs[0].steps), runs[0].status, 0.0, steps_by_id)
        view.seconds = time.perf_counter() - started
        view.finished = time.monotonic()
        with job.lock:
            cache.training = view
            job.done = job.total = view.step_count

    # -- pages --------------------------------------------------------------------------------------

    def overview(self) -> Dict[str, Any]:
        """Each store with its runs (newest first) and their counts and best program, and a signature that changes
        when any of them does (the page polls it)."""
        stores = [{"index": index, "path": path, "runs": reader.runs_overview()}
                  for index, (path, reader) in enumerate(zip(self.paths, self.readers))]
        signature = ";".join(f"{store['index']}:{run['id']}/{run['status']}/{run['evaluations']}/{run['steps']}"
                             for store in stores for run in store["runs"])
        return {"stores": stores, "signature": signature,
                "running": any(run["status"] == "running" for store in stores for run in store["runs"])}

    def state(self, store: int, run: int) -> Dict[str, Any]:
        """What changes while the run goes on: status, counts, the best confirmed program so far (``best``) and the
        fastest correct one that is not confirmed and beats it (``unconfirmed``, with its reasons), and how far the views
        computed in the background have come (they change the signature too, so that a page shows them when
        ready)."""
        counts = self.reader(store).run_counts(run)
        if counts is None:
            raise NotFound(f"the store '{self.paths[store]}' has no run {run}")
        counts["best"] = self.reader(store).best_evaluation(run)  # the best confirmed one
        above = self.reader(store).unconfirmed_above(run, counts["best"]["speedup"] if counts["best"] else 0.0, 1)
        counts["unconfirmed"] = above[0] if above else None  # faster, not confirmed: shown apart, with why
        counts["llm"] = self.llm_spend(store, run, counts["steps"])
        cache = self._cache(store, run)
        counts["views"] = {name: job.status() for name, job in sorted(cache.jobs.items())}
        views = ",".join(f"{name}:{'busy' if job.busy else 'idle'}:{job.done}" for name, job in sorted(cache.jobs.items()))
        counts["signature"] = f"{counts['status']}/{counts['evaluations']}/{counts['steps']}/{views}"
        return counts

    def llm_spend(self, store: int, run: int, steps: int) -> Optional[Dict[str, Any]]:
        """What the run spent on a model, as `kernelsmith report` counts it (calls, prompt_tokens, completion_tokens,
        cost at the run's llm_prices, priced: whether it has prices), or None when it used no model. Read again only
        when the run's step count (`steps`) has changed."""
        cache = self._cache(store, run)
        if cache.llm_spend is not None and cache.llm_spend[0] == steps:
            return cache.llm_spend[1]
        by_model = self.reader(store).llm_tokens_by_model(run)
        spend = None
        if by_model:
            if cache.config is None:
                cache.config = core.EvolutionConfig.from_json(config_json_of(self.run_row(store, run)))
            spend = {"calls": sum(m["calls"] for m in by_model.values()),
                     "prompt_tokens": sum(m["prompt_tokens"] for m in by_model.values()),
                     "completion_tokens": sum(m["completion_tokens"] for m in by_model.values()),
                     "cost": sum(cache.config.llm_cost(model, m["prompt_tokens"], m["completion_tokens"])
                                 for model, m in by_model.items()),
                     "priced": bool(cache.config.llm_prices)}
        cache.llm_spend = (steps, spend)
        return spend

    def progress(self, store: int, run: int, since: int = -1) -> Dict[str, Any]:
        """The confirmed best-so-far curves' change points after evaluation `since`, the correct evaluations that are
        not confirmed and beat them (``unconfirmed``, apart), the last evaluation taken in, and how far the worker
        has come."""
        cache = self._cache(store, run)
        job = self._job(store, run, "progress")
        job.ensure(JOB_WAIT_SECONDS)
        with job.lock:
            document = cache.series.since(since)
            document["last_sequence"] = cache.progress.last_sequence
            document["islands"] = sorted(cache.islands)
        document["view"] = job.status()
        return document

    def evaluations(self, store: int, run: int, before: Optional[int]) -> List[Dict[str, Any]]:
        """A page of evaluations, newest first (before the sequence `before` when given)."""
        return self.reader(store).evaluations_page(run, before, PAGE_ROWS)

    def archive(self, store: int, run: int) -> Tuple[Optional[ArchiveReplay], Job]:
        """The run's archive as far as its worker has rebuilt it (None before the first evaluations), and the job."""
        cache = self._cache(store, run)
        job = self._job(store, run, "archive")
        job.ensure(JOB_WAIT_SECONDS)
        return cache.archive, job

    def training(self, store: int, run: int) -> Tuple[Optional[TrainingView], Job]:
        """The SFT and RL exports' decisions on the run as last worked out (None before the first pass), and the job
        that works them out again when the run has new steps or evaluations."""
        cache = self._cache(store, run)
        job = self._job(store, run, "training")
        job.ensure(JOB_WAIT_SECONDS)
        return cache.training, job

    def lineage(self, store: int, run: int, program_id: Optional[str], limit: int) -> Dict[str, Any]:
        """The lineage of a program (default: the best confirmed one) laid out for the page: at most `limit` nodes, nearest first,
        each with a lane (column of the graph) and row, and edges from each child to its parents that are shown."""
        reader = self.reader(store)
        limit = max(1, min(int(limit), LINEAGE_MAX))
        if program_id is None:
            best = reader.best_evaluation(run)
            if best is None:
                return {"root": None, "nodes": [], "edges": [], "lanes": 0, "more": False, "limit": limit,
                        "more_limit": limit}
            program_id = best["program_id"]
        nodes = reader.ancestors(run, program_id, limit + 1)
        if not nodes:
            raise NotFound(f"run {run} of '{self.paths[store]}' has no program '{program_id}'")
        more = len(nodes) > limit
        return dict(lineage_layout(nodes[:limit], program_id), more=more and limit < LINEAGE_MAX, limit=limit,
                    more_limit=min(4 * limit, LINEAGE_MAX))

    def program(self, store: int, run: int, program_id: str) -> Dict[str, Any]:
        """One program for its page: the row, the Evaluation document, the diff to each parent and the steps that
        proposed it (prompt and response for LLM steps)."""
        reader = self.reader(store)
        program = reader.program_record(run, program_id)
        if program is None:
            raise NotFound(f"run {run} of '{self.paths[store]}' has no program '{program_id}'")
        evaluation = None
        if program["json"]:
            try:
                evaluation = _inputs.loads(program["json"], f"the evaluation of program {program_id}")
            except json.JSONDecodeError:
                evaluation = None
        parents = reader.program_sources(run, program["parent_ids"])
        diffs = [{"parent": parent, "lines": source_diff(parents[parent], program["source"], parent, program_id)}
                 for parent in program["parent_ids"] if parent in parents]
        steps = []
        for step in reader.steps_of_child(run, program_id):
            try:
                messages = step.messages()
                messages_error = None
            except core.StoreError as error:  # a prompt that is not chat messages is shown as text
                messages, messages_error = [], str(error)
            steps.append({"step": step, "messages": messages, "messages_error": messages_error})
        return {"program": program, "evaluation": evaluation, "sections": evaluation_sections(evaluation),
                "evaluation_json": json.dumps(evaluation, indent=2) if evaluation is not None else program["json"],
                "diffs": diffs, "steps": steps}


# --------------------------------------------------------------------------------------------------
# layouts and sections


def lineage_layout(nodes: List[Dict[str, Any]], root_id: str) -> Dict[str, Any]:
    """Rows (nearest first) and lanes for a lineage graph: a node's first parent stays in its lane, a crossover's
    second parent opens a new lane, as `git log --graph` draws merges."""
    nodes = sorted(nodes, key=lambda node: (node["depth"], -node["generation"], node["id"]))
    by_id = {node["id"]: node for node in nodes}
    lanes: Dict[str, int] = {root_id: 0}
    next_lane = 1
    for node in nodes:
        lane = lanes.setdefault(node["id"], next_lane)
        if lane == next_lane:
            next_lane += 1
        for index, parent in enumerate(node["parent_ids"]):
            if parent in by_id and parent not in lanes:
                if index == 0:
                    lanes[parent] = lane
                else:
                    lanes[parent] = next_lane
                    next_lane += 1
    rows = {node["id"]: row for row, node in enumerate(nodes)}
    laid_out = [dict(node, row=rows[node["id"]], lane=lanes[node["id"]]) for node in nodes]
    edges = [{"child": node["id"], "parent": parent, "from_row": rows[node["id"]], "from_lane": lanes[node["id"]],
              "to_row": rows[parent], "to_lane": lanes[parent]}
             for node in nodes for parent in node["parent_ids"] if parent in rows]
    return {"root": root_id, "nodes": laid_out, "edges": edges, "lanes": max(lanes.values(), default=0) + 1}


def source_diff(before: str, after: str, before_name: str, after_name: str) -> List[Tuple[str, str]]:
    """A unified diff as (kind, line) pairs, kind one of 'add', 'remove', 'hunk', 'context', 'header'."""
    lines = []
    for line in difflib.unified_diff(before.splitlines(), after.splitlines(), before_name, after_name, lineterm=""):
        if line.startswith(("+++", "---")):
            kind = "header"
        elif line.startswith("@@"):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "remove"
        else:
            kind = "context"
        lines.append((kind, line))
    return lines


def _number(value: Any) -> Optional[float]:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def noisy(noise: Any) -> bool:
    """True when a timing's noise (relative standard deviation) makes it untrustworthy (above NOISY_TIMING)."""
    value = _number(noise)
    return value is not None and value > NOISY_TIMING


def evaluation_sections(evaluation: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """The parts of an Evaluation document (docs/evaluation-schema.md) that the program page shows in their own
    sections; the whole document is shown as JSON too, so a field missing here is never hidden."""
    if not evaluation:
        return {}
    timing = evaluation.get("timing") or {}
    baseline = evaluation.get("baseline_timing") or {}
    sol = evaluation.get("sol") or {}
    compile_report = evaluation.get("compile") or {}
    correctness = evaluation.get("correctness") or {}
    integrity = evaluation.get("integrity") or {}
    return {
        "status": evaluation.get("status", ""),
        "message": evaluation.get("message", ""),
        "speedup": _number(evaluation.get("speedup")),
        "fitness": _number(evaluation.get("fitness")),
        "timing": {key: timing.get(key) for key in ("median_ms", "mean_ms", "min_ms", "noise", "samples", "mode")
                   if key in timing} if timing else None,
        "noisy": noisy(timing.get("noise")),
        "beyond_limit": (_number(sol.get("fraction")) or 0.0) > 1.0,
        "baseline_ms": _number(baseline.get("median_ms")) if baseline else None,
        "sol": {key: sol.get(key) for key in ("fraction", "achieved_gbps", "achieved_gflops", "bound")
                if key in sol} if sol else None,
        "compile": compile_report or None,
        "correctness": correctness or None,
        "flags": list(integrity.get("flags") or []),
    }
