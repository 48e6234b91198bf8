"""Fast, isolated builds of a ModelNew candidate's torch extensions (docs/kernelbench-modelnew.md, "Builds").

A ModelNew candidate builds its C++/CUDA code with ``torch.utils.cpp_extension.load_inline`` (or ``load``)
while its file runs, in its own confined runner (pytorch_oracle.py). Most of such a build is the compiler
parsing ``torch/extension.h``; this module removes that cost twice over, without letting one candidate
reach another's build:

- **A precompiled header** of ``torch/extension.h`` per (toolchain, compile flags), where the toolchain is
  torch's version and folder, the C++ compiler and the interpreter. A runner compiles its extension's C++
  with ``-include <cache>/pch/<key>/torch_extension.h`` when ``torch_extension.h.gch`` is there; the
  compiler checks that the header matches the flags (``-Winvalid-pch`` says when it does not).
- **Prebuilt extensions**, keyed by everything a ``load_inline`` call is given (its name, sources,
  functions and flags) and the toolchain. Before the runner starts, the **builder** reads the candidate's
  file as text (its syntax tree; it never runs it), finds the ``load_inline`` calls whose arguments are
  constants of the file, and builds each one whose flags are plain compile options into
  ``<cache>/ext/<key>/``. A runner whose call carries the same arguments loads that library instead of
  building.

Who writes what: only the builder writes the cache; it is started by the evaluator, confined with the
cache as its one writable folder besides its own, and runs no code of the candidate's (the compiler reads
the sources; flags that could make it write elsewhere or load code are refused: :func:`refused_flag`).
The runner reads the cache and cannot write it (Landlock; the evaluator uses the cache only where the
sandbox's filesystem protection is on). A key is computed from the arguments of the call the runner
really makes, so a runner finds an entry only for exactly the inputs it was built from.

As a helper script (``python extension_build.py --workdir DIR``), it serves ``{"op": "prepare", "cache":
DIR, "source": "..."}`` -> ``{"ok": true, "log": [lines], "pch": [keys], "extensions": [{"name", "key",
"state": "built" | "cached" | "refused" | "failed", "detail", "seconds"}], "seconds": s}``.

This module imports only the standard library at import time; torch when a request needs it.
"""

from __future__ import annotations

import ast
import contextlib
import fcntl
import functools
import hashlib
import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

#: The file the evaluator writes into a runner's folder: {"cache": DIR} (the cache the runner may read).
SETTINGS_FILE = "extension_cache.json"
#: The file a runner writes into its own folder: what each of its builds did (for the evaluation's log).
REPORT_FILE = "extension_builds.json"
#: An entry's file when the builder's build of that call failed: the compiler's error.
FAILED_FILE = "failed.log"
#: Precompiled headers kept per cache (each is several hundred MB); the least recently made go first.
MAX_HEADERS = 6
#: Prebuilt libraries kept per cache (a few MB each).
MAX_EXTENSIONS = 2000
#: load_inline's parameters in order (torch 2.x), for positional arguments.
LOAD_INLINE_PARAMETERS = (
    "name", "cpp_sources", "cuda_sources", "sycl_sources", "functions", "extra_cflags", "extra_cuda_cflags",
    "extra_sycl_cflags", "extra_ldflags", "extra_include_paths", "build_directory", "verbose", "with_cuda",
    "with_sycl", "is_python_module", "with_pytorch_error_handling", "keep_intermediates", "use_pch",
    "no_implicit_headers")
#: Arguments that decide what a load_inline call builds (the others: where, how verbosely).
KEYED_ARGUMENTS = ("name", "cpp_sources", "cuda_sources", "functions", "extra_cflags", "extra_cuda_cflags",
                   "extra_ldflags", "extra_include_paths", "with_cuda", "with_pytorch_error_handling",
                   "no_implicit_headers")

