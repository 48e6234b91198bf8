"""Importing KernelBench problems as kernelsmith tasks (docs/kernelbench.md).

:func:`import_problem` and :func:`import_directory` write one ordinary task folder per problem (``task.json``
with a PyTorch ``oracle``, and ``problem.py``, a copy of the problem file) or say why a problem was refused.
A problem file is executed only by the probe (:mod:`kernelsmith.kernelbench.probe`) in a helper process,
never in this one: a :class:`ProbeSession` keeps one helper for many problems and starts a new one after a
problem crashed it or hung (killed after ``timeout`` seconds), so each problem's failure stays its own.
"""

from __future__ import annotations

import ast
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, Iterable, List, Optional

from kernelsmith import _inputs
from kernelsmith._core import BackendUnavailableError, sandboxed_command
from kernelsmith.kernelbench import manifest as manifest_mod

#: Seconds one problem may take in the helper before it is killed and refused.
DEFAULT_TIMEOUT = 300.0
#: Seconds the helper may take to start (importing torch).
STARTUP_TIMEOUT = 180.0
#: How much of a crashed helper's stderr a refusal quotes.
STDERR_TAIL_CHARS = 600
IMPORT_REPORT = "import_report.json"
IMPORT_REPORT_SCHEMA = "kernelsmith.kernelbench_import/1"
PROBE_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "probe.py")


class ProbeUnavailable(BackendUnavailableError):
    """The helper process cannot run at all (no torch in the interpreter, a broken interpreter): no problem can
    be imported until that is fixed. The message says which interpreter and what to do."""


def helper_python(python: Optional[str] = None) -> str:
    """The interpreter that runs the probe: `python`, else $KERNELSMITH_PYTHON, else this one."""
    return python or os.environ.get("KERNELSMITH_PYTHON") or sys.executable


@dataclass
class ImportResult:
    """What became of one problem: imported (``task_dir`` holds the task) or refused (``reason``)."""

    path: str
    level: int
    number: Optional[int]
    task_name: str
    status: str  # "imported" or "refused"
    reason: str = ""
    task_dir: Optional[str] = None
    tensors: List[str] = field(default_factory=list)
    sizes: Dict[str, int] = field(default_factory=dict)
    notes: List[str] = field(default_factory=list)
    #: Inputs drawn wider than the problem's own because a trivial program passed on those:
    #: {input name: {"from": distribution, "to": distribution}} (docs/kernelbench.md, step 12 of "How a problem becomes a task").
    widened: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    #: What --scale / --size changed: {"scale": factor or None, "sizes": {name: {"from": own, "to": timing}},
    #: "bytes": {"from": all tensors at the problem's sizes, "to": at the task's}}; empty when nothing was asked.
    resized: Dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def imported(self) -> bool:
        return self.status == "imported"

    def as_dict(self) -> Dict[str, Any]:
        return asdict(self)


