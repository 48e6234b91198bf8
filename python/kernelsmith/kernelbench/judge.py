"""`kernelsmith kernelbench judge`: a verdict on every ModelNew file of a corpus (docs/kernelbench-judge.md).

A corpus is a JSONL file with one object per line ``{"name", "level", "problem_id", "code"}``, or a folder of
files named as KernelBench's generation scripts name them (``level_<L>_problem_<P>_sample_<S>_kernel.py``). Each
file is evaluated against its imported problem by the sandboxed evaluator, several at once over the evaluator's
devices, and gets a verdict:

- ``rejected``: its status is not ok (incorrect, refused, crashed, timed out, did not build), or it could not be
  evaluated at all (a malformed line, an unknown problem, a task that does not load);
- ``flagged``: correct, but carrying an integrity flag that casts doubt (``kernelsmith.store.DOUBT_FLAGS``, read
  when the verdict is given), or labelled a PyTorch-only rewrite (``allow_torch_only``);
- ``trusted``: correct and nothing casts doubt on it.

KernelBench's metrics (fast_p, geomean speedups, correctness) are computed by kernelsmith.kernelbench.metrics
twice: over every file, counting the correct ones, and counting only the trusted ones as correct.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from kernelsmith.kernelbench.metrics import BASELINES, Metrics, ProblemResult, summarize
from kernelsmith.kernelbench.report import _SPEEDUP_KEYS, _positive, _timed_only, problem_id

#: Schema of the document `kernelsmith kernelbench judge --json` prints.
JUDGE_SCHEMA = "kernelsmith.kernelbench_judge/1"

#: The verdicts, from best to worst.
TRUSTED, FLAGGED, REJECTED = "trusted", "flagged", "rejected"
VERDICTS = (TRUSTED, FLAGGED, REJECTED)

#: The file names KernelBench's generation scripts give the ModelNew files they write.
KERNEL_FILE = re.compile(r"^level_(\d+)_problem_(\d+)_sample_(\d+)_kernel\.py$")

#: The label (an integrity flag) of a PyTorch-only rewrite evaluated under the policy that allows it.
TORCH_ONLY = "torch_only"

#: EvaluatorOptions.host_code_policy values: a ModelNew must run kernels of its own, or may be PyTorch only.
CUSTOM_KERNEL_POLICY, TORCH_ONLY_POLICY = "custom_kernel", "torch_only_allowed"


@dataclass
class CorpusEntry:
    """One ModelNew file of a corpus; `error` says why it cannot be evaluated (it is then rejected)."""

    name: str
    level: Optional[int]
    problem_id: Optional[int]
    code: str
    #: Where it came from: 'corpus.jsonl line 3', or the file's path.
    origin: str
    error: Optional[str] = None


@dataclass
class Corpus:
    """The entries of a corpus, in order, and the files of a corpus folder whose names are not understood."""

    source: str
    entries: List[CorpusEntry]
    not_understood: List[str] = field(default_factory=list)


@dataclass
class JudgeResult:
    """The verdict on one corpus file (the fields of the JSON document's `results`)."""

    name: str
    level: Optional[int]
    problem_id: Optional[int]
    task_name: Optional[str]
    status: str
    verdict: str
    flags: List[str]
    #: The candidate's own kernels that ran, with their share of the device time: {"share", "calls", "kernels":
    #: [{"name", "launches", "device_seconds"}]}; None when the evaluation does not report what ran.
    custom_kernels: Optional[Dict[str, Any]]
    #: Speedup over each PyTorch baseline (metrics.BASELINES names); None where unknown.
    speedups: Dict[str, Optional[float]]
    message: str
    #: Why the verdict is `flagged`: the doubt-casting flags, and 'torch_only' for a PyTorch-only rewrite.
    doubts: List[str] = field(default_factory=list)
    origin: str = ""
    #: The Evaluation, when the file was evaluated (not in the JSON document: `kernelsmith eval --json` prints it).
    evaluation: Any = None

    def as_dict(self) -> Dict[str, Any]:
        """The result as the JSON document's `results` hold it."""
        return {
            "name": self.name, "level": self.level, "problem_id": self.problem_id, "task_name": self.task_name,
            "status": self.status, "verdict": self.verdict, "flags": list(self.flags),
            "custom_kernels": self.custom_kernels, "speedups": dict(self.speedups), "message": self.message,
            "doubts": list(self.doubts), "origin": self.origin,
        }  # fmt: skip


@dataclass
class JudgeReport:
    """Every file's result and the metrics: 'all' (correct files count) and 'trusted' (only trusted ones count)."""

    corpus: Corpus
    results: List[JudgeResult]
    metrics: Dict[str, Metrics]
    notes: List[str] = field(default_factory=list)

    def timed_baselines(self) -> Tuple[str, ...]:
        """Eager, and each other baseline some file has a speedup over: the metrics of the others are null."""
        return tuple(b for b in BASELINES if b == "eager" or any(r.speedups.get(b) is not None for r in self.results))

    def counts(self) -> Dict[str, int]:
        """How many files got each verdict."""
        return {verdict: sum(1 for r in self.results if r.verdict == verdict) for verdict in VERDICTS}

    def as_dict(self) -> Dict[str, Any]:
        """The JSON document (JUDGE_SCHEMA)."""
        return {
            "schema": JUDGE_SCHEMA,
            "corpus": self.corpus.source,
            "results": [result.as_dict() for result in self.results],
            "verdicts": self.counts(),
            "baselines_timed": list(self.timed_baselines()),
            "metrics": {name: _timed_only(metrics.as_dict(), self.timed_baselines())
                        for name, metrics in self.metrics.items()},
            "not_understood": list(self.corpus.not_understood),
            "notes": list(self.notes),
        }


# ---- reading a corpus


def _integer(value: Any) -> Optional[int]:
    """A level or problem number given as 3 or "3"; None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _entry_of_line(line: str, number: int, path: str) -> CorpusEntry:
    where = f"{path} line {number}"
    try:
        document = json.loads(line)
    except ValueError as error:
        return CorpusEntry(f"line {number}", None, None, "", where, f"{where}: not JSON ({error})")
    if not isinstance(document, dict):
        return CorpusEntry(f"line {number}", None, None, "", where,
                           f"{where}: a {type(document).__name__}, not an object with name, level, problem_id, code")
    name = document.get("name")
    name = str(name) if name not in (None, "") else f"line {number}"
    level, problem = _integer(document.get("level")), _integer(document.get("problem_id"))
    code = document.get("code")
    wrong = []
    if level is None:
        wrong.append(f"level {document.get('level')!r} is not a number" if "level" in document else "no level")
    if problem is None:
        wrong.append(f"problem_id {document.get('problem_id')!r} is not a number" if "problem_id" in document
                     else "no problem_id")
    if not isinstance(code, str) or not code.strip():
        wrong.append("no code" if code in (None, "") else f"code is a {type(code).__name__}, not a string")
    error = f"{where}: {'; '.join(wrong)}" if wrong else None
    return CorpusEntry(name, level, problem, code if isinstance(code, str) else "", where, error)


def read_jsonl(path: str) -> Corpus:
    """The entries of a JSONL corpus; a malformed line becomes an entry whose `error` names the line."""
    entries = []
    with open(path, encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                entries.append(_entry_of_line(line, number, path))
    return Corpus(path, entries)


def read_folder(path: str) -> Corpus:
    """The ModelNew files of a corpus folder named level_<L>_problem_<P>_sample_<S>_kernel.py, in (level, problem,
    sample) order; other files are listed as not understood."""
    found: List[Tuple[Tuple[int, int, int], CorpusEntry]] = []
    not_understood = []
    for entry in sorted(os.listdir(path)):
        full = os.path.join(path, entry)
        if not os.path.isfile(full):
            continue
        match = KERNEL_FILE.match(entry)
        if match is None:
            not_understood.append(entry)
            continue
        level, problem, sample = (int(group) for group in match.groups())
        try:
            with open(full, encoding="utf-8") as handle:
                code, error = handle.read(), None
        except (OSError, UnicodeDecodeError) as failure:
            code, error = "", f"{full}: cannot read it ({failure})"
        found.append(((level, problem, sample), CorpusEntry(entry[:-3], level, problem, code, full, error)))
    found.sort(key=lambda item: item[0])
    return Corpus(path, [entry for _, entry in found], not_understood)


def read_corpus(path: str) -> Corpus:
    """A corpus from a JSONL file or a folder. Raises FileNotFoundError when `path` is neither."""
    if os.path.isdir(path):
        return read_folder(path)
    if os.path.isfile(path):
        return read_jsonl(path)
    raise FileNotFoundError(f"{path}: no such file or folder; give a JSONL file (one {{\"name\", \"level\", "
                            f"\"problem_id\", \"code\"}} object per line) or a folder of "
                            f"level_<L>_problem_<P>_sample_<S>_kernel.py files")


# ---- finding the problems


def task_folders(tasks_dir: str) -> Dict[Tuple[int, int], str]:
    """(level, problem number) -> task folder, for the folders of `tasks_dir` named kb_l<level>_<number>_... that
    hold a task.json."""
    found: Dict[Tuple[int, int], str] = {}
    if not os.path.isdir(tasks_dir):
        return found
    for entry in sorted(os.listdir(tasks_dir)):
        identity = problem_id(entry)
        if identity is not None and os.path.isfile(os.path.join(tasks_dir, entry, "task.json")):
            found.setdefault(identity, os.path.join(tasks_dir, entry))
    return found


def _level_folder(kernelbench: str, level: int) -> Optional[str]:
    """The folder of one level under a KernelBench checkout (KernelBench/level<L>, or level<L> itself)."""
    for candidate in (os.path.join(kernelbench, f"level{level}"),
                      os.path.join(kernelbench, "KernelBench", f"level{level}")):
        if os.path.isdir(candidate):
            return candidate
    return None


def import_needed(kernelbench: str, wanted: Iterable[Tuple[int, int]], tasks_dir: str, *, device: str = "auto",
                  timeout: Optional[float] = None, python: Optional[str] = None,
                  log: Optional[Callable[[str], None]] = None) -> Dict[Tuple[int, int], str]:
    """Imports the problems `wanted` that `tasks_dir` does not hold yet from a KernelBench checkout; returns
    (level, number) -> why, for the problems that could not be imported (no such level or file, refused)."""
    from kernelsmith.kernelbench import importer

    have = task_folders(tasks_dir)
    missing: Dict[int, List[int]] = {}
    for level, number in sorted(set(wanted)):
        if (level, number) not in have:
            missing.setdefault(level, []).append(number)
    why: Dict[Tuple[int, int], str] = {}
    for level, numbers in missing.items():
        folder = _level_folder(kernelbench, level)
        if folder is None:
            for number in numbers:
                why[(level, number)] = f"--kernelbench {kernelbench} has no level{level} folder"
            continue
        files = importer.problem_files(folder, numbers)
        found = {importer.manifest_mod.problem_number(os.path.basename(f)) for f in files}
        for number in numbers:
            if number not in found:
                why[(level, number)] = f"{folder} has no problem file numbered {number}"
        if not files:
            continue
        if log is not None:
            log(f"importing {len(files)} problem(s) of level {level} from {folder} into {tasks_dir}")
        options = {"timeout": timeout} if timeout is not None else {}
        for result in importer.import_directory(folder, level, tasks_dir, problems=sorted(found), python=python,
                                                device=device, **options):
            if not result.imported and result.number is not None:
                why[(level, result.number)] = f"the importer refused problem {result.number}: {result.reason}"
    return why


# ---- verdicts


def _flags(evaluation) -> List[str]:
    integrity = getattr(evaluation, "integrity", None)
    return [str(flag) for flag in getattr(integrity, "flags", []) or []]


def _status(evaluation) -> str:
    return str(evaluation.status).split(".")[-1]


def doubt_flags() -> Dict[str, str]:
    """The flags that cast doubt on an evaluation, as the library defines them now (kernelsmith.store.DOUBT_FLAGS)."""
    import kernelsmith

    return dict(kernelsmith.doubt_casting_flags())


def is_torch_only(evaluation) -> bool:
    """True when the evaluation labels the candidate a PyTorch-only rewrite (the torch_only flag)."""
    return TORCH_ONLY in _flags(evaluation)


def verdict_of(evaluation, doubts: Optional[Dict[str, str]] = None) -> Tuple[str, List[str]]:
    """(verdict, why it is flagged) of an Evaluation: rejected unless ok; flagged for a doubt-casting flag or a
    PyTorch-only label; else trusted."""
    if _status(evaluation) != "ok":
        return REJECTED, []
    doubts = doubt_flags() if doubts is None else doubts
    why = [flag for flag in _flags(evaluation) if flag in doubts]
    if is_torch_only(evaluation) and TORCH_ONLY not in why:
        why.append(TORCH_ONLY)
    return (FLAGGED, why) if why else (TRUSTED, [])


def custom_kernels_of(evaluation) -> Optional[Dict[str, Any]]:
    """The candidate's own kernels of the evaluation's `host_code` report, with their device-time share; None when
    the evaluation has no such report (a device-code candidate, or a library without it)."""
    host_code = getattr(evaluation, "host_code", None)
    if host_code is None:
        return None
    kernels = []
    for kernel in getattr(host_code, "kernels", []) or []:
        if getattr(kernel, "origin", "") != "candidate":
            continue
        kernels.append({"name": getattr(kernel, "name", ""), "launches": getattr(kernel, "launches", None),
                        "device_seconds": getattr(kernel, "device_seconds", None)})
    share = getattr(host_code, "custom_share", None)
    return {"share": float(share) if share is not None else None, "calls": getattr(host_code, "custom_calls", None),
            "kernels": kernels}


def speedups_of(evaluation) -> Dict[str, Optional[float]]:
    """The speedup over each baseline (metrics.BASELINES names) of an ok evaluation; None where unknown."""
    speedups = dict(getattr(evaluation, "speedups", {}) or {})
    return {attribute: _positive(speedups.get(key)) for key, attribute in _SPEEDUP_KEYS.items()}


def result_of(entry: CorpusEntry, task_name: Optional[str], evaluation,
              doubts: Optional[Dict[str, str]] = None) -> JudgeResult:
    """The JudgeResult of an evaluated entry."""
    verdict, why = verdict_of(evaluation, doubts)
    ok = verdict != REJECTED
    return JudgeResult(entry.name, entry.level, entry.problem_id, task_name, _status(evaluation), verdict,
                       _flags(evaluation), custom_kernels_of(evaluation),
                       speedups_of(evaluation) if ok else {b: None for b in BASELINES},
                       str(getattr(evaluation, "message", "")), why, entry.origin, evaluation)


def not_evaluated(entry: CorpusEntry, task_name: Optional[str], why: str, status: str = "not_evaluated") -> JudgeResult:
    """The rejected result of an entry that could not be evaluated, saying why."""
    return JudgeResult(entry.name, entry.level, entry.problem_id, task_name, status, REJECTED, [], None,
                       {b: None for b in BASELINES}, why, [], entry.origin)


# ---- metrics


def metrics_of(results: Sequence[JudgeResult]) -> Dict[str, Metrics]:
    """KernelBench's metrics over every result: 'all' counts each correct file (status ok) as correct, 'trusted'
    counts only the trusted ones; both over every file of the corpus."""
    def problems(counted: Callable[[JudgeResult], bool]) -> List[ProblemResult]:
        rows = []
        for index, result in enumerate(results):
            correct = counted(result)
            speedups = result.speedups if correct else {}
            rows.append(ProblemResult(f"{index}:{result.name}", result.level, attempted=True, correct=correct,
                                      **{b: speedups.get(b) for b in BASELINES}))
        return rows

    return {"all": summarize(problems(lambda r: r.verdict != REJECTED)),
            "trusted": summarize(problems(lambda r: r.verdict == TRUSTED))}


# ---- judging


def set_torch_only_policy(options, allow: bool) -> bool:
    """Sets the evaluator's policy on PyTorch-only rewrites (EvaluatorOptions.host_code_policy) when the library
    has one; returns whether it has."""
    if not hasattr(options, "host_code_policy"):
        return False
    options.host_code_policy = TORCH_ONLY_POLICY if allow else CUSTOM_KERNEL_POLICY
    return True


def judge(corpus, *, tasks: Optional[str] = None, kernelbench: Optional[str] = None, evaluator=None,
          options=None, jobs: int = 0, allow_torch_only: bool = False, baselines: Optional[Sequence[str]] = None,
          import_device: str = "auto", import_timeout: Optional[float] = None,
          on_result: Optional[Callable[[JudgeResult], None]] = None,
          log: Optional[Callable[[str], None]] = None) -> JudgeReport:
    """Judges every ModelNew file of `corpus` (a path to a JSONL file or a folder, or a Corpus).

    The problems come from `tasks` (a folder of `kernelsmith kernelbench import`), imported there first from the
    KernelBench checkout `kernelbench` when given (into a temporary folder when `tasks` is not given).
    `evaluator` (default: one made from `options`, an EvaluatorOptions) evaluates `jobs` files at once (default
    its concurrency: one per device). `baselines` replaces the tasks' PyTorch baselines (e.g. ['eager'] skips
    torch.compile). `on_result` is called with each result as it comes, in completion order; the report keeps
    the corpus order. A file that cannot be evaluated is rejected with why; nothing stops the others."""
    import kernelsmith as ks

    if tasks is None and kernelbench is None:
        raise ks.ValidationError("give the folder of the imported problems (tasks, `kernelsmith kernelbench import "
                                 "--out`) or a KernelBench checkout to import them from (kernelbench)")
    if tasks is not None and kernelbench is None and not os.path.isdir(tasks):
        raise ks.NotFoundError(f"--tasks {tasks}: no such folder; give the --out folder of `kernelsmith kernelbench "
                               f"import`, or --kernelbench PATH to import the problems")
    corpus = corpus if isinstance(corpus, Corpus) else read_corpus(str(corpus))
    notes: List[str] = []
    temporary = None
    if tasks is None:
        temporary = tempfile.TemporaryDirectory(prefix="kernelsmith-judge-tasks-")
        tasks = temporary.name
    try:
        unimportable: Dict[Tuple[int, int], str] = {}
        if kernelbench is not None:
            os.makedirs(tasks, exist_ok=True)
            wanted = [(e.level, e.problem_id) for e in corpus.entries if e.error is None]
            unimportable = import_needed(kernelbench, wanted, tasks, device=import_device, timeout=import_timeout,
                                         log=log)
        folders = task_folders(tasks)
        if evaluator is None:
            if options is None:
                options = ks.EvaluatorOptions()
            if not set_torch_only_policy(options, allow_torch_only) and allow_torch_only:
                notes.append("this kernelsmith's evaluator has no policy on PyTorch-only rewrites: allow_torch_only "
                             "only labels the results that the evaluation marks as such")
            evaluator = ks.create_evaluator(options)
        doubts = doubt_flags()

        loaded: Dict[Tuple[int, int], Any] = {}  # (level, number) -> Task, or the error text
        def task_for(entry: CorpusEntry):
            key = (entry.level, entry.problem_id)
            if key not in loaded:
                folder = folders.get(key)
                if folder is None:
                    where = unimportable.get(key) or (
                        f"{tasks} holds no task folder kb_l{entry.level}_{entry.problem_id}_... (import the problem "
                        f"with `kernelsmith kernelbench import`, or give --kernelbench PATH)")
                    loaded[key] = f"unknown problem: level {entry.level} problem {entry.problem_id}: {where}"
                else:
                    try:
                        task = ks.Task.load(folder)
                        if baselines is not None and task.oracle is not None:
                            oracle = task.oracle
                            oracle.baselines = list(baselines)
                            task.oracle = oracle
                        loaded[key] = task
                    except ks.Error as error:
                        loaded[key] = f"cannot load the task {folder}: {error}"
            return loaded[key]

        def judge_one(entry: CorpusEntry) -> JudgeResult:
            if entry.error is not None:
                result = not_evaluated(entry, None, entry.error)
            else:
                task = task_for(entry)
                if isinstance(task, str):
                    result = not_evaluated(entry, None, task)
                else:
                    try:
                        evaluation = evaluator.evaluate(task, ks.Candidate("pytorch", entry.code))
                        result = result_of(entry, task.name, evaluation, doubts)
                    except Exception as error:  # a task or backend error costs this file only
                        result = not_evaluated(entry, task.name, f"the evaluation failed: {error}", "error")
            if on_result is not None:
                on_result(result)
            return result

        # Tasks load in this thread, before the evaluations start (Task.load is not shared across threads).
        for entry in corpus.entries:
            if entry.error is None:
                task_for(entry)
        width = jobs if jobs and jobs > 0 else max(1, int(evaluator.concurrency()))
        with ThreadPoolExecutor(max_workers=width) as pool:
            results = list(pool.map(judge_one, corpus.entries))
    finally:
        if temporary is not None:
            temporary.cleanup()
    if corpus.not_understood:
        notes.append(f"{len(corpus.not_understood)} file(s) of {corpus.source} not named "
                     f"level_<L>_problem_<P>_sample_<S>_kernel.py were not judged: {', '.join(corpus.not_understood)}")
    return JudgeReport(corpus, results, metrics_of(results), notes)


# ---- text


def _speedup_text(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.3f}x"


def _kernels_text(custom: Optional[Dict[str, Any]]) -> str:
    if custom is None:
        return "not measured"
    if not custom["kernels"]:
        return "none ran"
    names = ", ".join(f"{k['name']} x{k['launches']}" if k.get("launches") is not None else str(k["name"])
                      for k in custom["kernels"])
    share = custom.get("share")
    return names + (f" ({100 * share:.0f}% of device time)" if share is not None else "")


def format_result(result: JudgeResult) -> List[str]:
    """A result as text: one line with the verdict, then its details indented."""
    where = f"L{result.level} #{result.problem_id}" if result.level is not None else "problem ?"
    head = f"{result.verdict.upper():<8} {result.name} ({where}, {result.task_name or 'no task'}): {result.status}"
    lines = [head]
    if result.flags:
        lines.append(f"  flags: {', '.join(result.flags)}" + (f" (casting doubt: {', '.join(result.doubts)})"
                                                              if result.doubts else ""))
    elif result.doubts:
        lines.append(f"  flagged: {', '.join(result.doubts)}")
    if result.verdict != REJECTED:
        lines.append(f"  own kernels: {_kernels_text(result.custom_kernels)}")
        lines.append("  speedup: " + ", ".join(f"{_speedup_text(result.speedups.get(b))} over {label}"
                                                for b, label in (("eager", "eager"), ("compile", "torch.compile"))))
    if result.message and result.message != "ok":
        message = " ".join(result.message.split())
        lines.append(f"  message: {message[:300]}{'...' if len(message) > 300 else ''}")
    return lines


def format_report(report: JudgeReport, with_results: bool = True) -> str:
    """The whole report as text: each result (unless with_results is False: the command prints them as they
    come), the counts of verdicts, the metrics over all files and over the trusted ones, and notes."""
    from kernelsmith.kernelbench.report import _metrics_lines

    lines: List[str] = []
    if with_results:
        for result in report.results:
            lines += format_result(result)
        lines.append("")
    counts = report.counts()
    lines.append(f"{len(report.results)} file(s) judged from {report.corpus.source}: " +
                 ", ".join(f"{counts[v]} {v}" for v in VERDICTS))
    timed = report.timed_baselines()
    for name, metrics in report.metrics.items():
        counted = "every correct file counts" if name == "all" else "only trusted files count as correct"
        lines.append("")
        lines += _metrics_lines(f"{name} files, {counted}", metrics, timed, subject="file(s)", counted=None,
                                correct="correct" if name == "all" else "trusted", with_amsr=False)
    if report.notes:
        lines.append("")
        lines.append("notes:")
        lines += [f"  - {note}" for note in report.notes]
    return "\n".join(lines)


def format_json(report: JudgeReport) -> str:
    """The report as the JSON document `--json` prints."""
    return json.dumps(report.as_dict(), indent=2)