_SAFE_FLAG = re.compile(
    r"(-O[0-3sgz]?|-Ofast|-g[0-3]?|-w|-DNDEBUG|-[DU][A-Za-z_][A-Za-z0-9_]*(=[A-Za-z0-9_.+\-]*)?|-std=[a-z0-9+]+"
    r"|-f(no-)?[a-z0-9][a-z0-9\-]*(=[a-z0-9\-]+)?|-m[a-z0-9][a-z0-9\-=.]*|-W(no-)?[a-z][a-z0-9\-=]*"
    r"|-?-use_fast_math|-lineinfo|-?-expt-relaxed-constexpr|-?-expt-extended-lambda|-res-usage"
    r"|-arch=(sm|compute)_[0-9]+a?|-gencode=arch=compute_[0-9]+a?,code=(sm|compute)_[0-9]+a?"
    r"|-maxrregcount=[0-9]+|-Xptxas=-v|--ptxas-options=-v|-Xptxas|-v|-l[A-Za-z0-9_+\-.]+)")
#: -f options that write files, load code or read profiles.
_UNSAFE_F = ("-fplugin", "-fdump", "-fprofile", "-fcallgraph-info", "-fstack-usage", "-fauto-profile",
             "-fcreate-profile", "-fdebug-prefix-map", "-ffile-prefix-map", "-fmacro-prefix-map",
             "-fsave-optimization-record", "-fopt-info", "-flto")


def refused_flag(flag: Any) -> Optional[str]:
    """Why a flag keeps a call from being prebuilt ("" never): anything but a plain compile option (a path
    to write, a plugin, a linker or preprocessor pass-through), else None."""
    if not isinstance(flag, str):
        return f"{flag!r} is not a string"
    if not _SAFE_FLAG.fullmatch(flag.strip()):
        return f"flag {flag!r} is not a plain compile option"
    if flag.strip().startswith(_UNSAFE_F):
        return f"flag {flag!r} writes or loads files"
    return None


# -- the toolchain

def _torch_folder() -> str:
    spec = importlib.util.find_spec("torch")
    return os.path.dirname(os.path.realpath(spec.origin)) if spec and spec.origin else ""


@functools.lru_cache(maxsize=None)
def toolchain() -> Dict[str, str]:
    """What a build's output depends on besides its call: torch's version and folder, the C++ compiler (its
    resolved path and version line) and the interpreter (its version and headers)."""
    import sysconfig

    folder = _torch_folder()
    version = ""
    with contextlib.suppress(OSError):
        with open(os.path.join(folder, "version.py"), encoding="utf-8") as handle:
            match = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)", handle.read(), re.M)
            version = match.group(1) if match else ""
    compiler = os.environ.get("CXX") or "c++"
    resolved = shutil.which(compiler) or compiler
    try:
        line = subprocess.run([resolved, "--version"], capture_output=True, text=True, timeout=30).stdout.split("\n")[0]
    except (OSError, subprocess.SubprocessError):
        line = ""
    return {"torch": version, "torch_folder": folder, "compiler": os.path.realpath(resolved), "compiler_version": line,
            "python": sys.version, "python_include": sysconfig.get_path("include") or ""}


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:32]


def normalized_call(arguments: Dict[str, Any]) -> Dict[str, Any]:
    """A load_inline call's keyed arguments in one form (a string source as a one-item list, None as empty)."""
    call: Dict[str, Any] = {}
    for name in KEYED_ARGUMENTS:
        value = arguments.get(name)
        if name in ("cpp_sources", "cuda_sources"):
            value = [value] if isinstance(value, str) else list(value or [])
        elif name in ("extra_cflags", "extra_cuda_cflags", "extra_ldflags", "extra_include_paths"):
            value = [value] if isinstance(value, str) else list(value or [])
        elif name == "functions":
            if isinstance(value, str):
                value = [value]
            value = dict(value) if isinstance(value, dict) else (list(value) if value is not None else None)
        elif name == "with_pytorch_error_handling":
            value = True if value is None else bool(value)
        elif name == "no_implicit_headers":
            value = bool(value)
        call[name] = value
    return call


def extension_key(call: Dict[str, Any]) -> str:
    return _digest({"call": call, "toolchain": toolchain(), "format": 1})


