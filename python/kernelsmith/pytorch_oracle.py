"""Expected outputs and baseline timings from a task's PyTorch module, in a helper process
(docs/kernelbench.md, "PyTorch oracle and baselines").

A task with an ``oracle`` (docs/task-format.md) takes its expected outputs from a problem file in
KernelBench's format: ``class Model(nn.Module)``, ``get_init_inputs()``, ``get_inputs()`` and
module-level integer constants. The file is executed only here, in a helper that kernelsmith's evaluator
starts (``python pytorch_oracle.py --workdir DIR``, from an empty folder), never in the caller's
process. The helper reads one JSON request per line on stdin and writes one JSON reply per line on
stdout (_helper_io.py); tensors travel as raw C-order files whose paths the requests carry, never inside
JSON.

A problem, as requests carry it::

    {"source": "...", "path": "problem.py", "constants": {"batch_size": 16, "dim": 64},
     "forward": ["x"], "parameters": {"gemm.weight": "gemm_weight"}, "outputs": ["out"],
     "casts": {"alpha": "python_float"}, "seed": 42, "training": true}

``constants`` gives the values of module-level integer constants (``NAME = <int>``) for this size
configuration: the assignments' literals are rewritten in the syntax tree before the file is executed, so
constants derived from them (``dim2 = dim * 2``) follow. The model is built KernelBench's way:
``torch.manual_seed(seed)``, ``get_init_inputs()``, ``torch.manual_seed(seed)``, ``Model(*init)``, then moved
to the device, in training mode unless ``training`` is false. ``parameters`` maps state-dict entries to the
task tensors whose values they take; the others keep their seeded values (restored before every run, so
that a BatchNorm's running statistics never carry over from one case to the next). ``casts`` turns a
task tensor into the forward's argument: ``bool`` (uint8 0/1 to torch.bool), ``python_float`` and
``python_int`` (a 0-d tensor to a Python number). Forward runs under ``torch.no_grad()`` after
``torch.manual_seed(seed)``; TF32 is off (matmul and cuDNN), so the baseline computes what a candidate
must compute.

A tensor, as requests carry it: ``{"name": "x", "dtype": "float32", "shape": [16, 64], "path": "..."}``.

Requests and replies (each reply repeats the request's ``"id"``):

- ``{"op": "version", "device": "cpu"}`` -> ``{"ok": true, "available": true, "torch": "2.11.0+cpu",
  "device": "cpu", "device_name": "...", "python": "/usr/bin/python3"}``, without importing torch (the
  device's name for the CPU only; the evaluator names a GPU itself); without torch ``"available": false``
  and ``"reason"``.
- ``{"op": "outputs", "task_key": K, "problem": P, "config": "timing", "device": "cpu" | "cuda:N",
  "inputs": [tensor, ...], "outputs": [tensor, ...]}``: reads every input file, runs forward, writes each
  output (a tuple result flattened in order) to its path in the tensor's dtype -> ``{"ok": true, "built":
  true when the model was built for this request, "seconds": s}``.
- ``{"op": "time", "task_key": K, "problem": P, "config": "timing", "device": ..., "baseline": "eager" |
  "compile" | "compile_max_autotune", "input_sets": [[tensor, ...], ...], "settings": S}`` times one
  baseline with kernelsmith's timing protocol (lib/evaluate/timing.cpp; docs/evaluation.md, "Timing"):
  warm-ups, the cache eviction before every sample, the device's clock around one forward (CUDA events;
  the host clock on the CPU, where torch runs synchronously), samples until the noise target, the budget
  or the maximum, the host-clock cross-check. The runs cycle through the input sets. ``S`` is
  ``{"mode", "noise_target", "stop_rule": "spread" | "standard_error", "min_samples", "max_samples",
  "budget_seconds", "warmups", "host_repeats", "flush": "read" | "fill" | "none", "flush_bytes"}`` (the harness
  also sends its batching rules, ``batch_below_ms`` and ``batch_runs``, which the helper does not use).
  -> ``{"ok": true, "timing": {TimingReport's fields}, "compile_seconds": s}``.

A failure is ``{"ok": false, "stage": ..., "message": ...}``, the stage one of ``request`` (malformed),
``torch`` (torch missing: the message says how to install it), ``device`` (the device is not usable),
``module`` (executing the problem file, its constants), ``build`` (``get_init_inputs``, ``Model``),
``parameters``, ``inputs``, ``forward``, ``outputs`` (the result does not match the task's outputs) and
``baseline`` (a baseline that cannot be timed: torch.compile unavailable, an Inductor error).

Built models are cached per (task key, configuration, device); a request for another task drops the
models (and compiled baselines) of the previous one and gives the device memory back.

**A ModelNew candidate** (docs/kernelbench-modelnew.md). A problem may carry ``"candidate": {"source": ...,
"path": "candidate.py"}``: a file in KernelBench's candidate format, defining ``class ModelNew(nn.Module)``
with the Model's constructor and forward. The problem file is executed first (for ``get_init_inputs`` and
its constants), then the candidate's (the same constants rewritten where it assigns them), and ``ModelNew``
is built exactly as Model would be (the same seeds, the same state-dict entries loaded from the task's
tensors). ``outputs`` then writes ModelNew's outputs, and ``time`` times it as the ``eager`` baseline. Such a
helper is started for one candidate and ended after it (the evaluator's ModelNew runner): the candidate's
host code runs in it, confined, and never shares a process with the problem's expected outputs. Its
``torch.utils.cpp_extension`` builds go into the helper's own folder. A candidate's failures name their
stage: ``candidate`` (executing its file, a ``load_inline`` build included), ``candidate_build`` (its
constructor), ``parameters``, ``forward``, ``outputs``, and ``input_changed`` / ``input_returned`` /
``output_type`` when forward wrote into an input, returned one (or a view of one), or returned something
that is not a plain tensor, ``output_aliased`` when two outputs share memory, and ``tampering`` /
``background_work`` when its code replaced a function the checks or the timing use, or left a thread or a
process running (_host_code_guard.py; docs/kernelbench-modelnew.md, "Integrity"). For a candidate, ``outputs``
replies also carry ``custom_calls`` (calls of its own kernels in that forward), ``flags`` and ``notes``;
``time`` runs every warm-up and sample on inputs it has not seen and takes ``"check_outputs"`` (one list of
output tensors per input set), where it writes the results of the last timed runs, made on each set's exact
values; and ``{"op": "inspect", ..., "inputs": [tensor, ...]}`` profiles one forward and makes the ablation run
-> ``{"ok": true, "host_code": {"kernels", "custom_share", "custom_calls", "ablation"}, "flags", "notes"}``.
``{"op": "warm_up", "triton": true}`` imports torch, ``torch.utils.cpp_extension``, the integrity checks and
(where installed) triton, touching no device -> ``{"ok": true, "torch": version}``: a runner started ahead
for the next candidate on a GPU, while the previous one runs.

This module imports only the standard library at import time; torch when a request needs it.
"""

