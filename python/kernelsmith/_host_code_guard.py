"""The integrity checks of a ModelNew candidate, in the runner that executes it (pytorch_oracle.py; the classes
they catch: docs/kernelbench-modelnew.md, "Integrity").

The candidate's host code runs in the same Python process as the code that checks and times it, so everything
here is taken before the candidate's file is executed and compared afterwards:

- ``Guard`` remembers the objects (and code objects) of the functions the checks and the timing call (torch's
  synchronisation and events, the host clocks, comparisons, the runner's own functions and classes), torch's
  numerical settings, and which threads and child processes exist; ``verify`` refuses a candidate that replaced
  one of those functions or left a thread or process running, and ``settings_changed`` names (and undoes) a
  change of the settings.
- ``KernelLedger`` wraps what the candidate builds its own kernels with (``torch.utils.cpp_extension``'s
  ``load_inline`` and ``load``, Triton's ``JITFunction.run``) so that every call of one of its kernels is
  counted, named under the profiler, and can be replaced by a no-op that writes noise (the ablation run that
  shows whether the outputs depend on the candidate's kernels).
- ``profile_forward`` runs one forward under torch.profiler and splits what ran into the candidate's kernels and
  library ones (ATen, cuBLAS, cuDNN), with launches and device time.

Defence in depth: the outputs are compared with the expected ones by the evaluator, in another process; what a
candidate can rewrite in place (a code object's bytes through ctypes) is beyond these checks.

Loaded by path (the runner runs as a script); imports only the standard library at import time.
"""

from __future__ import annotations

import builtins
import collections
import contextlib
import os
import re
import sys
import threading
import time
import warnings
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