def compile_flags(extra_cflags: Sequence[str], extra_include_paths: Sequence[str]) -> List[str]:
    """The flags cpp_extension compiles an extension's C++ with (its ninja file's ``cflags``), less the
    extension's name: what a precompiled header must be built with."""
    from torch.utils import cpp_extension

    with tempfile.TemporaryDirectory(prefix="kernelsmith-flags-") as folder:
        source = os.path.join(folder, "main.cpp")
        with open(source, "w", encoding="utf-8") as handle:
            handle.write("\n")
        ninja = os.path.join(folder, "build.ninja")
        cpp_extension._write_ninja_file_to_build_library(  # noqa: SLF001 - the flags torch itself uses
            ninja, "flags_probe", [source], list(extra_cflags), [], [], [], list(extra_include_paths), False, False,
            False)
        with open(ninja, encoding="utf-8") as handle:
            text = handle.read()
    match = re.search(r"^cflags = (.*)$", text, re.M)
    post = re.search(r"^post_cflags = (.*)$", text, re.M)
    flags = shlex.split(match.group(1) if match else "") + shlex.split(post.group(1) if post else "")
    return [flag for flag in flags if not flag.startswith("-DTORCH_EXTENSION_NAME=")]


def header_key(extra_cflags: Sequence[str], extra_include_paths: Sequence[str]) -> str:
    return _digest({"cflags": list(extra_cflags), "include": list(extra_include_paths), "toolchain": toolchain(),
                    "format": 1})


def header_path(cache: str, key: str) -> str:
    return os.path.join(cache, "pch", key, "torch_extension.h")


# -- the builder (trusted: started by the evaluator, never runs a candidate's code)

@contextlib.contextmanager
def _locked(path: str) -> Iterator[None]:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "a+", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _publish(staging: str, final: str) -> bool:
    """Moves a finished folder into place in one step; False when another builder was first."""
    try:
        os.rename(staging, final)
        return True
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
        return False


def ensure_header(cache: str, extra_cflags: Sequence[str], extra_include_paths: Sequence[str],
                  log: List[str]) -> Optional[str]:
    """The precompiled header for these flags, built now when missing. Returns its key, None when it cannot be
    built (the reason in ``log``)."""
    key = header_key(extra_cflags, extra_include_paths)
    header = header_path(cache, key)
    if os.path.isfile(header + ".gch"):
        return key
    with _locked(os.path.join(cache, "pch", key + ".lock")):
        if os.path.isfile(header + ".gch"):
            return key
        started = time.monotonic()
        flags = compile_flags(extra_cflags, extra_include_paths)
        staging = tempfile.mkdtemp(prefix=key + ".partial-", dir=os.path.join(cache, "pch"))
        staged = os.path.join(staging, "torch_extension.h")
        with open(staged, "w", encoding="utf-8") as handle:
            handle.write("#include <torch/extension.h>\n")
        command = [toolchain()["compiler"], *flags, "-x", "c++-header", staged, "-o", staged + ".gch"]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            log.append(f"precompiled header {key}: the compiler failed: {(result.stderr or '')[-2000:]}")
            return None
        with open(os.path.join(staging, "flags.json"), "w", encoding="utf-8") as handle:
            json.dump({"flags": flags, "toolchain": toolchain()}, handle)
        _publish(staging, os.path.dirname(header))
        log.append(f"precompiled header {key} built in {time.monotonic() - started:.1f} s")
    _prune_headers(cache, keep=key)
    return key


def _prune_headers(cache: str, keep: str) -> None:
    folder = os.path.join(cache, "pch")
    entries = []
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        if os.path.isdir(path) and ".partial-" not in name and name != keep:
            entries.append((os.path.getmtime(path), path))
    for _, path in sorted(entries)[:max(0, len(entries) + 1 - MAX_HEADERS)]:
        shutil.rmtree(path, ignore_errors=True)