class ProbeSession:
    """One helper process serving probe requests; restarted after a crash or a timeout. Use as a context
    manager (or call close()) so the helper ends with the session."""

    def __init__(self, python: Optional[str] = None, device: str = "auto", timeout: float = DEFAULT_TIMEOUT,
                 startup_timeout: float = STARTUP_TIMEOUT):
        if not timeout > 0:
            raise ValueError(f"timeout {timeout}: give a positive number of seconds")
        self.python = helper_python(python)
        self.device = device
        self.timeout = timeout
        self.startup_timeout = startup_timeout
        self.torch_version = ""
        self.real_device = ""
        self._process: Optional[subprocess.Popen] = None
        # A problem file is code: the helper runs confined (docs/security.md), reading the system's folders,
        # the interpreter's, the package's and the problem files' folders, and writing only to its scratch.
        self._readable = {os.path.dirname(PROBE_SCRIPT)}
        self._scratch: Optional[str] = None
        self._stderr = None
        self._buffer = b""
        self._next_id = 0

    def __enter__(self) -> "ProbeSession":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            try:
                process.stdin.close()  # the helper's loop ends at the end of its input
                process.wait(timeout=5)
            except Exception:  # it did not end when asked: end it
                pass
            self._discard(process)
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    # -- the helper process
    def _start(self) -> None:
        self.close()
        self._stderr = tempfile.TemporaryFile()
        self._buffer = b""
        self._scratch = tempfile.mkdtemp(prefix="kernelsmith-probe-")
        command = sandboxed_command([self.python, PROBE_SCRIPT, "--serve", "--device", self.device], self._scratch,
                                    sorted(self._readable))
        try:
            # A session of its own, so that a timeout kills the helper and anything it started.
            self._process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             stderr=self._stderr, start_new_session=True)
        except OSError as error:
            raise ProbeUnavailable(f"cannot start the KernelBench probe with {self.python}: {error}; set "
                                   f"$KERNELSMITH_PYTHON to a Python with torch installed") from None
        line = self._read_line(self.startup_timeout)
        if line is None:
            tail = self._stderr_tail(0)
            self._discard(self._process)
            self._process = None
            raise ProbeUnavailable(f"the KernelBench probe ({self.python} {PROBE_SCRIPT}) did not start"
                                   + (f": {tail}" if tail else f" within {self.startup_timeout:g} s"))
        try:
            ready = _inputs.loads(line, "the KernelBench probe's first line")
        except json.JSONDecodeError as error:
            self.close()
            raise ProbeUnavailable(f"the KernelBench probe did not start: {error}") from None
        if not isinstance(ready, dict) or not ready.get("ready"):
            self.close()
            raise ProbeUnavailable(ready.get("reason", "the KernelBench probe did not start") if isinstance(ready, dict)
                                   else f"the KernelBench probe did not start: it said {line[:200]!r}")
        self.torch_version = ready.get("torch", "")
        self.real_device = ready.get("device", "")

    @staticmethod
    def _discard(process: subprocess.Popen) -> None:
        """Ends the helper (its whole process group) if it still runs, and closes its pipes."""
        if process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            process.wait()
        for pipe in (process.stdin, process.stdout):
            try:
                pipe.close()
            except OSError:  # a write end whose reader is gone may complain while flushing
                pass

    def _read_line(self, timeout: float) -> Optional[str]:
        """The helper's next line, or None when it exits (then it has been waited for) or `timeout` passes
        first (then it still runs)."""
        deadline = time.monotonic() + timeout
        fd = self._process.stdout.fileno()
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                left = deadline - time.monotonic()
                if left <= 0 or not selector.select(left):
                    return None
                chunk = os.read(fd, 1 << 16)
                if not chunk:  # end of output: it exited, or is exiting
                    try:
                        self._process.wait(timeout=10)
                    except subprocess.TimeoutExpired:
                        pass  # closed its stdout but lives on: treated as hanging
                    return None
                self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line.decode("utf-8", "replace")

    def _stderr_tail(self, start: int) -> str:
        self._stderr.flush()
        self._stderr.seek(start)
        text = self._stderr.read().decode("utf-8", "replace")
        self._stderr.seek(0, os.SEEK_END)
        lines = [line for line in text.strip().splitlines() if line.strip()]
        return " | ".join(lines)[-STDERR_TAIL_CHARS:]

    def probe(self, path: str, scale: Optional[float] = None,
              sizes: Optional[Dict[str, int]] = None) -> Dict[str, Any]:
        """The probe's reply for one problem file: {"ok": true, "facts": ...} or {"ok": false, "reason": ...},
        with its timing sizes scaled by `scale` and/or set by `sizes` (see check_resize).
        A hang or a crash of the helper is a refusal of that problem; the next call starts a new helper."""
        folder = os.path.dirname(os.path.abspath(path))
        if folder not in self._readable:  # a helper confined to other folders cannot read it: start one that can
            self._readable.add(folder)
            self.close()
        if self._process is None or self._process.poll() is not None:
            self._start()
        self._next_id += 1
        self._stderr.seek(0, os.SEEK_END)
        stderr_start = self._stderr.tell()
        request = {"id": self._next_id, "path": os.path.abspath(path)}
        if scale is not None:
            request["scale"] = scale
        if sizes:
            request["sizes"] = dict(sizes)
        try:
            self._process.stdin.write((json.dumps(request) + "\n").encode())
            self._process.stdin.flush()
        except BrokenPipeError:
            pass  # it died: read_line says so below
        line = self._read_line(self.timeout)
        if line is None:
            process, self._process = self._process, None
            if process.poll() is None:
                self._discard(process)
                return {"ok": False, "reason": f"timed out after {self.timeout:g} s (the problem hangs, or probing "
                                               f"it takes longer: raise the timeout)"}
            self._discard(process)
            status = process.returncode
            how = f"signal {signal.Signals(-status).name}" if status < 0 else f"exit status {status}"
            tail = self._stderr_tail(stderr_start)
            return {"ok": False, "reason": f"the problem crashed the helper process ({how})"
                                           + (f": {tail}" if tail else "")}
        try:
            reply = _inputs.loads(line, "the KernelBench probe's reply")
        except json.JSONDecodeError as error:
            self.close()
            return {"ok": False, "reason": f"{error} (restarted the helper)"}
        if not isinstance(reply, dict) or reply.get("id") != self._next_id:
            self.close()
            return {"ok": False, "reason": "the helper's reply did not match the request (restarted it)"}
        return reply