#: The functions whose replacement is refused: what the checks and the timing call, and what a naive harness
#: compares with. Dotted paths from torch (``torch.`` left out) and from the time module (``time.``).
GUARDED_TORCH = (
    "cuda.synchronize", "cuda.Event", "cuda.Event.record", "cuda.Event.synchronize", "cuda.Event.elapsed_time",
    "cuda.Event.query", "cuda.current_stream", "cuda.set_device", "cuda.Stream", "cuda.Stream.synchronize",
    "_C._cuda_synchronize", "equal", "allclose", "isclose", "testing.assert_close", "no_grad",
    "from_file", "empty", "zeros_like", "randn", "Tensor.to", "Tensor.cpu", "Tensor.contiguous", "Tensor.clone",
    "Tensor.detach", "Tensor.copy_", "Tensor.reshape", "Tensor.view", "Tensor.numel", "Tensor.data_ptr",
    "Tensor.untyped_storage", "Tensor.__eq__", "Tensor.sum", "Tensor.fill_", "Tensor.equal", "Tensor.is_contiguous",
    "nn.Module.__call__", "nn.Module._call_impl", "nn.Module.state_dict", "nn.Module.load_state_dict",
    "profiler.profile", "autograd.profiler.record_function", "get_num_threads", "set_num_threads",
    "utils.cpp_extension.load_inline", "utils.cpp_extension.load",
)
GUARDED_TIME = ("perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "time", "time_ns", "process_time")
GUARDED_BUILTINS = ("isinstance", "type", "len", "open", "getattr", "sorted", "sum", "min", "max", "abs")
#: Prefix of the profiler ranges that name the candidate's kernel calls.
CANDIDATE_RANGE = "kernelsmith.candidate:"
#: A synchronisation after the end event that lasts this long (and this share of a sample) means work the
#: timed stream did not wait for.
DRAIN_SECONDS = 50e-6
DRAIN_SHARE = 0.1


def _resolve(root: Any, dotted: str) -> Any:
    value = root
    for part in dotted.split("."):
        value = getattr(value, part)
    return value


def read_settings(torch: Any) -> Dict[str, Any]:
    """torch's global numerical settings that change what a program computes or how fast the baseline runs."""
    settings: Dict[str, Any] = {}
    readers = {
        "torch.backends.cuda.matmul.allow_tf32": lambda: torch.backends.cuda.matmul.allow_tf32,
        "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction":
            lambda: torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
        "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction":
            lambda: torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction,
        "torch.backends.cudnn.allow_tf32": lambda: torch.backends.cudnn.allow_tf32,
        "torch.backends.cudnn.benchmark": lambda: torch.backends.cudnn.benchmark,
        "torch.backends.cudnn.deterministic": lambda: torch.backends.cudnn.deterministic,
        "torch.backends.cudnn.enabled": lambda: torch.backends.cudnn.enabled,
        "float32_matmul_precision": torch.get_float32_matmul_precision,
        "deterministic_algorithms": torch.are_deterministic_algorithms_enabled,
        "num_threads": torch.get_num_threads,
        "num_interop_threads": torch.get_num_interop_threads,
        "default_dtype": lambda: str(torch.get_default_dtype()),
    }
    for name, reader in readers.items():
        with contextlib.suppress(Exception):
            settings[name] = reader()
    return settings


def write_settings(torch: Any, settings: Dict[str, Any]) -> None:
    """Puts back the settings read_settings took (those that can be set again)."""
    writers: Dict[str, Callable[[Any], None]] = {
        "torch.backends.cuda.matmul.allow_tf32": lambda v: setattr(torch.backends.cuda.matmul, "allow_tf32", v),
        "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction":
            lambda v: setattr(torch.backends.cuda.matmul, "allow_fp16_reduced_precision_reduction", v),
        "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction":
            lambda v: setattr(torch.backends.cuda.matmul, "allow_bf16_reduced_precision_reduction", v),
        "torch.backends.cudnn.allow_tf32": lambda v: setattr(torch.backends.cudnn, "allow_tf32", v),
        "torch.backends.cudnn.benchmark": lambda v: setattr(torch.backends.cudnn, "benchmark", v),
        "torch.backends.cudnn.deterministic": lambda v: setattr(torch.backends.cudnn, "deterministic", v),
        "torch.backends.cudnn.enabled": lambda v: setattr(torch.backends.cudnn, "enabled", v),
        "float32_matmul_precision": torch.set_float32_matmul_precision,
        "deterministic_algorithms": torch.use_deterministic_algorithms,
        "num_threads": torch.set_num_threads,
        "default_dtype": lambda v: torch.set_default_dtype(getattr(torch, v.replace("torch.", ""))),
    }
    for name, value in settings.items():
        if name in writers:
            with contextlib.suppress(Exception):
                writers[name](value)


def _children() -> set:
    """The live child processes of this process (zombies left out)."""
    pids = set()
    with contextlib.suppress(OSError):
        for task in os.listdir("/proc/self/task"):
            with contextlib.suppress(OSError), open(f"/proc/self/task/{task}/children", encoding="ascii") as handle:
                pids.update(int(p) for p in handle.read().split())
    live = set()
    for pid in pids:
        with contextlib.suppress(OSError), open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            if handle.read().rsplit(")", 1)[-1].split()[0] != "Z":
                live.add(pid)
    return live


class Guard:
    """What the candidate must leave alone, taken before its file runs (see the module's docstring)."""

    def __init__(self, torch: Any, failure: Callable[[str, str], Exception], owner_globals: Dict[str, Any],
                 extra: Sequence[Any] = ()):
        self.torch = torch
        self.failure = failure
        self.functions: List[Tuple[str, Any, Any, Any]] = []  # (label, container, name, object)
        self.codes: Dict[int, Tuple[str, Any]] = {}
        for dotted in GUARDED_TORCH:
            self._remember(f"torch.{dotted}", torch, dotted)
        for dotted in GUARDED_TIME:
            self._remember(f"time.{dotted}", time, dotted)
        for name in GUARDED_BUILTINS:
            self._remember(f"builtins.{name}", builtins, name)
        self._remember("sys._current_frames", sys, "_current_frames")
        # The runner's own module (pytorch_oracle.py) and this one: every function and class, and each class's
        # methods.
        self.owner_globals = owner_globals
        for scope in (owner_globals, globals()):
            for name, value in list(scope.items()):
                if callable(value) and getattr(value, "__module__", None) == scope.get("__name__"):
                    self.functions.append((f"{scope.get('__name__')}.{name}", scope, name, value))
                    self._remember_code(f"{scope.get('__name__')}.{name}", value)
                    if isinstance(value, type):
                        for attribute, member in list(vars(value).items()):
                            if callable(member) or isinstance(member, (staticmethod, classmethod, property)):
                                self.functions.append((f"{name}.{attribute}", value, attribute, member))
                                self._remember_code(f"{name}.{attribute}", getattr(member, "__func__", member))
        for index, value in enumerate(extra):
            self._remember_code(f"wrapper {index}", value)
        self.class_members = {id(value): (value, set(vars(value))) for _, scope, _, value in self.functions
                              if isinstance(value, type) and isinstance(scope, dict)}
        self.current_frames = sys._current_frames
        self.perf_counter = time.perf_counter
        self.threads = set(self.current_frames())
        self.children = _children()
        self.settings = read_settings(torch)

    def _remember(self, label: str, root: Any, dotted: str) -> None:
        with contextlib.suppress(Exception):
            container = _resolve(root, dotted.rsplit(".", 1)[0]) if "." in dotted else root
            name = dotted.rsplit(".", 1)[-1]
            value = vars(container)[name] if isinstance(container, type) and name in vars(container) else \
                getattr(container, name)
            self.functions.append((label, container, name, value))
            self._remember_code(label, value)

    def _remember_code(self, label: str, value: Any) -> None:
        code = getattr(value, "__code__", None)
        if code is not None:
            self.codes[id(value)] = (label, value, code)

    # -- checks

    def replaced(self) -> List[str]:
        """The guarded functions that are no longer what they were."""
        found = []
        for label, container, name, value in self.functions:
            try:
                if isinstance(container, dict):
                    now = container.get(name)
                elif isinstance(container, type):
                    now = vars(container)[name] if name in vars(container) else getattr(container, name, None)
                else:
                    now = getattr(container, name)
            except Exception:  # noqa: BLE001 - a property that now raises is a replacement too
                now = None
            if now is not value:
                found.append(label)
        for label, value, code in self.codes.values():
            if getattr(value, "__code__", code) is not code:
                found.append(f"{label} (its code)")
        for value, members in self.class_members.values():
            added = set(vars(value)) - members
            if added:
                found.append(f"{value.__name__} (added {', '.join(sorted(added))})")
        return sorted(set(found))

    def background(self) -> List[str]:
        """Threads and child processes started since the guard was made and alive now."""
        found = []
        threads = set(self.current_frames()) - self.threads - {threading.get_ident()}
        if threads:
            found.append(f"{len(threads)} thread(s)")
        children = _children() - self.children
        if children:
            found.append(f"{len(children)} child process(es) (pid {', '.join(str(p) for p in sorted(children))})")
        return found

    def verify(self, moment: str) -> None:
        """Raises the runner's failure (stage ``tampering`` or ``background_work``) when the candidate replaced a
        guarded function or left work running in the background."""
        replaced = self.replaced()
        if replaced:
            raise self.failure("tampering", f"{moment}, ModelNew's code had replaced {', '.join(replaced[:8])}"
                                            f"{' and more' if len(replaced) > 8 else ''}: a candidate may not "
                                            "monkeypatch torch, the clocks, comparisons or the evaluator")
        left = self.background()
        if left:
            raise self.failure("background_work", f"{moment}, ModelNew had left {' and '.join(left)} running: work "
                                                  "in the background escapes the timer; compute everything in "
                                                  "forward and finish before returning")

    def settings_changed(self, expected: Optional[Dict[str, Any]] = None) -> List[str]:
        """The settings that differ from ``expected`` (those taken when the guard was made), each put back."""
        expected = self.settings if expected is None else expected
        now = read_settings(self.torch)
        changed = sorted(name for name in expected if now.get(name) != expected[name])
        if changed:
            write_settings(self.torch, {name: expected[name] for name in changed})
        return changed


# ---------------------------------------------------------------------------------------------------------
# The candidate's own kernels


_GLOBAL = re.compile(r"__global__\s+(?:[\w:<>]+\s+)*?(?:void\s+)?(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\(")


class KernelLedger:
    """Counts the calls of the kernels the candidate builds itself and can turn them into no-ops that write noise
    (the ablation run). Installed before the candidate's file runs."""

    def __init__(self, torch: Any, candidate_path: str):
        self.torch = torch
        self.candidate_path = candidate_path
        self.calls: Dict[str, int] = collections.Counter()
        self.names: set = set()  # kernel names the profiler may show: __global__ functions, Triton kernels
        self.profiling = False
        self.ablate = False
        self.wrappers: List[Any] = []
        self.perf_counter = time.perf_counter
        self.seconds: Dict[str, float] = collections.Counter()
        self.generator = torch.Generator().manual_seed(1234)

    # -- installing

    def install(self) -> None:
        import torch.utils.cpp_extension as extension  # noqa: PLC0415 - what the candidate builds with
        for builder in ("load_inline", "load"):
            original = getattr(extension, builder, None)
            if original is not None:
                wrapped = self._wrap_builder(original, builder)
                setattr(extension, builder, wrapped)
                self.wrappers.append(wrapped)
        if "triton" in sys.modules or self._candidate_mentions("triton"):
            with contextlib.suppress(Exception):
                self._install_triton()

    def _candidate_mentions(self, word: str) -> bool:
        with contextlib.suppress(OSError), open(self.candidate_path, encoding="utf-8", errors="replace") as handle:
            return word in handle.read()
        return False

    def _wrap_builder(self, original: Callable[..., Any], builder: str) -> Callable[..., Any]:
        ledger = self

        def build(*args: Any, **kwargs: Any) -> Any:
            module = original(*args, **kwargs)
            sources = []
            for key in ("cuda_sources", "cpp_sources", "sources"):
                value = kwargs.get(key)
                sources.extend([value] if isinstance(value, str) else list(value or []))
            sources.extend(a for a in args[1:3] if isinstance(a, str))
            for source in sources:
                text = source
                if builder == "load" and os.path.isfile(str(source)):
                    with contextlib.suppress(OSError), open(source, encoding="utf-8", errors="replace") as handle:
                        text = handle.read()
                ledger.names.update(_GLOBAL.findall(str(text)))
            if kwargs.get("is_python_module", True) is False:
                return module
            for name in dir(module):
                value = getattr(module, name, None)
                if name.startswith("_") or not callable(value) or isinstance(value, type):
                    continue
                with contextlib.suppress(Exception):
                    setattr(module, name, ledger.counted(value, name))
            return module

        build.__wrapped__ = original
        return build

    def _install_triton(self) -> None:
        import triton.runtime.jit as jit  # noqa: PLC0415 - only for a candidate that uses Triton

        original = jit.JITFunction.run
        ledger = self

        def run(function: Any, *args: Any, **kwargs: Any) -> Any:
            code = getattr(getattr(function, "fn", None), "__code__", None)
            if kwargs.get("warmup") or code is None or code.co_filename != ledger.candidate_path:
                return original(function, *args, **kwargs)
            name = function.fn.__name__
            ledger.names.add(name)
            return ledger.call(name, lambda *a, **k: original(function, *a, **k), args, kwargs)

        run.__wrapped__ = original
        jit.JITFunction.run = run
        self.wrappers.append(run)

    # -- calling

    def counted(self, function: Callable[..., Any], name: str) -> Callable[..., Any]:
        ledger = self

        def kernel(*args: Any, **kwargs: Any) -> Any:
            return ledger.call(name, function, args, kwargs)

        kernel.__name__ = name
        kernel.__wrapped__ = function
        self.wrappers.append(kernel)
        return kernel

    def call(self, name: str, function: Callable[..., Any], args: Sequence[Any], kwargs: Dict[str, Any]) -> Any:
        """One call of the candidate's kernel ``name``, counted when it returns (a call that raises, as a
        try/except fallback's does, ran nothing)."""
        if self.ablate:
            result = self._ablated(function, args, kwargs)
        elif self.profiling:
            started = self.perf_counter()
            with self.torch.autograd.profiler.record_function(CANDIDATE_RANGE + name):
                result = function(*args, **kwargs)
            self.seconds[name] += self.perf_counter() - started
        else:
            result = function(*args, **kwargs)
        self.calls[name] += 1
        return result

    def _ablated(self, function: Callable[..., Any], args: Sequence[Any], kwargs: Dict[str, Any]) -> Any:
        """The call made, then everything it wrote (its results, the arguments it changed) overwritten with noise:
        what the program computes if this kernel did nothing useful."""
        torch = self.torch
        tensors = [a for a in list(args) + list(kwargs.values()) if isinstance(a, torch.Tensor)]
        before = [t.detach().clone() for t in tensors]
        result = function(*args, **kwargs)
        for tensor, old in zip(tensors, before):
            if tensor.numel() and not _same_bytes(torch, tensor, old):
                self.noise(tensor)
        for item in (result if isinstance(result, (tuple, list)) else [result]):
            if isinstance(item, torch.Tensor) and item.numel():
                self.noise(item)
        return result

    def noise(self, tensor: Any) -> None:
        torch = self.torch
        with torch.no_grad():
            if tensor.dtype.is_floating_point or tensor.dtype.is_complex:
                values = torch.randn(tensor.shape, generator=self.generator) * 3.0 + 0.5
            elif tensor.dtype == torch.bool:
                values = torch.randint(0, 2, tensor.shape, generator=self.generator).bool()
            else:
                values = torch.randint(0, 7, tensor.shape, generator=self.generator)
            tensor.copy_(values.to(device=tensor.device, dtype=tensor.dtype))

    def total_calls(self) -> int:
        return int(sum(self.calls.values()))


def _same_bytes(torch: Any, a: Any, b: Any) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool(torch.equal(a.detach().reshape(-1).contiguous().view(torch.uint8),
                            b.detach().reshape(-1).contiguous().view(torch.uint8)))


def same_outputs(torch: Any, first: Sequence[Any], second: Sequence[Any]) -> bool:
    """Whether two lists of results hold the same bytes (NaNs equal to themselves)."""
    if len(first) != len(second):
        return False
    for a, b in zip(first, second):
        if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
            if not _same_bytes(torch, a.to("cpu"), b.to("cpu")):
                return False
        elif a != b:
            return False
    return True


# ---------------------------------------------------------------------------------------------------------
# What ran


def drain_seconds(torch: Any, device: Any) -> float:
    """After the current stream's work is done, how long a device-wide synchronisation still waits: work left
    on other streams (0 on the CPU)."""
    if device.type != "cuda":
        return 0.0
    event = torch.cuda.Event()
    event.record()
    event.synchronize()
    started = time.perf_counter()
    torch.cuda.synchronize(device)
    return time.perf_counter() - started


def _word_in(name: str, words: set) -> bool:
    tokens = set(re.findall(r"[A-Za-z_]\w*", name))
    return bool(tokens & words)


def profile_forward(torch: Any, device: Any, forward: Callable[[], Any], ledger: KernelLedger) -> Tuple[Any, Dict[str, Any], List[str]]:
    """Runs ``forward`` once under torch.profiler. Returns (its result, the host-code report, flags).

    The report: ``kernels`` (each ``name``, ``origin`` "candidate" or "library", ``launches``,
    ``device_seconds``) and ``custom_share`` (the candidate's share of their device time). On a GPU the kernels
    are the profiler's CUDA kernels, the candidate's being those named after a ``__global__`` function of its
    ``load_inline`` sources or one of its Triton kernels. On the CPU, where an extension's functions are no
    dispatcher operations, the candidate's kernels are its extension functions (timed by the ranges the ledger
    opens around each call) and the library's are the outermost ATen operations outside them."""
    from torch.autograd import DeviceType  # noqa: PLC0415
    from torch.profiler import ProfilerActivity, profile  # noqa: PLC0415

    activities = [ProfilerActivity.CPU]
    cuda = device.type == "cuda"
    if cuda:
        activities.append(ProfilerActivity.CUDA)
    ledger.calls.clear()
    ledger.seconds.clear()
    ledger.profiling = True
    try:
        with warnings.catch_warnings(), profile(activities=activities) as prof:
            warnings.simplefilter("ignore")
            result = forward()
            if cuda:
                torch.cuda.synchronize(device)
    finally:
        ledger.profiling = False
    flags: List[str] = []
    entries: Dict[Tuple[str, str], List[float]] = {}

    def add(name: str, origin: str, seconds: float) -> None:
        entry = entries.setdefault((name, origin), [0, 0.0])
        entry[0] += 1
        entry[1] += seconds

    events = list(prof.events())
    if cuda:
        for event in events:
            if "GraphLaunch" in event.name:
                flags.append("cuda_graph")
            if event.device_type != DeviceType.CUDA:
                continue
            origin = "candidate" if _word_in(event.name, ledger.names) else "library"
            add(event.name, origin, event.time_range.elapsed_us() * 1e-6)
        with contextlib.suppress(Exception):
            streams = {e.device_resource_id() for e in prof.profiler.kineto_results.events()
                       if e.device_type() == DeviceType.CUDA}
            if len(streams) > 1:
                flags.append("other_stream")
    else:
        for event in events:
            if event.name.startswith(CANDIDATE_RANGE):
                add(event.name[len(CANDIDATE_RANGE):], "candidate", event.cpu_time_total * 1e-6)
                continue
            if not event.name.startswith("aten::"):
                continue
            parent, outermost = event.cpu_parent, True
            while parent is not None:
                if parent.name.startswith("aten::") or parent.name.startswith(CANDIDATE_RANGE):
                    outermost = False
                    break
                parent = parent.cpu_parent
            if outermost:
                add(event.name, "library", event.cpu_time_total * 1e-6)
    kernels = [{"name": name, "origin": origin, "launches": int(count), "device_seconds": float(seconds)}
               for (name, origin), (count, seconds) in entries.items()]
    kernels.sort(key=lambda k: (-k["device_seconds"], k["name"]))
    total = sum(k["device_seconds"] for k in kernels)
    own = sum(k["device_seconds"] for k in kernels if k["origin"] == "candidate")
    report = {"kernels": kernels, "custom_share": own / total if total > 0 else 0.0,
              "custom_calls": ledger.total_calls()}
    return result, report, sorted(set(flags))