def _prune_extensions(cache: str) -> None:
    """Keeps the cache's libraries under MAX_EXTENSIONS: the least recently made tenth goes when it is over."""
    folder = os.path.join(cache, "ext")
    with contextlib.suppress(OSError):
        entries = [(os.path.getmtime(os.path.join(folder, name)), name) for name in os.listdir(folder)
                   if ".partial-" not in name and not name.endswith(".lock")]
        if len(entries) <= MAX_EXTENSIONS:
            return
        for _, name in sorted(entries)[:len(entries) - MAX_EXTENSIONS + MAX_EXTENSIONS // 10]:
            shutil.rmtree(os.path.join(folder, name), ignore_errors=True)
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(folder, name + ".lock"))


class _Constants(ast.NodeVisitor):
    """Values of a file's module-level names whose right-hand sides are literals (strings, numbers, lists,
    tuples, dicts, ``+`` of strings, f-strings of such names): what a load_inline call's arguments are built
    from in KernelBench's files. Reads the syntax tree only."""

    def __init__(self) -> None:
        self.values: Dict[str, Any] = {}

    def evaluate(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in self.values:
                return self.values[node.id]
            if node.id in ("True", "False", "None"):
                return {"True": True, "False": False, "None": None}[node.id]
            raise ValueError(node.id)
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self.evaluate(item) for item in node.elts]
        if isinstance(node, ast.Dict):
            if any(key is None for key in node.keys):
                raise ValueError("**")
            return {self.evaluate(k): self.evaluate(v) for k, v in zip(node.keys, node.values)}
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.evaluate(node.left), self.evaluate(node.right)
            if type(left) is not type(right) or not isinstance(left, (str, list)):
                raise ValueError("+")
            return left + right
        if isinstance(node, ast.JoinedStr):
            parts = []
            for value in node.values:
                if isinstance(value, ast.FormattedValue):
                    if value.conversion != -1 or value.format_spec is not None:
                        raise ValueError("format")
                    item = self.evaluate(value.value)
                    if not isinstance(item, (str, int)) or isinstance(item, bool):
                        raise ValueError("format")
                    parts.append(str(item))
                else:
                    parts.append(self.evaluate(value))
            return "".join(parts)
        raise ValueError(type(node).__name__)

    def visit_Module(self, node: ast.Module) -> None:
        for statement in node.body:
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and \
                    isinstance(statement.targets[0], ast.Name):
                name = statement.targets[0].id
                try:
                    self.values[name] = self.evaluate(statement.value)
                except (ValueError, TypeError, KeyError):
                    self.values.pop(name, None)