from __future__ import annotations

import ast
import contextlib
import ctypes
import functools
import gc
import hashlib
import importlib.util
import math
import os
import platform
import re
import sys
import tempfile
import time
import traceback
import types
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

#: Task dtype names (kernelsmith.DType) -> torch dtype attribute names.
TORCH_DTYPES = {
    "float16": "float16", "bfloat16": "bfloat16", "float32": "float32", "float64": "float64",
    "int8": "int8", "uint8": "uint8", "int32": "int32", "int64": "int64",
}
#: Outputs from this size on are copied into a mapping of their file rather than written (see write_output).
MAPPED_OUTPUT_BYTES = 64 << 20
#: The casts a task may ask for (contract: oracle "casts").
CASTS = ("bool", "python_float", "python_int")
#: The baselines and how each is built from the eager model.
BASELINES = ("eager", "compile", "compile_max_autotune")


class OracleError(Exception):
    """A request the helper could not serve: the stage and what went wrong (a plain class: the helper runs
    this file as a script, under a module name dataclasses cannot look up)."""

    def __init__(self, stage: str, message: str):
        super().__init__(message)
        self.stage = stage
        self.message = message

    def to_json(self) -> Dict[str, Any]:
        return {"ok": False, "stage": self.stage, "line": None, "message": self.message}


def _torch() -> Any:
    """torch, or an OracleError (stage "torch") saying which interpreter lacks it and how to install it."""
    try:
        import torch
    except Exception as error:  # ImportError, or a broken install
        raise OracleError("torch", f"the torch package is not importable in {sys.executable} "
                                   f"({type(error).__name__}: {error}); install it into that interpreter with "
                                   "`pip install kernelsmith[torch]` (or point KERNELSMITH_PYTHON at one that has "
                                   "torch)") from None
    return torch


def _torch_version() -> Optional[str]:
    """torch.__version__ ("2.11.0+cu130", the build's variant included) read from torch/version.py without
    importing torch, or None when it cannot be read that way."""
    with contextlib.suppress(Exception):
        spec = importlib.util.find_spec("torch")
        if spec is None or not spec.origin:
            return None
        with open(os.path.join(os.path.dirname(spec.origin), "version.py"), encoding="utf-8") as handle:
            match = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", handle.read(), re.M)
        if match:
            return match.group(1)
    return None


def _exact_float32(torch: Any) -> None:
    # Expected outputs are what the candidate must compute: no TF32 in matrix products or convolutions.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    with contextlib.suppress(Exception):
        torch.set_float32_matmul_precision("highest")
    # Deterministic cuDNN algorithms: the expected outputs must not change from one run to the next (cuDNN's
    # default transposed convolutions accumulate with atomics), or a cached case would depend on the run.
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