def _level_of(path: str, level: Optional[int]) -> int:
    if level is not None:
        if level < 1:
            raise ValueError(f"level {level}: KernelBench's levels are 1, 2, 3")
        return level
    found = manifest_mod.problem_level(path)
    if found is None:
        raise ValueError(f"{path}: the level is unknown (the file is not in a folder named level1, level2, ...); "
                         f"give the level (--level N, level=N)")
    return found


def check_resize(scale: Optional[float], sizes: Optional[Dict[str, int]]) -> None:
    """ValueError unless `scale` is None or a factor in (0, 1] and every value of `sizes` a positive integer."""
    if scale is not None and not (isinstance(scale, (int, float)) and not isinstance(scale, bool)
                                  and 0 < scale <= 1):
        raise ValueError(f"--scale {scale}: give a factor above 0 and at most 1 (0.01 makes every size a hundredth "
                         f"of the problem's own)")
    for name, value in (sizes or {}).items():
        if not (isinstance(value, int) and not isinstance(value, bool) and value > 0):
            raise ValueError(f"--size {name}={value}: give a positive integer for the size {name}")


def parse_size_overrides(specs: Iterable[str]) -> Dict[str, int]:
    """{name: value} of ``NAME=VALUE`` texts (--size); ValueError saying which one is malformed."""
    sizes: Dict[str, int] = {}
    for spec in specs:
        name, equals, value = spec.partition("=")
        name, value = name.strip(), value.strip()
        if not equals or not name.isidentifier():
            raise ValueError(f"--size {spec!r}: write NAME=VALUE, NAME a size constant of the problem file "
                             f"(e.g. --size batch_size=16)")
        try:
            sizes[name] = int(value)
        except ValueError:
            raise ValueError(f"--size {spec!r}: {value!r} is not an integer; give a positive integer") from None
    check_resize(None, sizes)
    return sizes


def _constants_of(path: str) -> Dict[str, int]:
    """The problem file's module-level integer constants, read without executing it (probe.find_constants)."""
    from kernelsmith.kernelbench import probe

    try:
        with open(path, encoding="utf-8") as f:
            return probe.find_constants(ast.parse(f.read()))
    except (OSError, UnicodeDecodeError, SyntaxError):
        return {}  # the probe refuses it, saying why