def static_calls(source: str) -> Tuple[List[Dict[str, Any]], List[str]]:
    """The load_inline calls of a file whose arguments are all constants of the file, as keyword arguments,
    and why each other call was left out."""
    tree = ast.parse(source)
    constants = _Constants()
    constants.visit(tree)
    calls: List[Dict[str, Any]] = []
    skipped: List[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        function = node.func
        name = function.id if isinstance(function, ast.Name) else function.attr if isinstance(function, ast.Attribute) else ""
        if name != "load_inline":
            continue
        try:
            if any(isinstance(argument, ast.Starred) for argument in node.args) or \
                    any(keyword.arg is None for keyword in node.keywords):
                raise ValueError("*args")
            if len(node.args) > len(LOAD_INLINE_PARAMETERS):
                raise ValueError("arguments")
            arguments = {LOAD_INLINE_PARAMETERS[i]: constants.evaluate(a) for i, a in enumerate(node.args)}
            arguments.update({keyword.arg: constants.evaluate(keyword.value) for keyword in node.keywords})
        except (ValueError, TypeError, KeyError) as error:
            skipped.append(f"load_inline at line {node.lineno}: an argument is not a constant of the file ({error})")
            continue
        calls.append(arguments)
    return calls, skipped


def prebuild_refusal(arguments: Dict[str, Any]) -> Optional[str]:
    """Why the builder does not build this call ahead (the runner then builds it itself), or None."""
    unknown = set(arguments) - set(LOAD_INLINE_PARAMETERS)
    if unknown:
        return f"unknown arguments {sorted(unknown)}"
    if not isinstance(arguments.get("name"), str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", arguments["name"]):
        return "its name is not an identifier"
    if arguments.get("is_python_module", True) is not True or arguments.get("sycl_sources"):
        return "not a Python module of C++/CUDA sources"
    call = normalized_call(arguments)
    for source in call["cpp_sources"] + call["cuda_sources"]:
        if not isinstance(source, str):
            return "a source is not a string"
    for group in ("extra_cflags", "extra_cuda_cflags", "extra_ldflags"):
        for flag in call[group]:
            reason = refused_flag(flag)
            if reason:
                return reason
    if call["extra_include_paths"]:
        return "it names include folders"
    return None


def _build_extension(cache: str, arguments: Dict[str, Any], scratch: str, log: List[str]) -> Dict[str, Any]:
    call = normalized_call(arguments)
    key = extension_key(call)
    name = call["name"]
    entry = {"name": name, "key": key, "state": "cached", "detail": "", "seconds": 0.0}
    final = os.path.join(cache, "ext", key)
    if os.path.isdir(final):
        return entry
    with _locked(os.path.join(cache, "ext", key + ".lock")):  # one build per key, whatever asks at once
        if os.path.isdir(final):
            return entry
        return _build_locked(cache, call, key, entry, scratch, log)


def _build_locked(cache: str, call: Dict[str, Any], key: str, entry: Dict[str, Any], scratch: str,
                  log: List[str]) -> Dict[str, Any]:
    from torch.utils import cpp_extension

    name = call["name"]
    final = os.path.join(cache, "ext", key)
    started = time.monotonic()
    os.makedirs(os.path.join(cache, "ext"), exist_ok=True)
    build = tempfile.mkdtemp(prefix=f"build-{name}-", dir=scratch)
    cflags = list(call["extra_cflags"])
    header = ensure_header(cache, call["extra_cflags"], call["extra_include_paths"], log)
    if header:
        cflags += ["-include", header_path(cache, header), "-Winvalid-pch"]
    cpp_extension.JIT_EXTENSION_VERSIONER.entries.pop(name, None)  # a pooled builder: each build is version 0
    original_import = cpp_extension._import_module_from_library  # noqa: SLF001
    cpp_extension._import_module_from_library = lambda *_args, **_kw: None  # built, never loaded here
    try:
        cpp_extension.load_inline(
            name=name, cpp_sources=list(call["cpp_sources"]), cuda_sources=list(call["cuda_sources"]) or None,
            functions=call["functions"], extra_cflags=cflags, extra_cuda_cflags=list(call["extra_cuda_cflags"]),
            extra_ldflags=list(call["extra_ldflags"]), extra_include_paths=[], build_directory=build,
            with_cuda=call["with_cuda"], with_pytorch_error_handling=call["with_pytorch_error_handling"],
            no_implicit_headers=call["no_implicit_headers"])
    except BaseException as error:  # a build script's SystemExit included
        if isinstance(error, KeyboardInterrupt):
            raise
        entry.update(state="failed", detail=str(error)[-4000:], seconds=time.monotonic() - started)
        # The failure is kept as the entry: a runner making this call gets the same error without building again.
        staging = tempfile.mkdtemp(prefix=key + ".partial-", dir=os.path.join(cache, "ext"))
        with open(os.path.join(staging, FAILED_FILE), "w", encoding="utf-8") as handle:
            handle.write(entry["detail"])
        _publish(staging, final)
        shutil.rmtree(build, ignore_errors=True)
        return entry
    finally:
        cpp_extension._import_module_from_library = original_import  # noqa: SLF001
    library = os.path.join(build, name + ".so")
    staging = tempfile.mkdtemp(prefix=key + ".partial-", dir=os.path.join(cache, "ext"))
    shutil.copy2(library, os.path.join(staging, name + ".so"))
    with open(os.path.join(staging, "call.json"), "w", encoding="utf-8") as handle:
        json.dump({"call": call, "toolchain": toolchain()}, handle)
    _publish(staging, final)
    shutil.rmtree(build, ignore_errors=True)
    entry.update(state="built", seconds=time.monotonic() - started)
    return entry


def prepare(cache: str, source: str, scratch: str) -> Dict[str, Any]:
    """The builder's request: the precompiled header for the candidate's flags, and its constant load_inline
    calls built into the cache."""
    started = time.monotonic()
    os.environ.setdefault("MAX_JOBS", str(_cores()))
    log: List[str] = []
    headers: List[str] = []
    extensions: List[Dict[str, Any]] = []
    try:
        calls, skipped = static_calls(source)
    except SyntaxError as error:
        return {"ok": True, "log": [f"not parsed: {error}"], "pch": [], "extensions": [], "seconds": 0.0}
    log += skipped
    names = [call.get("name") for call in calls]
    for arguments in calls:
        reason = prebuild_refusal(arguments)
        if reason is None and names.count(arguments.get("name")) > 1:
            reason = "another load_inline call of the file has the same name"
        if reason:
            extensions.append({"name": str(arguments.get("name")), "key": "", "state": "refused", "detail": reason,
                               "seconds": 0.0})
            continue
        extensions.append(_build_extension(cache, arguments, scratch, log))
    if "cpp_extension" in source and not any(entry["state"] in ("built", "cached") for entry in extensions):
        # load(), computed arguments or refused flags: the runner builds, with the header of the default flags.
        key = ensure_header(cache, [], [], log)
        if key:
            headers.append(key)
    _prune_extensions(cache)
    for entry in extensions:
        log.append(f"extension {entry['name']}: {entry['state']}" + (f" in {entry['seconds']:.1f} s" if entry["seconds"] else "")
                   + (f" ({entry['detail'].splitlines()[0] if entry['detail'] else ''})" if entry["detail"] else ""))
    return {"ok": True, "log": log, "pch": headers, "extensions": extensions, "seconds": time.monotonic() - started}


def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


# -- the runner's side (untrusted process: it only reads the cache)

class RunnerBuilds:
    """Wraps cpp_extension's load_inline and load in a ModelNew runner: a prebuilt library of exactly this call
    is loaded from the cache; otherwise the build runs here, on every core, with the precompiled header when
    one matches its flags. What each call did is kept for the evaluation's log."""

    def __init__(self, workdir: str):
        self.workdir = workdir
        self.cache = ""
        self.records: List[Dict[str, Any]] = []
        with contextlib.suppress(OSError, ValueError):
            with open(os.path.join(workdir, SETTINGS_FILE), encoding="utf-8") as handle:
                self.cache = str(json.load(handle).get("cache") or "")

    @classmethod
    def install_once(cls, workdir: str) -> "RunnerBuilds":
        """The runner's one instance (a candidate's file runs once per size configuration), installed."""
        from torch.utils import cpp_extension

        installed = getattr(cpp_extension, "_kernelsmith_builds", None)
        if isinstance(installed, cls) and installed.workdir == workdir:
            return installed
        builds = cls(workdir)
        builds.install()
        return builds

    def install(self) -> None:
        from torch.utils import cpp_extension

        os.environ["MAX_JOBS"] = str(_cores())
        original_inline, original_load = cpp_extension.load_inline, cpp_extension.load

        @functools.wraps(original_inline)
        def load_inline(*args: Any, **kwargs: Any) -> Any:
            arguments = {LOAD_INLINE_PARAMETERS[i]: value for i, value in enumerate(args)}
            arguments.update(kwargs)
            record: Dict[str, Any] = {"how": "load_inline", "name": str(arguments.get("name")), "prebuilt": False,
                                      "header": False}
            self.records.append(record)
            prebuilt = self.prebuilt(arguments, record)
            if prebuilt is not None:
                return prebuilt
            arguments["use_pch"] = False  # torch's own header goes into its installation, read-only here
            self.add_header(arguments, record)
            return original_inline(**arguments)

        @functools.wraps(original_load)
        def load(name: Any, sources: Any, *args: Any, **kwargs: Any) -> Any:
            parameters = ("extra_cflags", "extra_cuda_cflags", "extra_sycl_cflags", "extra_ldflags", "extra_include_paths")
            arguments = {parameters[i]: value for i, value in enumerate(args[:len(parameters)])}
            arguments.update(kwargs)
            record: Dict[str, Any] = {"how": "load", "name": str(name), "prebuilt": False, "header": False}
            self.records.append(record)
            self.add_header(arguments, record)
            return original_load(name, sources, *args[len(parameters):], **arguments)

        cpp_extension.load_inline, cpp_extension.load = load_inline, load
        cpp_extension._kernelsmith_builds = self  # noqa: SLF001

    def prebuilt(self, arguments: Dict[str, Any], record: Dict[str, Any]) -> Any:
        """The module of a library the builder made from exactly these arguments, None when there is none."""
        if not self.cache or arguments.get("is_python_module", True) is not True or arguments.get("sycl_sources"):
            return None
        try:
            call = normalized_call(arguments)
            key = extension_key(call)
        except (TypeError, ValueError):
            return None
        record["key"] = key
        library = os.path.join(self.cache, "ext", key, f"{call['name']}.so")
        failed = os.path.join(self.cache, "ext", key, FAILED_FILE)
        if os.path.isfile(failed):
            record["failed"] = True
            self.save()
            with open(failed, encoding="utf-8", errors="replace") as handle:
                raise RuntimeError(f"Error building extension '{call['name']}' (built by the evaluator's builder from "
                                   f"exactly this call): {handle.read()}")
        if not os.path.isfile(library):
            self.save()
            return None
        started = time.monotonic()
        spec = importlib.util.spec_from_file_location(call["name"], library)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        record.update(prebuilt=True, seconds=round(time.monotonic() - started, 3))
        self.save()
        return module

    def add_header(self, arguments: Dict[str, Any], record: Dict[str, Any]) -> None:
        """Adds the precompiled header to a build's C++ flags when the cache has one for exactly its flags."""
        cflags = arguments.get("extra_cflags") or []
        cflags = [cflags] if isinstance(cflags, str) else list(cflags)
        includes = arguments.get("extra_include_paths") or []
        includes = [includes] if isinstance(includes, str) else list(includes)
        if self.cache:
            try:
                header = header_path(self.cache, header_key(cflags, includes))
            except (TypeError, ValueError):
                header = ""
            if header and os.path.isfile(header + ".gch"):
                arguments["extra_cflags"] = cflags + ["-include", header, "-Winvalid-pch"]
                record["header"] = True
        self.save()

    def save(self) -> None:
        with contextlib.suppress(OSError):
            with open(os.path.join(self.workdir, REPORT_FILE), "w", encoding="utf-8") as handle:
                json.dump(self.records, handle)


def handle(workdir: str, request: Dict[str, Any]) -> Dict[str, Any]:
    if request.get("op") != "prepare":
        return {"ok": False, "stage": "request", "line": None, "message": f"unknown op {request.get('op')!r}; expected prepare"}
    cache = str(request.get("cache") or "")
    if not cache or not os.path.isdir(cache):
        return {"ok": False, "stage": "request", "line": None, "message": f"no cache folder {cache!r}"}
    return prepare(cache, str(request.get("source") or ""), workdir)


def _helper_io() -> Any:
    spec = importlib.util.spec_from_file_location(
        "kernelsmith_helper_io", os.path.join(os.path.dirname(os.path.abspath(__file__)), "_helper_io.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: Optional[Sequence[str]] = None) -> int:
    def make_handle(workdir: Optional[str]) -> Any:
        folder = workdir or tempfile.mkdtemp(prefix="kernelsmith-extension-build-")
        return functools.partial(handle, folder)
    return _helper_io().run_helper(make_handle, "Builds ModelNew candidates' torch extensions into the shared cache.",
                                   argv)


if __name__ == "__main__":
    sys.exit(main())