@contextlib.contextmanager
def _torch_defaults(torch: Any) -> Iterator[None]:
    """torch's own numerical settings (cuDNN may use TF32 and nondeterministic algorithms) while a baseline is
    timed: the baseline KernelBench and its peers publish, which deterministic algorithms would slow by up to
    27x (transposed 3-d convolutions on an H100; bench/bench_kernelbench_baselines.py). A candidate, held to
    exact float32, is thus never flattered by a slowed baseline. The exact settings come back afterwards."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.deterministic = False
    torch.backends.cudnn.benchmark = False
    try:
        yield
    finally:
        _exact_float32(torch)


def _cpu_name() -> str:
    with contextlib.suppress(OSError):
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine() or "cpu"


def _error_text(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}".strip()


def _problem_line(error: BaseException, path: str) -> str:
    """" (problem.py line 12)" for the deepest frame of the problem file in a traceback, else ""."""
    line = None
    for frame, lineno in traceback.walk_tb(error.__traceback__):
        if os.path.abspath(frame.f_code.co_filename) == path:
            line = lineno
    return f" (line {line} of the problem file)" if line else ""


# ---------------------------------------------------------------------------------------------------------
# The problem file


def rewrite_constants(source: str, constants: Dict[str, int], filename: str = "problem.py") -> ast.Module:
    """The problem's syntax tree with each module-level ``NAME = <int literal>`` of ``constants`` set to its
    value (line numbers kept). Raises OracleError (stage "module") when a constant has no such assignment."""
    try:
        tree = ast.parse(source, filename)
    except SyntaxError as error:
        raise OracleError("module", f"{filename} does not parse: line {error.lineno}: {error.msg}") from None
    found = set()
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target, value = statement.targets[0], statement.value
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            target, value = statement.target, statement.value
        else:
            continue
        if not (isinstance(target, ast.Name) and target.id in constants):
            continue
        if not (isinstance(value, ast.Constant) and type(value.value) is int):
            raise OracleError("module", f"{filename} line {statement.lineno}: the constant {target.id} is not "
                                        "assigned an integer literal, so the oracle cannot give it the size "
                                        "configuration's value; write it as NAME = <integer>")
        replacement = ast.copy_location(ast.Constant(int(constants[target.id])), value)
        statement.value = replacement
        found.add(target.id)
    missing = sorted(set(constants) - found)
    if missing:
        raise OracleError("module", f"{filename} has no module-level assignment NAME = <integer> for the "
                                    f"constant(s) {', '.join(missing)} that the oracle's \"constants\" name")
    return tree


class Built:
    """One problem built for one size configuration on one device."""

    def __init__(self, module: Any, model: Any, initial: Dict[str, Any], path: str, candidate: bool = False):
        self.module = module
        self.model = model
        self.initial = initial  # state-dict values after building, restored before every run
        self.path = path  # the file whose class was built: the problem's, or the candidate's
        self.candidate = candidate  # the model is a candidate's ModelNew
        self.label = "ModelNew" if candidate else "Model"
        self.compiled: Dict[str, Any] = {}  # baseline name -> callable
        self.compile_failures: Dict[str, str] = {}


class Oracle:
    """Builds problems, computes outputs, times baselines; one per helper process."""

    def __init__(self, workdir: Optional[str] = None):
        self.workdir = workdir or tempfile.mkdtemp(prefix="kernelsmith-oracle-")
        os.makedirs(self.workdir, exist_ok=True)
        self.task_key: Optional[str] = None
        self.built: Dict[Tuple[str, str, str], Built] = {}
        self.module_names: List[str] = []
        self.torch_ready = False
        # A ModelNew candidate's integrity checks (_host_code_guard.py), made before its file runs.
        self.guard: Any = None
        self.ledger: Any = None
        self.candidate_flags: List[str] = []
        self.candidate_notes: List[str] = []  # what each flag saw

    # -- torch and devices

    def torch(self) -> Any:
        torch = _torch()
        if not self.torch_ready:
            _exact_float32(torch)
            self.torch_ready = True
        return torch

    def device(self, name: str) -> Any:
        torch = self.torch()
        try:
            device = torch.device(name)
        except Exception as error:
            raise OracleError("device", f"unknown device {name!r}: {_error_text(error)}") from None
        if device.type == "cuda":
            if not torch.cuda.is_available():
                raise OracleError("device", f"the oracle was asked for {name}, but torch {torch.__version__} in "
                                            f"{sys.executable} sees no CUDA device (a CPU-only wheel, or no driver); "
                                            "install a CUDA build of torch")
            index = device.index or 0
            if index >= torch.cuda.device_count():
                raise OracleError("device", f"the oracle was asked for {name}, but torch sees "
                                            f"{torch.cuda.device_count()} CUDA device(s)")
        elif device.type != "cpu":
            raise OracleError("device", f"the oracle runs on \"cpu\" or \"cuda:N\", not {name!r}")
        return device

    def version(self, request: Dict[str, Any]) -> Dict[str, Any]:
        """torch's version without importing torch (seconds saved where every result is cached on disk),
        and the name of the CPU when the device is the CPU (the evaluator names a GPU itself)."""
        version = _torch_version()
        if version is None:
            try:
                version = self.torch().__version__
            except OracleError as error:
                return {"ok": True, "available": False, "reason": error.message, "python": sys.executable}
        name = request.get("device") or "cpu"
        return {"ok": True, "available": True, "torch": version, "python": sys.executable, "device": name,
                "device_name": _cpu_name() if name == "cpu" else ""}

    def warm_up(self, request: Dict[str, Any]) -> Dict[str, Any]:
        """Imports what running a ModelNew takes (torch, load_inline's module, the integrity checks and, with
        ``"triton": true``, triton where it is installed) before a candidate arrives: the evaluator starts a
        runner ahead while the previous candidate runs. No device is touched and no candidate's code runs."""
        torch = self.torch()
        import torch.utils.cpp_extension  # noqa: F401  (load_inline's module, most of an extension's import)
        _guard_module()
        if request.get("triton"):
            with contextlib.suppress(Exception):  # not installed, or no GPU build: the candidate says so itself
                import triton  # noqa: F401
                import triton.language  # noqa: F401
        return {"ok": True, "torch": torch.__version__}

    # -- building

    def forget_task(self) -> None:
        """Drops the models of the previous task and gives their memory back."""
        self.built.clear()
        for name in self.module_names:
            sys.modules.pop(name, None)
        self.module_names.clear()
        gc.collect()
        # Compiled baselines live in torch._dynamo; where nothing imported it there is nothing to reset, and
        # importing it only to reset it costs seconds (a runner started ahead has torch but no compiled model).
        if self.torch_ready and "torch._dynamo" in sys.modules:
            with contextlib.suppress(Exception):
                sys.modules["torch._dynamo"].reset()
        self.release_device_memory()

    def release_device_memory(self) -> None:
        """Gives the blocks torch's allocator keeps cached back to the GPU. Between requests this helper is idle
        while other processes share the device (the evaluator's timing, other evaluators' helpers): blocks kept
        from a request over gigabytes would make their allocations fail."""
        if self.torch_ready:
            torch = self.torch()
            if torch.cuda.is_available() and torch.cuda.is_initialized():
                torch.cuda.empty_cache()

    def build(self, request: Dict[str, Any]) -> Tuple[Built, bool]:
        """The problem built for the request's configuration and device, and whether it was built now."""
        task_key = str(request.get("task_key") or "")
        problem = request["problem"]
        if task_key != self.task_key:
            self.forget_task()
            self.task_key = task_key
        constants = {str(k): int(v) for k, v in (problem.get("constants") or {}).items()}
        device_name = request.get("device") or "cpu"
        candidate = problem.get("candidate")
        config = str(request.get("config") or "") + repr(sorted(constants.items()))
        if candidate:
            config += hashlib.sha256(str(candidate.get("source", "")).encode()).hexdigest()
        key = (task_key, config, device_name)
        if key in self.built:
            return self.built[key], False
        torch = self.torch()
        device = self.device(device_name)
        source = problem["source"]
        filename = problem.get("path") or "problem.py"
        tree = rewrite_constants(source, constants, filename)
        digest = hashlib.sha256((source + repr(sorted(constants.items()))).encode()).hexdigest()[:16]
        module, path = self.new_module("problem", digest, source)
        try:
            exec(compile(tree, path, "exec"), module.__dict__)  # noqa: S102 - the problem file, in this helper only
        except Exception as error:
            raise OracleError("module", f"executing {filename} failed{_problem_line(error, path)}: "
                                        f"{_error_text(error)}") from None
        for needed in ("Model", "get_init_inputs"):
            if not hasattr(module, needed):
                raise OracleError("module", f"{filename} defines no {needed}; a KernelBench problem defines class "
                                            "Model(nn.Module), get_init_inputs() and get_inputs()")
        seed = int(problem.get("seed", 42))
        try:
            torch.manual_seed(seed)
            init = module.get_init_inputs()
            init = [x.to(device) if isinstance(x, torch.Tensor) else x for x in init]
        except Exception as error:
            raise OracleError("build", f"get_init_inputs() of {filename} failed{_problem_line(error, path)}: "
                                       f"{_error_text(error)}") from None
        model_class, model_path, model_file, stage = module.Model, path, filename, "build"
        if candidate:
            model_class, model_path, model_file = self.candidate_class(candidate, constants)
            stage = "candidate_build"
        try:
            torch.manual_seed(seed)
            model = model_class(*init)
            model = model.to(device)
            if not problem.get("training", True):
                model.eval()
        except Exception as error:
            name = "ModelNew" if candidate else "the model"
            raise OracleError(stage, f"building {name} of {model_file} failed{_problem_line(error, model_path)}: "
                                     f"{_error_text(error)}") from None
        if candidate:
            self.check_candidate("after ModelNew was built")
        initial = {k: v.detach().clone() for k, v in model.state_dict().items()}
        built = Built(module, model, initial, model_path, candidate=bool(candidate))
        self.built[key] = built
        return built, True

    def new_module(self, kind: str, digest: str, source: str) -> Tuple[Any, str]:
        """An empty module for a file's code, registered until the task changes, and the file's original text
        written to this helper's folder (for tracebacks, and for torch.compile, which reads source lines; the
        rewritten literals keep their line numbers). Returns (module, path)."""
        path = os.path.abspath(os.path.join(self.workdir, f"{kind}_{digest}.py"))
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(source)
        name = f"kernelsmith_{kind}_{digest}"
        module = types.ModuleType(name)
        module.__file__ = path
        sys.modules[name] = module
        self.module_names.append(name)
        return module, path

    def candidate_class(self, candidate: Dict[str, Any], constants: Dict[str, int]) -> Tuple[Any, str, str]:
        """Executes a ModelNew file (its constants given this configuration's values where it assigns them)
        and returns (ModelNew, its path on disk, its name for messages). Its torch extension builds go into
        this helper's folder: the helper runs this one candidate, confined, and is ended after it."""
        source = str(candidate.get("source", ""))
        filename = str(candidate.get("path") or "candidate.py")
        present = {name: value for name, value in constants.items() if re.search(rf"^{re.escape(name)}\s*[:=]", source, re.M)}
        try:
            tree = rewrite_constants(source, present, filename)
        except OracleError as error:
            raise OracleError("candidate", error.message) from None
        digest = hashlib.sha256(source.encode()).hexdigest()[:16]
        extensions = os.path.join(self.workdir, "torch_extensions")
        os.makedirs(extensions, exist_ok=True)
        os.environ["TORCH_EXTENSIONS_DIR"] = extensions
        # cpp_extension runs ninja and the compiler by name: the interpreter's own bin folder (a virtual
        # environment's ninja) comes first.
        interpreter_bin = os.path.dirname(sys.executable)
        if interpreter_bin not in os.environ.get("PATH", "").split(os.pathsep):
            os.environ["PATH"] = interpreter_bin + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin")
        # A library the evaluator's builder made from exactly this call, else a build here on every core with the
        # precompiled header (extension_build.py; docs/kernelbench-modelnew.md, "Builds").
        _extension_build_module().RunnerBuilds.install_once(self.workdir)
        module, path = self.new_module("candidate", digest, source)
        self.guard_candidate(path)
        try:
            exec(compile(tree, path, "exec"), module.__dict__)  # noqa: S102 - the candidate, confined, in its own helper
        except BaseException as error:  # SystemExit from a failed build script is the candidate's failure too
            if isinstance(error, KeyboardInterrupt):
                raise
            raise OracleError("candidate", f"executing {filename} failed{_problem_line(error, path)}: "
                                           f"{_error_text(error)}") from None
        self.check_candidate("after its file ran")
        model_class = getattr(module, "ModelNew", None)
        if not isinstance(model_class, type):
            raise OracleError("candidate", f"{filename} defines no class ModelNew; a KernelBench candidate defines "
                                           "class ModelNew(nn.Module) with the Model's constructor and forward")
        return model_class, path, filename

    # -- a candidate's integrity (_host_code_guard.py; docs/kernelbench-modelnew.md, "Integrity")

    def guard_candidate(self, path: str) -> None:
        """Before the candidate's file runs: the ledger of its own kernels installed, then what it must leave
        alone taken (functions, settings, threads, processes)."""
        torch = self.torch()
        guards = _guard_module()
        # torch.compile inside a candidate compiles in this process, not in a pool of workers that would outlive
        # its forward.
        os.environ["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
        self.ledger = guards.KernelLedger(torch, path)
        self.ledger.install()
        self.guard = guards.Guard(torch, OracleError, globals(), extra=self.ledger.wrappers)
        self.candidate_flags = []
        self.candidate_notes = []

    def check_candidate(self, moment: str) -> None:
        """Refuses a candidate that replaced a guarded function or left work in the background; a changed
        setting is put back and flagged."""
        if self.guard is None:
            return
        self.guard.verify(moment)
        changed = self.guard.settings_changed()
        if changed and "torch_settings_changed" not in self.candidate_flags:
            self.candidate_flags.append("torch_settings_changed")
            self.candidate_notes.append(f"{moment}, torch's settings {', '.join(changed)} had changed (put back)")

    def candidate_reply(self, calls_before: int) -> Dict[str, Any]:
        """What a reply about a candidate adds: calls of its own kernels during the request, and flags."""
        calls = (self.ledger.total_calls() - calls_before) if self.ledger is not None else 0
        return {"custom_calls": calls, "flags": list(self.candidate_flags), "notes": list(self.candidate_notes)}

    # -- tensors

    def read_tensor(self, spec: Dict[str, Any], device: Any) -> Any:
        torch = self.torch()
        name, dtype_name = spec["name"], spec["dtype"]
        if dtype_name not in TORCH_DTYPES:
            raise OracleError("inputs", f"tensor {name}: unknown dtype {dtype_name!r}")
        dtype = getattr(torch, TORCH_DTYPES[dtype_name])
        shape = [int(d) for d in spec["shape"]]
        count = math.prod(shape)
        element = torch.empty((), dtype=dtype).element_size()
        try:
            size = os.path.getsize(spec["path"])
        except OSError as error:
            raise OracleError("inputs", f"tensor {name}: cannot read {spec['path']}: {error}") from None
        if size != count * element:
            raise OracleError("inputs", f"tensor {name}: {spec['path']} holds {size} bytes, but {dtype_name} "
                                        f"{shape} takes {count * element}")
        flat = torch.from_file(spec["path"], shared=False, size=count, dtype=dtype) if count else \
            torch.empty(0, dtype=dtype)
        return flat.reshape(shape).to(device)

    def inputs(self, specs: Sequence[Dict[str, Any]], device: Any) -> Dict[str, Any]:
        return {spec["name"]: self.read_tensor(spec, device) for spec in specs}

    def load_parameters(self, built: Built, problem: Dict[str, Any], tensors: Dict[str, Any]) -> None:
        """Restores the seeded state, then copies the task's tensors into the named state-dict entries."""
        state = built.model.state_dict()
        parameters = problem.get("parameters") or {}
        filename = problem.get("path") or "problem.py"
        torch = self.torch()
        with torch.no_grad():
            for entry, value in built.initial.items():
                if entry not in parameters:
                    state[entry].copy_(value)
            for entry, tensor_name in parameters.items():
                if entry not in state:
                    if built.candidate:
                        raise OracleError("parameters", f"ModelNew has no state-dict entry {entry!r}, which the "
                                                        f"problem's Model has (ModelNew has: "
                                                        f"{', '.join(state) or 'none'}): keep the Model's parameter "
                                                        "and submodule names, so that both get the same weights")
                    raise OracleError("parameters", f"the model of {filename} has no state-dict entry {entry!r} "
                                                    f"(it has: {', '.join(state) or 'none'})")
                if tensor_name not in tensors:
                    raise OracleError("parameters", f"the oracle loads {entry} from tensor {tensor_name}, which the "
                                                    "request does not carry")
                value = tensors[tensor_name]
                if tuple(value.shape) != tuple(state[entry].shape):
                    raise OracleError("parameters", f"{entry} has shape {list(state[entry].shape)} in the model, "
                                                    f"but tensor {tensor_name} has {list(value.shape)}")
                state[entry].copy_(value)

    def arguments(self, problem: Dict[str, Any], tensors: Dict[str, Any]) -> List[Any]:
        casts = problem.get("casts") or {}
        arguments = []
        for name in problem.get("forward") or []:
            if name not in tensors:
                raise OracleError("inputs", f"forward takes tensor {name}, which the request does not carry")
            value = tensors[name]
            cast = casts.get(name)
            if cast == "bool":
                value = value != 0
            elif cast in ("python_float", "python_int"):
                if value.numel() != 1:
                    raise OracleError("inputs", f"tensor {name} is cast to a Python number but has "
                                                f"{value.numel()} elements")
                value = float(value.item()) if cast == "python_float" else int(value.item())
            elif cast is not None:
                raise OracleError("inputs", f"tensor {name}: unknown cast {cast!r} (known: {', '.join(CASTS)})")
            arguments.append(value)
        return arguments

    def flatten(self, result: Any, filename: str) -> List[Any]:
        torch = self.torch()
        if isinstance(result, torch.Tensor):
            return [result]
        if isinstance(result, (tuple, list)):
            return [tensor for item in result for tensor in self.flatten(item, filename)]
        if isinstance(result, (bool, int, float)):
            return [torch.tensor(result)]
        raise OracleError("outputs", f"Model.forward of {filename} returns a {type(result).__name__}; the oracle "
                                     "takes a tensor, a number, or a tuple or list of them")

    # -- requests

    def outputs(self, request: Dict[str, Any]) -> Dict[str, Any]:
        started = time.perf_counter()
        built, fresh = self.build(request)
        torch = self.torch()
        problem = request["problem"]
        filename = problem.get("path") or "problem.py"
        device = self.device(request.get("device") or "cpu")
        tensors = self.inputs(request.get("inputs") or [], device)
        self.load_parameters(built, problem, tensors)
        arguments = self.arguments(problem, tensors)
        if built.candidate:
            filename = str(problem["candidate"].get("path") or "candidate.py")
            # What forward receives, as it was: a candidate must leave its inputs alone.
            before = [(name, value.detach().clone()) for name, value in zip(problem.get("forward") or [], arguments)
                      if isinstance(value, torch.Tensor)]
        calls_before = self.ledger.total_calls() if built.candidate and self.ledger is not None else 0
        try:
            torch.manual_seed(int(problem.get("seed", 42)))
            with torch.no_grad():
                result = built.model(*arguments)
        except Exception as error:
            raise OracleError("forward", f"{built.label}.forward of {filename} failed on the sizes "
                                         f"'{request.get('config', '')}'{_problem_line(error, built.path)}: "
                                         f"{_error_text(error)}") from None
        if built.candidate:
            # Work a candidate left on other streams finishes before its outputs are read: such work is flagged
            # by the inspection and the timing (async_work_at_return, work_escaped_timer), not left to a race.
            synchronize(torch, device)
            self.check_candidate_result(result, arguments, before, problem)
            self.check_candidate("after ModelNew.forward returned")
        results = self.flatten(result, filename)
        specs = request.get("outputs") or []
        if len(results) != len(specs):
            raise OracleError("outputs", f"{built.label}.forward of {filename} returns {len(results)} tensor(s), but "
                                         f"the task names {len(specs)} output(s) "
                                         f"({', '.join(s['name'] for s in specs)})")
        for value, spec in zip(results, specs):
            self.write_output(value, spec, request.get("config", ""))
        reply = {"ok": True, "built": fresh, "seconds": time.perf_counter() - started}
        if built.candidate:
            reply.update(self.candidate_reply(calls_before))
        return reply

    def check_candidate_result(self, result: Any, arguments: Sequence[Any], before: Sequence[Tuple[str, Any]],
                               problem: Dict[str, Any]) -> None:
        """Refuses a ModelNew forward that wrote into an input, returned an input (or a view of one: the work
        an output costs, skipped), or returned something other than plain tensors (a subclass or a lazy
        object that would compute when the checker reads it)."""
        torch = self.torch()
        for name, value in before:
            after = dict(zip(problem.get("forward") or [], arguments))[name]

            def raw(tensor: Any) -> Any:  # bytes, so that NaNs compare equal to themselves
                return tensor.detach().reshape(-1).contiguous().view(torch.uint8)

            same = after.shape == value.shape and after.dtype == value.dtype and (
                value.numel() == 0 or bool(torch.equal(raw(after), raw(value))))
            if not same:
                raise OracleError("input_changed", f"ModelNew.forward wrote into its input {name}; inputs must stay "
                                                   "unchanged (compute into a new tensor)")
        items = list(result) if isinstance(result, (tuple, list)) else [result]
        storages = {}
        for name, value in zip(problem.get("forward") or [], arguments):
            if isinstance(value, torch.Tensor) and value.numel():
                storages[value.untyped_storage().data_ptr()] = name
        for index, item in enumerate(items):
            if isinstance(item, (bool, int, float)):
                continue
            if type(item) is not torch.Tensor:  # noqa: E721 - a subclass is exactly what is refused
                raise OracleError("output_type", f"ModelNew.forward returns a {type(item).__module__}."
                                                 f"{type(item).__qualname__} as output {index}; return plain "
                                                 "torch.Tensor results")
            owner = storages.get(item.untyped_storage().data_ptr()) if item.numel() else None
            if owner is not None and owner.startswith("output"):
                raise OracleError("output_aliased", f"ModelNew.forward returns output {index} in the memory of its "
                                                    f"{owner}; each output must be a tensor of its own")
            if item.numel() and item.untyped_storage().data_ptr() in storages:
                raise OracleError("input_returned", f"ModelNew.forward returns its input "
                                                    f"{storages[item.untyped_storage().data_ptr()]} (or a view of it) "
                                                    f"as output {index}; compute the output into a new tensor")
            if item.numel():
                storages[item.untyped_storage().data_ptr()] = f"output {index}"
            # Fewer elements stored than the output has (a broadcast view, stride 0): the work of the output's
            # other elements was never done; flagged, as a reference may return such a view too.
            if item.numel() > 1 and item.untyped_storage().nbytes() < item.numel() * item.element_size() and \
                    "output_not_dense" not in self.candidate_flags:
                self.candidate_flags.append("output_not_dense")
                self.candidate_notes.append(f"output {index} is a view with {item.untyped_storage().nbytes()} bytes "
                                            f"of storage for {item.numel()} elements")

    def write_output(self, value: Any, spec: Dict[str, Any], config: str) -> None:
        torch = self.torch()
        name, dtype_name = spec["name"], spec["dtype"]
        shape = [int(d) for d in spec["shape"]]
        if list(value.shape) != shape:
            raise OracleError("outputs", f"output {name}: the module returns shape {list(value.shape)}, but the "
                                         f"task says {shape} under the sizes '{config}'")
        dtype = getattr(torch, TORCH_DTYPES.get(dtype_name, "float32"))
        # A bool result is a uint8 task tensor (docs/kernelbench.md); any other dtype must be the task's.
        if value.dtype != dtype and not (value.dtype == torch.bool and dtype == torch.uint8):
            raise OracleError("outputs", f"output {name}: the module returns {str(value.dtype).replace('torch.', '')}, "
                                         f"but the task says {dtype_name}")
        value = value.detach()
        count = value.numel()
        size = count * torch.empty((), dtype=dtype).element_size()
        if size < MAPPED_OUTPUT_BYTES:
            data = value.to("cpu").to(dtype).contiguous()
            with open(spec["path"], "wb") as handle:
                if size:
                    handle.write(memoryview((ctypes.c_ubyte * size).from_address(data.data_ptr())))
            return
        # Gigabytes: copied from the device (or by torch's threads) straight into the file's pages, with no
        # host copy in between and no single-threaded write(). The space is reserved first, so that a full
        # file system is an error here, not a fault while copying.
        with open(spec["path"], "wb") as handle:
            os.posix_fallocate(handle.fileno(), 0, size)
        mapped = torch.from_file(spec["path"], shared=True, size=count, dtype=dtype)
        mapped.view(value.shape).copy_(value)
        del mapped

    def baseline(self, built: Built, name: str) -> Callable[..., Any]:
        """The callable a baseline times (a torch.compile baseline compiles at its first call)."""
        if name == "eager":
            return built.model
        if name in built.compile_failures:
            raise OracleError("baseline", built.compile_failures[name])
        if name in built.compiled:
            return built.compiled[name]
        torch = self.torch()
        try:
            torch._dynamo.reset()  # each mode compiles from scratch, not from another mode's cache
            mode = "max-autotune-no-cudagraphs" if name == "compile_max_autotune" else None
            compiled = torch.compile(built.model, mode=mode)
        except Exception as error:
            built.compile_failures[name] = f"torch.compile is not available here: {_error_text(error)}"
            raise OracleError("baseline", built.compile_failures[name]) from None
        built.compiled[name] = compiled
        return compiled

    def time(self, request: Dict[str, Any]) -> Dict[str, Any]:
        name = request.get("baseline", "eager")
        if name not in BASELINES:
            raise OracleError("request", f"unknown baseline {name!r} (known: {', '.join(BASELINES)})")
        built, _ = self.build(request)
        torch = self.torch()
        problem = request["problem"]
        device = self.device(request.get("device") or "cpu")
        sets = [self.inputs(specs, device) for specs in request.get("input_sets") or []]
        if not sets:
            raise OracleError("request", "a time request needs at least one input set")
        self.load_parameters(built, problem, sets[0])
        argument_sets = [self.arguments(problem, tensors) for tensors in sets]
        function = self.baseline(built, name)
        compile_started = time.perf_counter()
        # A candidate's first run takes values it will not see again (the exact sets are for the checked runs).
        first = fresh_arguments(torch, argument_sets[0], torch.Generator(device=device).manual_seed(3)) \
            if built.candidate else argument_sets[0]
        try:
            with torch.no_grad(), _torch_defaults(torch):
                function(*first)  # compiles a torch.compile baseline (under the settings it is timed in)
            synchronize(torch, device)
        except Exception as error:
            if name == "eager":
                raise OracleError("forward", f"{built.label}.forward failed: {_error_text(error)}") from None
            built.compile_failures[name] = f"torch.compile ({name}) failed: {_error_text(error)}"
            built.compiled.pop(name, None)
            raise OracleError("baseline", built.compile_failures[name]) from None
        compile_seconds = time.perf_counter() - compile_started if name != "eager" else 0.0
        settings = request.get("settings") or {}
        if not built.candidate:
            with torch.no_grad(), _torch_defaults(torch):
                report = measure(torch, device, function, argument_sets, settings, name)
            return {"ok": True, "timing": report, "compile_seconds": compile_seconds}
        calls_before = self.ledger.total_calls() if self.ledger is not None else 0
        timed: Dict[str, Any] = {"prepare_exact": lambda index: self.load_parameters(built, problem, sets[index])}
        with torch.no_grad(), _torch_defaults(torch):
            expected_settings = _guard_module().read_settings(torch)
            try:
                report = measure(torch, device, function, argument_sets, settings, built.label, candidate=timed)
            except OracleError:
                raise
            except Exception as error:
                raise OracleError("forward", f"ModelNew.forward failed while timed: {_error_text(error)}") from None
            changed = self.guard.settings_changed(expected_settings) if self.guard is not None else []
        self.check_candidate("after the timed runs")
        if changed and "torch_settings_changed" not in self.candidate_flags:
            self.candidate_flags.append("torch_settings_changed")
            self.candidate_notes.append(f"while timed, torch's settings {', '.join(changed)} changed (put back)")
        drains = sorted(timed.get("drain_ms") or [])
        if drains:
            drain = drains[len(drains) // 2]
            guards = _guard_module()
            if drain * 1e-3 > guards.DRAIN_SECONDS and drain > guards.DRAIN_SHARE * report["median_ms"] and \
                    "work_escaped_timer" not in self.candidate_flags:
                self.candidate_flags.append("work_escaped_timer")
                self.candidate_notes.append(f"after each timed run's end event, the device still worked {drain:.3g} "
                                            f"ms (median) on work the timed stream did not wait for")
        # The checked runs' results, written where the evaluator reads them (each as `outputs` writes one).
        checks = request.get("check_outputs") or []
        for index, (result, specs) in enumerate(zip(timed.get("results") or [], checks)):
            self.check_candidate_result(result, [], [], problem)
            values = self.flatten(result, "candidate.py")
            if len(values) != len(specs):
                raise OracleError("outputs", f"timed run {index}: ModelNew.forward returns {len(values)} tensor(s), "
                                             f"but the task names {len(specs)} output(s)")
            for value, spec in zip(values, specs):
                self.write_output(value, spec, request.get("config", ""))
        reply = {"ok": True, "timing": report, "compile_seconds": compile_seconds}
        reply.update(self.candidate_reply(calls_before))
        return reply

    def inspect(self, request: Dict[str, Any]) -> Dict[str, Any]:
        """What a ModelNew's forward runs (_host_code_guard.profile_forward), whether a device-wide
        synchronisation after it returned still waited (work left running at return), and whether its outputs
        depend on its own kernels: the forward again with each of them made a no-op that writes noise (the
        ablation run) must change them. -> {"ok": true, "host_code": {"kernels", "custom_share", "custom_calls",
        "ablation": "changed" | "unchanged" | "no_custom_calls"}, "flags", "notes"}."""
        built, _ = self.build(request)
        if not built.candidate:
            raise OracleError("request", "inspect is for a problem with a ModelNew candidate")
        torch = self.torch()
        guards = _guard_module()
        problem = request["problem"]
        device = self.device(request.get("device") or "cpu")
        tensors = self.inputs(request.get("inputs") or [], device)
        self.load_parameters(built, problem, tensors)
        arguments = self.arguments(problem, tensors)
        generator = torch.Generator().manual_seed(11)
        # A copy of the inputs per forward, made before it (outside the profiled run).
        copies = [fresh_arguments(torch, arguments, generator, perturb=False) for _ in range(4)]

        def forward() -> List[Any]:
            given = copies.pop()
            torch.manual_seed(int(problem.get("seed", 42)))
            with torch.no_grad():
                result = built.model(*given)
            return self.flatten(result, "candidate.py")

        try:
            result, report, flags = guards.profile_forward(torch, device, forward, self.ledger)
            forward()
            drained = guards.drain_seconds(torch, device)
            plain = forward()
            synchronize(torch, device)
            plain = [v.detach().to("cpu").clone() for v in plain]
            if self.ledger.total_calls() and report["custom_calls"]:
                self.ledger.ablate = True
                try:
                    ablated = forward()
                    synchronize(torch, device)
                    ablated = [v.detach().to("cpu").clone() for v in ablated]
                finally:
                    self.ledger.ablate = False
                report["ablation"] = "unchanged" if guards.same_outputs(torch, plain, ablated) else "changed"
            else:
                report["ablation"] = "no_custom_calls"
        except OracleError:
            raise
        except Exception as error:
            raise OracleError("forward", f"ModelNew.forward failed while inspected: {_error_text(error)}") from None
        del result
        self.check_candidate("after the inspected runs")
        for flag in flags:
            if flag not in self.candidate_flags:
                self.candidate_flags.append(flag)
        if drained > guards.DRAIN_SECONDS and "async_work_at_return" not in self.candidate_flags:
            self.candidate_flags.append("async_work_at_return")
            self.candidate_notes.append(f"after forward returned and its stream was done, the device still worked "
                                        f"{drained * 1e3:.3g} ms")
        return {"ok": True, "host_code": report, "flags": list(self.candidate_flags),
                "notes": list(self.candidate_notes)}


def synchronize(torch: Any, device: Any) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


# ---------------------------------------------------------------------------------------------------------
# The timing protocol (lib/evaluate/timing.cpp), in torch


MINIMUM_SAMPLES = 3


def sample_statistics(samples: Sequence[float]) -> Dict[str, float]:
    """Median, mean, minimum and relative standard deviation (n - 1), as kernelsmith's harness computes
    them."""
    ordered = sorted(samples)
    n = len(ordered)
    if n == 0:
        return {"median": 0.0, "mean": 0.0, "min": 0.0, "noise": 0.0}
    median = ordered[n // 2] if n % 2 == 1 else 0.5 * (ordered[n // 2 - 1] + ordered[n // 2])
    mean = sum(ordered) / n
    noise = 0.0
    if n > 1 and mean > 0.0:
        noise = math.sqrt(sum((s - mean) ** 2 for s in ordered) / (n - 1)) / mean
    return {"median": median, "mean": mean, "min": ordered[0], "noise": noise}


def noise_target_met(samples: Sequence[float], stop_rule: str, noise_target: float) -> bool:
    """Whether the samples meet the noise target as the harness judges it (timing.hpp, ``stop_rule``): their
    relative standard deviation ("spread"), or the relative standard error of their mean ("standard_error")."""
    noise = sample_statistics(samples)["noise"]
    if stop_rule == "standard_error":
        noise /= math.sqrt(max(len(samples), 1))
    return noise <= noise_target


class _Flusher:
    """Evicts the last-level cache before a sample as lib/evaluate/cache_flush.cpp does: on a GPU a read
    of a buffer of ``bytes`` (twice the L2), which leaves only clean lines; on the CPU a fill with a new
    byte each time."""

    def __init__(self, torch: Any, device: Any, method: str, size: int):
        self.method = method if size > 0 else "none"
        self.torch = torch
        self.fill_byte = 0
        self.buffer = None
        if self.method == "read":
            # Words of 1 fold to a value nothing compares with; the sum only has to read every word.
            self.buffer = torch.ones(size // 4, dtype=torch.int32, device=device)
        elif self.method == "fill":
            self.buffer = torch.empty(size, dtype=torch.uint8, device=device)

    def flush(self) -> None:
        if self.method == "read":
            self.buffer.sum()
        elif self.method == "fill":
            self.fill_byte = (self.fill_byte + 1) % 256
            self.buffer.fill_(self.fill_byte)


class _Clock:
    """The device's clock around one run: CUDA events on a GPU, the host clock on the CPU (where torch
    runs synchronously)."""

    def __init__(self, torch: Any, device: Any):
        self.torch = torch
        self.device = device
        self.cuda = device.type == "cuda"
        if self.cuda:
            self.begin_event = torch.cuda.Event(enable_timing=True)
            self.end_event = torch.cuda.Event(enable_timing=True)
        self.started = 0.0

    def start(self) -> None:
        if self.cuda:
            self.begin_event.record()
        else:
            self.started = time.perf_counter()

    def stop_ms(self) -> float:
        if self.cuda:
            self.end_event.record()
            self.end_event.synchronize()
            return float(self.begin_event.elapsed_time(self.end_event))
        return (time.perf_counter() - self.started) * 1e3


def fresh_arguments(torch: Any, arguments: Sequence[Any], generator: Any, perturb: bool = True) -> List[Any]:
    """A copy of ``arguments`` no call has seen: new tensors (new identities and, mostly, new addresses), and
    floating-point ones scaled elementwise by a factor between 0.75 and 1.25 (signs and zeros kept), so that no
    cache keyed by identity, address or content finds them, and a result kept from one run is far from
    another's."""
    fresh = []
    for value in arguments:
        if isinstance(value, torch.Tensor):
            if perturb and value.dtype.is_floating_point and value.numel():
                # Drawn on the tensor's device (a host draw of a gigabyte input would dominate the timing loop).
                own = generator is not None and generator.device == value.device
                factor = torch.rand(value.shape, generator=generator if own else None, device=value.device,
                                    dtype=value.dtype)
                value = value * (0.75 + 0.5 * factor)
            else:
                value = value.clone()
        fresh.append(value)
    return fresh


def measure(torch: Any, device: Any, function: Callable[..., Any], argument_sets: Sequence[Sequence[Any]],
            settings: Dict[str, Any], name: str, candidate: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """measure_sequence of lib/evaluate/timing.cpp over one call of ``function``; the runs cycle through
    ``argument_sets`` (the harness's input sets). Returns TimingReport's fields.

    With ``candidate`` (a dict, for a ModelNew), every warm-up and timed run gets inputs no call has seen
    (fresh_arguments), and after the samples one more timed run per input set takes that set's exact values,
    its result kept in ``candidate["results"]`` for the evaluator to check; ``candidate["drain_ms"]`` gets, per
    sample, how long a device-wide synchronisation still waited after the end event (work on other streams)."""
    if device.type == "cuda":
        torch.cuda.set_device(device)
    flusher = _Flusher(torch, device, str(settings.get("flush", "none")), int(settings.get("flush_bytes", 0)))
    clock = _Clock(torch, device)
    runs = [0]
    current = [0]
    generator = torch.Generator(device=device).manual_seed(int(settings.get("seed", 7)))
    prepared: List[Any] = [None]
    last: List[Any] = [None]

    def before_run(exact: bool = False) -> None:
        current[0] = runs[0] % len(argument_sets)
        runs[0] += 1
        if candidate is not None:
            prepared[0] = None
            prepared[0] = fresh_arguments(torch, argument_sets[current[0]], generator, perturb=not exact)

    def run() -> None:
        if prepared[0] is not None:
            last[0] = function(*prepared[0])
        else:
            function(*argument_sets[current[0]])

    def drain() -> None:
        if candidate is not None and device.type == "cuda":
            started = time.perf_counter()
            torch.cuda.synchronize(device)
            candidate.setdefault("drain_ms", []).append((time.perf_counter() - started) * 1e3)

    for _ in range(max(int(settings.get("warmups", 2)), 1)):
        before_run()
        run()
        synchronize(torch, device)

    samples: List[float] = []
    converged = False
    max_samples = max(int(settings.get("max_samples", 1000)), MINIMUM_SAMPLES)
    min_samples = min(max(int(settings.get("min_samples", 10)), MINIMUM_SAMPLES), max_samples)
    noise_target = float(settings.get("noise_target", 0.005))
    stop_rule = str(settings.get("stop_rule", "spread"))
    budget = float(settings.get("budget_seconds", 0.25))
    started = time.perf_counter()
    while len(samples) < max_samples:
        before_run()
        flusher.flush()
        clock.start()
        run()
        samples.append(clock.stop_ms())
        drain()
        taken = len(samples)
        if taken >= min_samples and noise_target_met(samples, stop_rule, noise_target):
            converged = True
            break
        if taken >= MINIMUM_SAMPLES and time.perf_counter() - started >= budget:
            break
    if candidate is not None:
        # The timed runs on the exact input sets, whose results the evaluator checks: the same code path as
        # every sample, on values the candidate has not seen before.
        results = []
        runs[0] = 0
        for index in range(len(argument_sets)):
            if candidate.get("prepare_exact") is not None:
                candidate["prepare_exact"](index)  # the set's own parameters, as the expected outputs had them
            before_run(exact=True)
            flusher.flush()
            clock.start()
            run()
            samples.append(clock.stop_ms())
            drain()
            results.append(last[0])
        candidate["results"] = results
        prepared[0] = None
    stats = sample_statistics(samples)

    # The host clock around back-to-back runs and a full synchronisation: work the device clock missed.
    synchronize(torch, device)
    repeats = max(int(settings.get("host_repeats", 5)), 1)
    host_started = time.perf_counter()
    for _ in range(repeats):
        run()
    synchronize(torch, device)
    host_ms = (time.perf_counter() - host_started) * 1e3 / repeats

    return {
        "mode": str(settings.get("mode", "screen")), "median_ms": stats["median"], "mean_ms": stats["mean"],
        "min_ms": stats["min"], "noise": stats["noise"], "samples": len(samples), "converged": converged,
        "host_ms": host_ms, "l2_flushed": flusher.method != "none",
        "kernels": [{"name": name, "median_ms": stats["median"], "share": 1.0}],
    }


# ---------------------------------------------------------------------------------------------------------
# The helper


def handle(oracle: Oracle, request: Dict[str, Any]) -> Dict[str, Any]:
    """One request -> one reply; every failure is a reply, never an exception."""
    op = request.get("op")
    started = time.perf_counter()
    reply = _handle(oracle, request, op)
    # The time the request took in this process (the evaluator's account of a runner: compile log, "runner:").
    reply["handled_seconds"] = time.perf_counter() - started
    return reply


def _handle(oracle: Oracle, request: Dict[str, Any], op: Any) -> Dict[str, Any]:
    try:
        if op == "version":
            return oracle.version(request)
        if op == "outputs":
            return oracle.outputs(request)
        if op == "time":
            return oracle.time(request)
        if op == "inspect":
            return oracle.inspect(request)
        if op == "warm_up":
            return oracle.warm_up(request)
        raise OracleError("request", f"unknown op {op!r}; expected version, outputs, time, inspect or warm_up")
    except OracleError as error:
        return error.to_json()
    except MemoryError:
        return OracleError("forward", "the oracle ran out of host memory").to_json()
    except Exception as error:  # a torch error outside the problem's code (out of device memory, ...)
        return OracleError("request", _error_text(error)).to_json()
    finally:
        if op in ("outputs", "time", "inspect"):
            oracle.release_device_memory()


def serve(stdin: Any = None, stdout: Any = None, workdir: Optional[str] = None) -> int:
    """Serves requests from stdin until end of input (_helper_io.py)."""
    return _helper_io().serve_json_lines(functools.partial(handle, Oracle(workdir)), stdin, stdout)


def _extension_build_module() -> Any:
    """extension_build.py, loaded by path once (as _helper_io)."""
    name = "kernelsmith_extension_build"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, os.path.join(os.path.dirname(os.path.abspath(__file__)), "extension_build.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def _sibling_module(filename: str) -> Any:
    """A module of this folder, loaded by path once (the helper runs as a script: the package is not importable)
    and kept in sys.modules as kernelsmith_<its name>."""
    name = "kernelsmith_" + filename[:-3].lstrip("_")
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, os.path.join(os.path.dirname(os.path.abspath(__file__)), filename))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def _guard_module() -> Any:
    """_host_code_guard.py (a ModelNew's integrity checks)."""
    return _sibling_module("_host_code_guard.py")


def _helper_io() -> Any:
    """The request loop the helpers share, loaded by path (a helper runs as a script: neither the
    kernelsmith package nor its folder is on sys.path)."""
    spec = importlib.util.spec_from_file_location(
        "kernelsmith_helper_io", os.path.join(os.path.dirname(os.path.abspath(__file__)), "_helper_io.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: Optional[Sequence[str]] = None) -> int:
    return _helper_io().run_helper(lambda workdir: functools.partial(handle, Oracle(workdir)),
                                   "kernelsmith's PyTorch oracle: JSON requests on stdin, one per line.", argv)


if __name__ == "__main__":
    sys.exit(main())