def import_problem(path: str, level: Optional[int] = None, out_dir: Optional[str] = None, *,
                   session: Optional[ProbeSession] = None, timeout: float = DEFAULT_TIMEOUT,
                   python: Optional[str] = None, device: str = "auto", verify: bool = True,
                   scale: Optional[float] = None, sizes: Optional[Dict[str, int]] = None) -> ImportResult:
    """Imports one KernelBench problem file into ``out_dir/<task name>/`` (a new temporary folder when
    `out_dir` is None). The file runs in a helper process (`session`'s, else a new one with `python`,
    `device` and `timeout`). The task's timing sizes are the problem's own, times `scale` (a factor in (0, 1])
    and/or set by `sizes` ({constant: value}; each must be a size of the problem, else it is refused); the
    result's `resized` says what changed. With `verify`, the written task is loaded with kernelsmith.Task.load;
    a task that does not load is refused with the loader's message. Raises ValueError when the level is
    unknown, the file is missing or `scale` or a size is not positive, ProbeUnavailable when the helper cannot
    run at all."""
    if not os.path.isfile(path):
        raise ValueError(f"{path}: no such problem file")
    check_resize(scale, sizes)
    level = _level_of(path, level)
    name = manifest_mod.task_name(path, level)
    result = ImportResult(path=os.path.abspath(path), level=level, number=manifest_mod.problem_number(path),
                          task_name=name, status="refused")
    started = time.monotonic()
    own_session = session is None
    if own_session:
        session = ProbeSession(python=python, device=device, timeout=timeout)
    try:
        reply = session.probe(path, scale, sizes)
    finally:
        if own_session:
            session.close()
    result.seconds = round(time.monotonic() - started, 3)
    if not reply.get("ok"):
        result.reason = reply.get("reason", "refused")
        _remove_stale_task(out_dir, name)
        return result
    facts = reply["facts"]
    result.notes = list(facts.get("notes", []))
    result.widened = dict(facts.get("widened") or {})
    result.resized = dict(facts.get("resized") or {})
    with open(path, encoding="utf-8") as f:
        source = f.read()
    try:
        name, document = manifest_mod.build_manifest(facts, path, level, source)
    except ValueError as error:
        result.reason = str(error)
        return result
    if out_dir is None:
        out_dir = tempfile.mkdtemp(prefix="kernelsmith-kernelbench-")
    task_dir = os.path.join(out_dir, name)
    os.makedirs(task_dir, exist_ok=True)
    # The oracle's module: the problem's source with its constants written NAME = <integer> (probe.py,
    # normalise_constants), the form in which the oracle sets them.
    with open(os.path.join(task_dir, manifest_mod.PROBLEM_FILE), "w", encoding="utf-8") as f:
        f.write(facts.pop("module_source"))
    with open(os.path.join(task_dir, "task.json"), "w", encoding="utf-8") as f:
        json.dump(document, f, indent=2)
        f.write("\n")
    # What the probe learnt, beside the task (the loader reads task.json only): for people and for debugging.
    with open(os.path.join(task_dir, "import.json"), "w", encoding="utf-8") as f:
        json.dump({"source": os.path.abspath(path), "level": level, "torch": session.torch_version,
                   "facts": facts}, f, indent=2)
        f.write("\n")
    if verify:
        import kernelsmith

        try:
            kernelsmith.Task.load(task_dir)
        except kernelsmith.Error as error:
            result.reason = f"the written task does not load: {error}"
            result.task_dir = task_dir
            return result
    result.status = "imported"
    result.task_dir = task_dir
    result.tensors = [t["name"] for t in document["tensors"]]
    result.sizes = dict(document["sizes"])
    return result


def parse_problem_numbers(spec: str) -> List[int]:
    """The problem numbers of a list like ``1-20,33``; ValueError saying which part is wrong."""
    numbers = set()
    for part in spec.split(","):
        bounds = [b.strip() for b in part.split("-")]
        if not (1 <= len(bounds) <= 2 and all(b.isdigit() for b in bounds)):
            raise ValueError(f"--problems {spec!r}: {part.strip()!r} is neither a number nor a range like 1-20; "
                             f"give comma-separated numbers and ranges, e.g. 1-20,33")
        first, last = int(bounds[0]), int(bounds[-1])
        if last < first:
            raise ValueError(f"--problems {spec!r}: the range {part.strip()!r} ends before it starts")
        numbers.update(range(first, last + 1))
    return sorted(numbers)


def _remove_stale_task(out_dir: Optional[str], name: str) -> None:
    """Removes the folder an earlier import wrote for a problem now refused (recognised by its import.json),
    so that no task of a refused problem is left to run."""
    if out_dir is None:
        return
    folder = os.path.join(out_dir, name)
    if os.path.isfile(os.path.join(folder, "import.json")):
        shutil.rmtree(folder)


def problem_files(directory: str, problems: Optional[Iterable[int]] = None) -> List[str]:
    """The KernelBench problem files of a folder (``<number>_<Name>.py``) in the order of their numbers, only
    those numbered in `problems` when given."""
    if not os.path.isdir(directory):
        raise ValueError(f"{directory}: no such folder")
    wanted = set(problems) if problems is not None else None
    files = []
    for entry in os.listdir(directory):
        number = manifest_mod.problem_number(entry)
        if number is not None and (wanted is None or number in wanted):
            files.append((number, entry))
    return [os.path.join(directory, entry) for _, entry in sorted(files)]


def import_directory(directory: str, level: Optional[int] = None, out_dir: str = "kernelbench-tasks", *,
                     problems: Optional[Iterable[int]] = None, timeout: float = DEFAULT_TIMEOUT,
                     python: Optional[str] = None, device: str = "auto", verify: bool = True,
                     scale: Optional[float] = None, sizes: Optional[Dict[str, int]] = None,
                     on_result=None) -> List[ImportResult]:
    """Imports every problem of a KernelBench level folder (or those numbered in `problems`) into `out_dir`,
    through one helper process, and writes ``out_dir/import_report.json``. `on_result(result)` is called after
    each problem (progress). The level comes from the folder's name (level1, ...) unless given. `scale` applies
    to every problem; each of `sizes` to the problems that have a constant of that name (ValueError, before
    anything is imported, when none of them has one)."""
    check_resize(scale, sizes)
    files = problem_files(directory, problems)
    constants = {path: _constants_of(path) for path in files} if sizes else {}
    unmatched = [name for name in sizes or {} if not any(name in c for c in constants.values())]
    if unmatched:
        known = sorted(set().union(*constants.values()))
        raise ValueError(f"--size {', '.join(unmatched)}: no problem imported here has a constant of that name; "
                         f"their module-level integer constants are {', '.join(known) or '(none)'}")
    if level is None:
        level = manifest_mod.problem_level(os.path.join(directory, "x.py"))
        if level is None:
            raise ValueError(f"{directory}: the level is unknown (the folder is not named level1, level2, ...); "
                             f"give the level (--level N, level=N)")
    os.makedirs(out_dir, exist_ok=True)
    results = []
    with ProbeSession(python=python, device=device, timeout=timeout) as session:
        for path in files:
            own = {name: value for name, value in (sizes or {}).items() if name in constants[path]}
            result = import_problem(path, level, out_dir, session=session, verify=verify, scale=scale, sizes=own)
            results.append(result)
            if on_result is not None:
                on_result(result)
        write_report(results, out_dir, directory, level, session)
    return results


def write_report(results: List[ImportResult], out_dir: str, directory: str, level: int,
                 session: ProbeSession) -> str:
    imported = sum(r.imported for r in results)
    report = {
        "schema": IMPORT_REPORT_SCHEMA,
        "source": os.path.abspath(directory),
        "level": level,
        "torch": session.torch_version,
        "device": session.real_device,
        "imported": imported,
        "total": len(results),
        "problems": [r.as_dict() for r in results],
    }
    path = os.path.join(out_dir, IMPORT_REPORT)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(report, f, indent=2)
        f.write("\n")
    return path


def _bytes_text(count: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= size:
            return f"{count / size:.1f} {unit}"
    return f"{count} B"


def resized_text(result: ImportResult) -> str:
    """What --scale / --size changed in one problem, in words: ``batch_size 4096 -> 48, dim 393216 -> 3936;
    all tensors 12.0 GiB -> 1.4 MiB`` ("" when nothing was asked)."""
    resized = result.resized
    if not resized:
        return ""
    changes = ", ".join(f"{name} {change['from']} -> {change['to']}" for name, change in resized["sizes"].items())
    total = resized["bytes"]
    return (f"{changes or 'no size changed'}; all tensors {_bytes_text(total['from'])} -> "
            f"{_bytes_text(total['to'])}")


def summary_line(results: List[ImportResult]) -> str:
    total = len(results)
    imported = sum(r.imported for r in results)
    percent = 100.0 * imported / total if total else 0.0
    return f"imported {imported} of {total} ({percent:.0f}%)"


def task_from_kernelbench(path: str, level: Optional[int] = None, out_dir: Optional[str] = None, **options):
    """The kernelsmith.Task of one KernelBench problem file, imported into `out_dir` (a temporary folder when
    None). Raises kernelsmith.TaskError with the reason when the problem is refused (options: timeout, python,
    device; see import_problem)."""
    import kernelsmith

    result = import_problem(path, level, out_dir, **options)
    if not result.imported:
        raise kernelsmith.TaskError(f"{path}: the KernelBench problem cannot be imported: {result.reason}")
    return kernelsmith.Task.load(result.task_dir)
