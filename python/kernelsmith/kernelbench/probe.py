"""The KernelBench probe: executes one problem file and says what task it is, in a helper process.

A KernelBench problem is a Python file with ``class Model(nn.Module)``, ``get_init_inputs()``,
``get_inputs()`` and module-level integer constants (the sizes). The importer
(:mod:`kernelsmith.kernelbench.importer`) never executes it in its own process: it runs this file as a
script with the configured interpreter (``$KERNELSMITH_PYTHON``, else its own), which serves any
number of problems, one JSON request per line on stdin and one JSON reply per line on stdout::

    {"id": 1, "path": "/kb/level1/19_ReLU.py"}
    {"id": 1, "ok": true, "facts": {...}}        or        {"id": 1, "ok": false, "reason": "..."}

A request may add ``"scale": 0.01`` and/or ``"sizes": {"batch_size": 64}``: the task's timing sizes are then
the problem's own scaled, or set (step 2b below), instead of the problem's own.

At start-up it writes ``{"ready": true, "torch": "2.11.0", "device": "cpu"}`` (or ``{"ready": false,
"reason": ...}`` when torch cannot be imported). ``python probe.py PATH`` probes one file and prints its
facts, for people.

What the probe does with a problem (docs/kernelbench.md says why each step is there):

1. Finds the module-level integer constants (``N = 2048 * 2``: literals and arithmetic only) and runs
   the problem on PyTorch's meta device (shapes, no memory) under ``torch.manual_seed(42)``, recording
   which random or constant initialiser made each input and parameter (:class:`InitTracer`).
2. Perturbs each constant on the meta device and watches which tensor dimensions follow it: a constant
   that sets a dimension of a forward input or of an output is a plain size, shrunk in the check
   configurations; one that only sets a parameter's dimension is a fixed size; one that bounds an
   integer input's range (``torch.randint(0, num_classes, ...)``) stays fixed; the rest are structural.
2b. With a scale or sizes in the request, sets the timing sizes to them (:meth:`Analysis.resize`): every
   size (plain or fixed) times the scale, then the sizes given; verified on the meta device.
3. Chooses the check configurations ``small`` and ``odd`` (plain sizes shrunk, each tensor at most
   :data:`CHECK_TENSOR_BYTES`), verified on the meta device, then for real.
4. Runs the module for real at those sizes (CPU, or the GPU with ``--device cuda``): the output must be
   deterministic (two forward passes identical), finite and not near-constant, on the problem's own
   inputs and on inputs drawn from the distributions it writes.
5. Counts the FLOPs at the problem's own sizes on the meta device.

Only the standard library and torch are imported, so that the helper needs nothing of kernelsmith.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import json
import math
import os
import resource
import sys
import time
import traceback
import warnings
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple


def _load_triviality():
    """The trivial-program check (triviality.py, beside this file). Run as a script by the helper's
    interpreter, which need not have kernelsmith, this file loads it by its path, whatever sys.path holds."""
    if __package__:
        from kernelsmith.kernelbench import triviality as module
        return module
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "triviality.py")
    spec = importlib.util.spec_from_file_location("kernelsmith_kernelbench_triviality", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


triviality = _load_triviality()

#: KernelBench seeds with 42 before building the model (its set_seed(42)).
SEED = 42
#: A check configuration keeps every tensor at most this large, so checking stays fast on a CPU device.
CHECK_TENSOR_BYTES = 4 << 20
#: Inputs or parameters at the problem's own sizes are materialised (to learn their distributions) only
#: when they total at most this much; larger problems are seen on the meta device alone.
MATERIALISE_BYTES = 64 << 20
#: Statistics (distributions, spreads) read at most this many elements of a tensor, evenly strided.
SAMPLE_ELEMENTS = 1 << 22
#: Structures are looked for in tensors of at most this many elements (the check sizes').
STRUCTURE_ELEMENTS = 1 << 24
#: The timing configuration is also run for real when it is this small (bytes of every tensor, FLOPs).
REAL_TIMING_BYTES = 16 << 20
REAL_TIMING_FLOPS = 2 * 10**8
#: The problem at its own sizes but a batch of at most ROWS_BATCH is run for real (to measure an output's
#: spread where the evaluator does) when its tensors total at most ROWS_BYTES and it takes at most ROWS_FLOPS
#: (on a CPU; on a GPU, when it takes at most an eighth of the GPU's memory).
ROWS_BATCH = 32
ROWS_BYTES = 768 << 20
ROWS_FLOPS = 4 * 10**10
#: Per-dtype default absolute tolerances of the evaluator (docs/task-format.md); rtol equals atol for each.
DEFAULT_ATOL = triviality.DEFAULT_ATOL
#: The evaluator refuses an integer reference output whose relative spread is below this
#: (near_constant_spread in lib/evaluate/host_tensors.cpp).
NEAR_CONSTANT_INTEGER_SPREAD = triviality.NEAR_CONSTANT_SPREAD


def near_constant_spread(dtype: str) -> float:
    """The relative spread below which the evaluator refuses a reference output of `dtype` under the default
    tolerance: atol + rtol for floats (an output fixed at the mean then fails the relative L2 bound)."""
    return 2 * DEFAULT_ATOL[dtype] if dtype in DEFAULT_ATOL else NEAR_CONSTANT_INTEGER_SPREAD
#: A parameter initialised to the constant c is drawn from normal(c, CONSTANT_PARAMETER_STD * max(1, |c|)).
CONSTANT_PARAMETER_STD = 0.1

#: Target values of plain sizes in the check configurations, one list per configuration; the i-th plain
#: size takes the i-th entry (cycling), so sizes equal at the timing sizes differ here and a kernel that
#: swaps two of them fails.
SMALL_TARGETS = (16, 8, 12, 24, 6, 20, 10, 14)
ODD_TARGETS = (37, 19, 23, 41, 29, 13, 31, 17)
MIN_CHECK_VALUE = {"small": 2, "odd": 3}
#: A size resized with --scale stays a multiple of the largest power of two, up to this, that divided the
#: problem's own value, so that vector widths and tiles that divided it still divide it.
RESIZE_ALIGNMENT = 16

#: torch dtype name -> the task format's dtype; "bool" becomes uint8 with a cast (contract 1b).
TASK_DTYPES = {
    "float16": "float16", "bfloat16": "bfloat16", "float32": "float32", "float64": "float64",
    "int8": "int8", "uint8": "uint8", "int32": "int32", "int64": "int64", "bool": "uint8",
}
DTYPE_BYTES = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "int8": 1, "uint8": 1, "int32": 4,
               "int64": 8}


class Refusal(Exception):
    """The problem cannot become a task: the message says why, in one line a user understands."""


class SmallRealFailed(Exception):
    """A build on the meta device failed, and failed again with its small tensors real (Run)."""


class OtherTensors(Exception):
    """A configuration at which the module has other tensors than at the problem's own sizes: not usable as a
    check configuration (the task has one set of tensors), so it is replaced or dropped like one that fails."""


#: Modules whose pip package has another name (the rest are installed by their own name).
PIP_NAMES = {"sklearn": "scikit-learn", "cv2": "opencv-python", "PIL": "Pillow", "yaml": "PyYAML",
             "skimage": "scikit-image", "mamba_ssm": "mamba-ssm", "causal_conv1d": "causal-conv1d"}
#: Modules of KernelBench's own requirements that kernelsmith's torch extra installs beside torch.
TORCH_EXTRA_MODULES = {"einops"}


def missing_module_refusal(error: BaseException) -> None:
    """Raises the refusal for a problem that imports a module the helper's interpreter lacks (`error` is a
    ModuleNotFoundError, or was raised from one): it names the module, the interpreter and how to install it.
    Returns for any other error."""
    while error is not None and not isinstance(error, ModuleNotFoundError):
        error = error.__cause__ or error.__context__
    if error is None or not getattr(error, "name", None):
        return
    module = error.name.split(".")[0]
    package = PIP_NAMES.get(module, module)
    extra = (f" (or `pip install 'kernelsmith[torch]'`, which installs torch and {module}, as KernelBench's "
             f"requirements do)") if module in TORCH_EXTRA_MODULES else ""
    raise Refusal(f"the problem imports the module {module!r}, which the probe's interpreter ({sys.executable}) "
                  f"does not have: install it there with `{sys.executable} -m pip install {package}`{extra}, or "
                  f"name an interpreter that has it with --python or $KERNELSMITH_PYTHON") from None


def one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}".rstrip(": ")


# ---------------------------------------------------------------------------------------------------------
# The problem's source: constants and their rewrite
# ---------------------------------------------------------------------------------------------------------

def _is_literal_arithmetic(node: ast.AST) -> bool:
    """An expression of number literals and arithmetic only (``2048 * 2``, ``8192 * 2 - 1``)."""
    allowed = (ast.Expression, ast.Constant, ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop)
    return all(isinstance(n, allowed) for n in ast.walk(node))


def _literal_int(node: ast.AST) -> Optional[int]:
    if not _is_literal_arithmetic(node):
        return None
    try:
        number = eval(compile(ast.Expression(node), "<constant>", "eval"), {"__builtins__": {}})
    except Exception:  # 1 / 0 and the like: not a constant we can use
        return None
    return number if isinstance(number, int) and not isinstance(number, bool) else None


def _assignments(tree: ast.Module):
    """Each module-level statement that binds names, with the integer each name gets (None: not an integer
    literal, or not only literals): ``N = 4096``, ``N: int = 2048 * 2``, ``h, w = 128, 128``, ``h = w = 128``."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) > 1 and all(isinstance(t, ast.Name) for t in node.targets):
            number = _literal_int(node.value)  # height = width = 256
            yield node, [(t.id, number) for t in node.targets]
            continue
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            bound = [n.id for t in getattr(node, "targets", [getattr(node, "target", None)]) if t is not None
                     for n in ast.walk(t) if isinstance(n, ast.Name)]
            yield node, [(name, None) for name in bound]
            continue
        if isinstance(target, ast.Name):
            yield node, [(target.id, _literal_int(value))]
        elif (isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in target.elts)
              and isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts)):
            numbers = [_literal_int(e) for e in value.elts]
            if any(n is None for n in numbers):
                numbers = [None] * len(numbers)
            yield node, [(e.id, n) for e, n in zip(target.elts, numbers)]
        else:
            yield node, [(n.id, None) for n in ast.walk(target) if isinstance(n, ast.Name)]


def find_constants(tree: ast.Module) -> Dict[str, int]:
    """The module-level integer constants: names assigned once, an integer literal or arithmetic of literals
    (``N = 2048 * 2``, ``h, w = 128, 128``, ``h = w = 128``). A name computed from others (``dim2 = dim * 2``)
    is not one: it follows them when they change."""
    values: Dict[str, Optional[int]] = {}
    for _, pairs in _assignments(tree):
        for name, number in pairs:
            values[name] = number if name not in values else None  # assigned twice: ambiguous
    return {name: number for name, number in values.items() if number is not None}


def _splice(source: str, edits: List[Tuple[int, int, int, int, str]]) -> str:
    """`source` with each (line, column, end line, end column) span (ast positions) replaced by its text."""
    lines = source.splitlines(keepends=True)
    for first, first_col, last, last_col, text in sorted(edits, reverse=True):
        # ast's columns are UTF-8 byte offsets: cut bytes, then decode.
        head = lines[first - 1].encode()[:first_col].decode()
        tail = lines[last - 1].encode()[last_col:].decode()
        lines[first - 1:last] = [head + text + tail]
    return "".join(lines)


def normalise_constants(source: str) -> str:
    """The source with every constant's assignment written ``NAME = <integer>``: arithmetic evaluated
    (``N = 2048 * 2`` -> ``N = 4096``), a tuple or a chain split into one assignment per name on the same line
    (``h, w = 128, 128`` and ``h = w = 128`` -> ``h = 128; w = 128``). The oracle sets a constant by rewriting exactly that form
    (contract 1c), so the task's copy of the problem is normalised; nothing else changes, line numbers
    included."""
    tree = ast.parse(source)
    constants = find_constants(tree)
    edits = []
    for node, pairs in _assignments(tree):
        names = [name for name, _ in pairs]
        if not names or any(name not in constants for name in names):
            continue
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Constant)):
            continue  # already NAME = <integer>
        text = "; ".join(f"{name} = {constants[name]}" for name in names)
        edits.append((node.lineno, node.col_offset, node.end_lineno, node.end_col_offset, text))
    return _splice(source, edits)


def rewrite_constants(source: str, values: Dict[str, int]) -> str:
    """A normalised source (:func:`normalise_constants`) with each named constant's ``NAME = <integer>``
    given its new value; constants computed from the rewritten ones follow them."""
    if not values:
        return source
    edits = []
    for node in ast.parse(source).body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
        if isinstance(target, ast.Name) and target.id in values:
            value = node.value
            edits.append((value.lineno, value.col_offset, value.end_lineno, value.end_col_offset,
                          repr(int(values[target.id]))))
    return _splice(source, edits)


class Problem:
    """A problem file, read and parsed (a syntax error is a refusal), with its constants."""

    def __init__(self, path: str):
        self.path = path
        try:
            with open(path, encoding="utf-8") as f:
                self.source = f.read()
        except (OSError, UnicodeDecodeError) as error:
            raise Refusal(f"cannot read the problem file: {one_line(error)}") from None
        try:
            self.tree = ast.parse(self.source, filename=path)
        except SyntaxError as error:
            raise Refusal(f"syntax error at line {error.lineno}: {error.msg}") from None
        self.constants = find_constants(self.tree)
        #: Whether its meta builds make small tensors real (Run): it reads a value while it builds.
        self.small_real = False
        # Every run, like the oracle's, executes the normalised source.
        self.source = normalise_constants(self.source)
        self._compiled: Dict[Tuple[Tuple[str, int], ...], Any] = {}

    def namespace(self, values: Optional[Dict[str, int]] = None) -> Dict[str, Any]:
        """Executes the problem (its constants set to `values`) in a fresh namespace and returns it."""
        key = tuple(sorted((values or {}).items()))
        code = self._compiled.get(key)
        if code is None:
            code = compile(rewrite_constants(self.source, dict(values or {})), self.path, "exec")
            self._compiled[key] = code
        namespace: Dict[str, Any] = {"__name__": "kernelbench_problem", "__file__": self.path}
        exec(code, namespace)
        for name in ("Model", "get_inputs", "get_init_inputs"):
            if not callable(namespace.get(name)):
                raise Refusal(f"the file defines no {name}: a KernelBench problem has class Model(nn.Module), "
                              f"get_inputs() and get_init_inputs()")
        return namespace


# ---------------------------------------------------------------------------------------------------------
# Recording how tensors are made
# ---------------------------------------------------------------------------------------------------------

def _number(value) -> Optional[float]:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


class InitTracer:
    """Records which random or constant initialiser made each tensor while the problem builds its inputs and
    its model: torch.rand/randn/randint (and _like), ones/zeros/full, torch.tensor(number), and the in-place
    initialisers that nn.init and modules' reset_parameters use (uniform_, normal_, fill_, zero_).

    A tensor is matched by identity (meta and real tensors: in-place initialisers run on the parameter
    itself) or, on real devices, by its storage (nn.Parameter(torch.randn(...)) shares the randn tensor's
    storage). A tensor computed from a recorded one ((A + A.T) / 2, torch.tril(...)) is not matched: its
    distribution is inferred from its values instead. Also records every randint's bounds in call order,
    which tells whether a constant bounds an integer input."""

    def __init__(self):
        import torch

        self.torch = torch
        self.records: List[Tuple[Any, Dict[str, Any]]] = []  # keeps the tensors alive, so ids stay unique
        self.by_id: Dict[int, int] = {}
        self.by_storage: Dict[Tuple[int, str, Tuple[int, ...]], int] = {}
        self.randint_bounds: List[Tuple[int, int]] = []
        self._saved: List[Tuple[Any, str, Any]] = []

    def _record(self, tensor, distribution: Dict[str, Any]) -> None:
        if not isinstance(tensor, self.torch.Tensor):
            return
        index = len(self.records)
        self.records.append((tensor, distribution))
        self.by_id[id(tensor)] = index
        if tensor.device.type != "meta" and tensor.numel() > 0:
            self.by_storage[(tensor.data_ptr(), str(tensor.dtype), tuple(tensor.shape))] = index

    def lookup(self, tensor) -> Optional[Dict[str, Any]]:
        index = self.by_id.get(id(tensor))
        if index is not None and self.records[index][0] is tensor:
            return dict(self.records[index][1])
        if tensor.device.type != "meta" and tensor.numel() > 0:
            index = self.by_storage.get((tensor.data_ptr(), str(tensor.dtype), tuple(tensor.shape)))
            if index is not None:
                return dict(self.records[index][1])
        return None

    def _wrap(self, owner, name: str, describe: Callable[..., Optional[Dict[str, Any]]], in_place: bool = False):
        original = getattr(owner, name)

        def wrapper(*args, **kwargs):
            result = original(*args, **kwargs)
            try:
                distribution = describe(*args, **kwargs)
                if distribution is not None:
                    self._record(args[0] if in_place else result, distribution)
            except Exception:  # an argument form we do not read: no record, the values will tell
                pass
            return result

        self._saved.append((owner, name, original))
        setattr(owner, name, wrapper)

    def _randint(self, *args, **kwargs) -> Dict[str, Any]:
        # randint(high, size), randint(low, high, size), with low/high as keywords or not.
        numbers = [a for a in args if _number(a) is not None]
        low, high = (numbers[0], numbers[1]) if len(numbers) >= 2 else (0, numbers[0] if numbers else None)
        low = kwargs.get("low", low)
        high = kwargs.get("high", high)
        self.randint_bounds.append((int(low), int(high)))
        return {"kind": "integers", "a": int(low), "b": int(high) - 1}

    def _randint_like(self, tensor, *args, **kwargs) -> Dict[str, Any]:
        return self._randint(*args, **kwargs)

    def __enter__(self) -> "InitTracer":
        torch = self.torch
        # torch.device(...) as a context learns the factory functions it redirects on its first use and
        # keeps them: that first use must see torch's own functions, not these wrappers, or tensors made
        # inside the wrappers would land on the CPU at full size instead of the meta device.
        with torch.device("meta"):
            torch.empty(0)
        uniform = lambda *a, **k: {"kind": "uniform", "a": 0.0, "b": 1.0}  # noqa: E731
        normal = lambda *a, **k: {"kind": "normal", "a": 0.0, "b": 1.0}  # noqa: E731
        for name in ("rand", "rand_like"):
            self._wrap(torch, name, uniform)
        for name in ("randn", "randn_like"):
            self._wrap(torch, name, normal)
        self._wrap(torch, "randint", self._randint)
        self._wrap(torch, "randint_like", self._randint_like)
        for name, value in (("ones", 1.0), ("ones_like", 1.0), ("zeros", 0.0), ("zeros_like", 0.0)):
            self._wrap(torch, name, lambda *a, _v=value, **k: {"kind": "constant", "a": _v})
        self._wrap(torch, "full", lambda size, fill_value, *a, **k: (
            {"kind": "constant", "a": float(fill_value)} if _number(fill_value) is not None else None))
        self._wrap(torch, "full_like", lambda t, fill_value, *a, **k: (
            {"kind": "constant", "a": float(fill_value)} if _number(fill_value) is not None else None))
        self._wrap(torch, "tensor", lambda data, *a, **k: (
            {"kind": "constant", "a": float(data)} if _number(data) is not None else None))
        tensor = torch.Tensor
        self._wrap(tensor, "uniform_", lambda t, a=0.0, b=1.0, *r, **k: (
            {"kind": "uniform", "a": float(k.get("from", a)), "b": float(k.get("to", b))}), in_place=True)
        self._wrap(tensor, "normal_", lambda t, mean=0.0, std=1.0, *r, **k: (
            {"kind": "normal", "a": float(mean), "b": float(std)}), in_place=True)
        self._wrap(tensor, "fill_", lambda t, value, *r, **k: (
            {"kind": "constant", "a": float(value)} if _number(value) is not None else None), in_place=True)
        self._wrap(tensor, "zero_", lambda t, *r, **k: {"kind": "constant", "a": 0.0}, in_place=True)
        return self

    def __exit__(self, *exc) -> None:
        for owner, name, original in reversed(self._saved):
            setattr(owner, name, original)
        self._saved.clear()


# ---------------------------------------------------------------------------------------------------------
# Running the problem
# ---------------------------------------------------------------------------------------------------------

def _small_real_mode():
    """A TorchFunctionMode for builds on the meta device that read a value: each tensor a factory function
    (torch.linspace, arange, zeros, tensor, rand, ...) makes without a device is made for real on the CPU when it
    has at most SMALL_REAL_ELEMENTS elements and the real ones stay within SMALL_REAL_BYTES, else on the meta
    device; an operation that meets a meta tensor moves its real arguments to the meta device. So a constructor
    that reads a small tensor's value (``[x.item() for x in torch.linspace(0, rate, depth)]``, a mask computed
    with arange and indexing) builds, while its large tensors stay without memory: shapes are what matter."""
    import torch
    from torch.overrides import TorchFunctionMode
    from torch.utils import _pytree
    from torch.utils._device import _device_constructors

    class SmallRealTensors(TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.real_bytes = 0

        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            if func in _device_constructors() and kwargs.get("device") is None:
                shape_only = func(*args, **{**kwargs, "device": "meta"})
                if isinstance(shape_only, torch.Tensor):
                    size = shape_only.numel() * shape_only.element_size()
                    if shape_only.numel() <= SMALL_REAL_ELEMENTS and self.real_bytes + size <= SMALL_REAL_BYTES:
                        self.real_bytes += size
                        return func(*args, **{**kwargs, "device": "cpu"})
                return shape_only
            leaves = _pytree.tree_leaves((args, kwargs))
            if any(isinstance(t, torch.Tensor) and t.is_meta for t in leaves) and any(
                    isinstance(t, torch.Tensor) and t.device.type == "cpu" for t in leaves):
                args, kwargs = _pytree.tree_map_only(
                    torch.Tensor, lambda t: t.to("meta") if t.device.type == "cpu" else t, (args, kwargs))
            return func(*args, **kwargs)

    return SmallRealTensors()


#: A build on the meta device that reads a value (:func:`_small_real_mode`) makes the tensors of at most this
#: many elements real, up to this many bytes in all.
SMALL_REAL_ELEMENTS = 1 << 16
SMALL_REAL_BYTES = 64 << 20


class Run:
    """One instantiation of the problem at some constants on one device: its forward arguments, its model
    (seeded, in training mode), its outputs (None when forward failed: `forward_error` says why).

    On the meta device, a problem whose get_inputs() or constructor reads a tensor's value (``.item()``,
    ``int(t)``, ``.tolist()``), which meta tensors do not have, is built again with its small tensors real
    (:func:`_small_real_mode`), and its forward runs the same way; ``small_real`` then says so. The problem
    remembers it, so later meta runs build that way at once."""

    def __init__(self, problem: Problem, values: Dict[str, int], device: str, forward: bool = True):
        import torch

        self.values = dict(values)
        self.device = device
        self.small_real = device == "meta" and problem.small_real
        namespace = problem.namespace(values)
        try:
            self._build(namespace)
        except Exception as error:
            if device != "meta" or self.small_real or isinstance(error, ModuleNotFoundError):
                raise
            self.small_real = True
            try:
                self._build(problem.namespace(values))
            except Exception as again:
                raise SmallRealFailed(f"{one_line(error)}; built again with its tensors of at most "
                                      f"{SMALL_REAL_ELEMENTS} elements real: {one_line(again)}") from None
            problem.small_real = True
        if not isinstance(self.model, torch.nn.Module):
            raise Refusal(f"Model(...) built a {type(self.model).__name__}, not a torch.nn.Module")
        self.model.train()  # KernelBench keeps the module in training mode
        if self.small_real:  # the forward arguments on the meta device, as the problem's own sizes would have them
            inputs = []
            for value in self.inputs:
                if isinstance(value, torch.Tensor) and not value.is_meta:
                    made = self.tracer.lookup(value)
                    value = value.to("meta")
                    if made is not None:
                        self.tracer._record(value, made)
                inputs.append(value)
            self.inputs = inputs
        self.outputs: Optional[List[Any]] = None  # of the first forward pass on the problem's own inputs
        self.forward_error: Optional[str] = None
        if forward:
            self.outputs = self.run_forward()

    def _build(self, namespace: Dict[str, Any]) -> None:
        import torch

        self.tracer = InitTracer()
        # KernelBench's order: seed, inputs, init inputs, seed again, the model.
        with torch.device(self.device), self.tracer, self._mode():
            torch.manual_seed(SEED)
            self.inputs = _as_list(namespace["get_inputs"](), "get_inputs()")
            self.init_inputs = _as_list(namespace["get_init_inputs"](), "get_init_inputs()")
            torch.manual_seed(SEED)
            self.model = namespace["Model"](*self.init_inputs)

    def _mode(self):
        import contextlib

        return _small_real_mode() if self.small_real else contextlib.nullcontext()

    def run_forward(self, inputs: Optional[Sequence[Any]] = None) -> List[Any]:
        """The flattened outputs of one forward pass (under torch.no_grad(), as KernelBench runs it) on
        `inputs`, else on the problem's own inputs."""
        import torch

        try:
            with torch.no_grad(), torch.device(self.device), self._mode():
                result = self.model(*(self.inputs if inputs is None else inputs))
        except ModuleNotFoundError as error:  # an import inside forward
            missing_module_refusal(error)
            raise
        outputs = flatten_outputs(result)
        if self.small_real:
            outputs = [t.to("meta") for t in outputs]
        return outputs

    def try_forward(self) -> bool:
        try:
            self.outputs = self.run_forward()
            return True
        except Refusal:
            raise
        except Exception as error:
            self.forward_error = one_line(error)
            return False

    def state(self) -> Dict[str, Any]:
        """The persistent state-dict entries (parameters and buffers), each tensor once, in order."""
        seen = set()
        entries = {}
        for key, tensor in self.model.state_dict(keep_vars=True).items():
            if id(tensor) in seen:
                continue
            seen.add(id(tensor))
            entries[key] = tensor
        return entries

    def parameter_keys(self) -> set:
        return {name for name, _ in self.model.named_parameters()}


def _as_list(value, what: str) -> List[Any]:
    if isinstance(value, (list, tuple)):
        return list(value)
    raise Refusal(f"{what} returned a {type(value).__name__}; KernelBench expects a list")


def flatten_outputs(result) -> List[Any]:
    import torch

    if isinstance(result, torch.Tensor):
        return [result]
    if isinstance(result, (list, tuple)):
        flat: List[Any] = []
        for item in result:
            flat.extend(flatten_outputs(item))
        return flat
    raise Refusal(f"forward returns a {type(result).__name__}, not a tensor: a task's outputs must be tensors "
                  f"(a tuple or list of tensors is flattened)")


def task_dtype(dtype, what: str) -> str:
    name = str(dtype).replace("torch.", "")
    if name not in TASK_DTYPES:
        raise Refusal(f"{what} has dtype {name}, which the task format lacks (it has float16, bfloat16, float32, "
                      f"float64, int8, uint8, int32, int64 and bool as uint8)")
    return TASK_DTYPES[name]


def _bytes(shape: Sequence[int], dtype: str) -> int:
    return math.prod(shape) * DTYPE_BYTES[dtype]


# ---------------------------------------------------------------------------------------------------------
# Inferring a distribution from values
# ---------------------------------------------------------------------------------------------------------

def _round_to(value: float, tolerance: float) -> float:
    """The roundest number within `tolerance` of `value` (an integer, then one or two decimals), else the
    value to 4 significant digits."""
    for digits in (0, 1, 2):
        rounded = round(value, digits)
        if abs(rounded - value) <= tolerance:
            return float(rounded) + 0.0  # + 0.0: no -0.0
    return float(f"{value:.4g}")


def sample_of(values, limit: int = SAMPLE_ELEMENTS):
    """At most `limit` elements of a tensor, evenly strided over it, flattened: statistics of a GiB-scale
    tensor without a float64 copy of it."""
    flat = values.detach().reshape(-1)
    if flat.numel() > limit:
        flat = flat[::flat.numel() // limit][:limit]
    return flat


def infer_distribution(values) -> Dict[str, Any]:
    """A distribution for a tensor's values: constant, integers (integer dtypes and integer-valued floats),
    uniform (bounded: low kurtosis) or normal, with round numbers where they fit the sample."""
    import torch

    flat = sample_of(values)
    if flat.dtype == torch.bool:
        flat = flat.to(torch.uint8)
    n = flat.numel()
    if n == 0:
        return {"kind": "constant", "a": 0.0}
    is_float = flat.is_floating_point()
    data = flat.to(torch.float64)
    low, high = float(data.min()), float(data.max())
    if low == high:
        return {"kind": "constant", "a": low}
    if not is_float or bool(torch.equal(data, data.round())):
        return {"kind": "integers", "a": int(low), "b": int(high)}
    mean = float(data.mean())
    std = float(data.std()) if n > 1 else 0.0
    centred = (data - mean) / std
    kurtosis = float((centred ** 4).mean()) - 3.0
    # A uniform sample has excess kurtosis -1.2, a normal one 0; bounded bell shapes (the mean of two
    # uniforms, -0.6) are drawn uniform over their range, which keeps their support and sign.
    if kurtosis < -0.8 or (n >= 200 and kurtosis < -0.45):
        width = (high - low) / max(n - 1, 1)  # the expected gap between the sample's extremes and the bounds
        tolerance = max(0.02 * (high - low), 2 * width)
        a = _round_to(low - width, tolerance)
        b = _round_to(high + width, tolerance)
        if b <= a:
            b = a + (high - low)
        return {"kind": "uniform", "a": a, "b": b}
    a = _round_to(mean, 4 * std / math.sqrt(n))
    b = _round_to(std, 0.05 * std)
    return {"kind": "normal", "a": a, "b": b if b > 0 else std}


def consistent(distribution: Dict[str, Any], values) -> bool:
    """Whether `values` could come from `distribution` (a recorded initialiser later changed in place, such
    as weight.data *= 0.5, fails this)."""
    import torch

    data = sample_of(values).to(torch.float64)
    if data.numel() == 0:
        return True
    kind, a = distribution["kind"], distribution["a"]
    if kind == "constant":
        return bool((data == a).all())
    b = distribution["b"]
    if kind in ("uniform", "integers"):
        upper_ok = data.max() <= b if kind == "integers" else data.max() < b + 1e-12 * max(1.0, abs(b))
        return bool(data.min() >= a) and bool(upper_ok)
    if data.numel() < 8:
        return True
    mean, std = float(data.mean()), float(data.std())
    return abs(mean - a) <= 6 * b / math.sqrt(data.numel()) + 1e-12 and 0.5 * b <= std <= 2 * b


def detect_structure(values) -> str:
    """symmetric / lower_triangular / upper_triangular (last two dims, square) or probability_rows (the last
    dim: positive, each row summing to 1), from a tensor's values; "none" otherwise."""
    import torch

    if values.dim() >= 2 and values.shape[-1] == values.shape[-2] and values.shape[-1] >= 2:
        transposed = values.transpose(-1, -2)
        if bool(torch.any(values != 0)):
            if torch.equal(values, transposed):
                return "symmetric"
            upper = torch.triu(values, diagonal=1)
            lower = torch.tril(values, diagonal=-1)
            if not bool(torch.any(upper != 0)) and bool(torch.any(lower != 0)):
                return "lower_triangular"
            if not bool(torch.any(lower != 0)) and bool(torch.any(upper != 0)):
                return "upper_triangular"
    if values.is_floating_point() and values.dim() >= 1 and values.shape[-1] >= 2 and values.numel() > 0:
        data = values.to(torch.float64)
        if bool((data > 0).all()) and bool(torch.allclose(data.sum(-1), torch.ones((), dtype=data.dtype), atol=1e-4, rtol=0)):
            return "probability_rows"
    return "none"


def structured_values(values, structure: str):
    """The values the distribution describes once the structure is taken off: a triangle, or the centred
    logits of probability rows (softmax does not see a per-row shift)."""
    import torch

    if structure in ("symmetric", "lower_triangular"):
        mask = torch.ones(values.shape[-2:], dtype=torch.bool, device=values.device).tril()
        return values[..., mask]
    if structure == "upper_triangular":
        mask = torch.ones(values.shape[-2:], dtype=torch.bool, device=values.device).triu()
        return values[..., mask]
    if structure == "probability_rows":
        logits = values.to(torch.float64).log()
        centred = logits - logits.mean(-1, keepdim=True)
        return centred - centred.min()
    return values


#: The evaluator's adversarial input kinds (docs/evaluation.md, "Correctness", step 1): float inputs scaled
#: by (large, tiny, the largest power of ten of mixed_scale), per dtype (float_scales in
#: lib/evaluate/host_tensors.cpp); `constant` is one drawn value everywhere.
ADVERSARIAL_KINDS = ("large", "tiny", "mixed_scale", "constant")
FLOAT_SCALES = {"float16": (1e2, 1e-3, 2)}
DEFAULT_FLOAT_SCALES = (1e4, 1e-4, 3)


def draw(spec: Dict[str, Any], shape: Sequence[int], dtype, device: str, generator, input_kind: str = "random"):
    """Values for a task tensor as the evaluator draws them for its cases of `input_kind`: the distribution,
    scaled for an adversarial kind (float inputs whose distribution is not constant; integer inputs keep their
    random values here, where the evaluator draws near their bounds), then the structure."""
    import torch

    distribution = spec["distribution"]
    kind, a, b = distribution["kind"], distribution["a"], distribution.get("b", 0.0)
    # float64 where it matters (float64 tensors, integers past 2^24), else float32: a GPU's problem-size draw
    # must not take twice the memory of the tensor.
    work = torch.float64 if dtype == torch.float64 or not dtype.is_floating_point else torch.float32
    if kind == "constant":
        values = torch.full(tuple(shape), a, dtype=work, device=device)
    elif kind == "integers":
        values = torch.randint(int(a), int(b) + 1, tuple(shape), generator=generator, device=device).to(work)
    elif kind == "uniform":
        values = torch.rand(tuple(shape), generator=generator, dtype=work, device=device) * (b - a) + a
    else:
        values = torch.randn(tuple(shape), generator=generator, dtype=work, device=device) * b + a
    if input_kind != "random" and dtype.is_floating_point and kind != "constant":
        large, tiny, exponent = FLOAT_SCALES.get(str(dtype).replace("torch.", ""), DEFAULT_FLOAT_SCALES)
        if input_kind == "large":
            values = values * large
        elif input_kind == "tiny":
            values = values * tiny
        elif input_kind == "mixed_scale":
            powers = torch.randint(-exponent, exponent + 1, tuple(shape), generator=generator, device=device)
            values = values * torch.pow(10.0, powers.to(work))
        elif input_kind == "constant":
            values = torch.full_like(values, float(values.reshape(-1)[0]) if values.numel() else a)
    structure = distribution.get("structure", "none")
    if structure == "symmetric":
        lower = values.tril()
        values = lower + lower.tril(-1).transpose(-1, -2)
    elif structure == "lower_triangular":
        values = values.tril()
    elif structure == "upper_triangular":
        values = values.triu()
    elif structure == "probability_rows":
        values = values.softmax(-1)
    return values.to(dtype)


def relative_spread(tensors: Sequence[Any]) -> float:
    """The evaluator's relative spread (lib/evaluate/host_tensors.cpp): the standard deviation of every
    finite element of every trial over their mean absolute value."""
    import torch

    data = torch.cat([sample_of(t).to(torch.float64).cpu() for t in tensors])
    data = data[torch.isfinite(data)]
    if data.numel() < 2 or float(data.abs().sum()) == 0.0:
        return 0.0
    return float(data.std()) / float(data.abs().mean())


# ---------------------------------------------------------------------------------------------------------
# The analysis
# ---------------------------------------------------------------------------------------------------------

class Analysis:
    """Everything the probe learns about one problem; `facts()` is the reply."""

    def __init__(self, path: str, device: str):
        import torch

        self.torch = torch
        self.device = device
        self.problem = Problem(path)
        self.notes: List[str] = []
        self.constants = self.problem.constants
        self.timing_values = dict(self.constants)

    # -- step 1: the problem at its own sizes, on the meta device
    def instantiate_meta(self) -> None:
        try:
            self.problem.namespace()
        except Refusal:
            raise
        except BaseException as error:  # SystemExit from the file included: it is the file's failure
            missing_module_refusal(error)
            raise Refusal(f"the problem file fails when executed: {one_line(error)}") from None
        try:
            self.meta = Run(self.problem, self.timing_values, "meta", forward=False)
        except Refusal:
            raise
        except SmallRealFailed as error:
            # get_inputs() or Model() reads the value of a large tensor: without shapes the importer cannot tell
            # how much a real build would allocate, so it refuses rather than risk the problem's full sizes.
            raise Refusal(f"building the inputs or the model on the meta device failed ({error}); the importer "
                          f"needs shapes without allocating the problem's tensors") from None
        except Exception as error:
            missing_module_refusal(error)
            raise Refusal(f"building the inputs or the model on the meta device failed ({one_line(error)}); the "
                          f"importer needs shapes without allocating the problem's tensors") from None
        if self.problem.small_real:
            self.notes.append(f"building on the meta device reads a tensor's value (.item() or the like): meta "
                              f"builds make the tensors of at most {SMALL_REAL_ELEMENTS} elements real on the CPU")
        self.meta_forward = self.meta.try_forward()
        if not self.meta_forward:
            self.notes.append(f"forward fails on the meta device ({self.meta.forward_error}); output shapes come "
                              f"from real runs at small sizes")
        self.classify_forward_arguments()

    def classify_forward_arguments(self) -> None:
        torch = self.torch
        signature = inspect.signature(self.meta.model.forward)
        names: List[str] = []
        varargs = None
        for parameter in signature.parameters.values():
            if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
                names.append(parameter.name)
            elif parameter.kind == parameter.VAR_POSITIONAL:
                varargs = parameter.name
        if len(self.meta.inputs) > len(names):
            if varargs is None:
                raise Refusal(f"get_inputs() returns {len(self.meta.inputs)} values but forward takes "
                              f"{len(names)} arguments")
            names += [f"{varargs}{i}" for i in range(len(self.meta.inputs) - len(names))]
        self.forward_names = names[:len(self.meta.inputs)]
        self.forward_kinds: List[str] = []
        for name, value in zip(self.forward_names, self.meta.inputs):
            if isinstance(value, torch.Tensor):
                task_dtype(value.dtype, f"the forward argument {name}")
                self.forward_kinds.append("tensor")
            elif isinstance(value, bool):
                raise Refusal(f"the forward argument {name} is a Python bool; the task format has no "
                              f"boolean scalar (a tensor of bools would do)")
            elif isinstance(value, int):
                self.forward_kinds.append("python_int")
            elif isinstance(value, float):
                self.forward_kinds.append("python_float")
            else:
                raise Refusal(f"the forward argument {name} is a {type(value).__name__}: only tensors and Python "
                              f"numbers can become task tensors")

    # -- shapes of a run, keyed by tensor: ("forward", i), ("state", key), ("output", i)
    def shapes(self, run: Run) -> Dict[Tuple[str, Any], Tuple[int, ...]]:
        torch = self.torch
        shapes: Dict[Tuple[str, Any], Tuple[int, ...]] = {}
        for i, value in enumerate(run.inputs):
            if isinstance(value, torch.Tensor):
                shapes[("forward", i)] = tuple(value.shape)
        for key, tensor in run.state().items():
            shapes[("state", key)] = tuple(tensor.shape)
        for i, value in enumerate(run.outputs or []):
            shapes[("output", i)] = tuple(value.shape)
        return shapes

    def meta_run(self, values: Dict[str, int], same_tensors: bool = True) -> Optional[Run]:
        """The problem on the meta device at `values`, or None when it fails there or, with `same_tensors`, when
        it has other tensors there than at the problem's own sizes (:meth:`tensor_difference`)."""
        try:
            run = Run(self.problem, values, "meta", forward=False)
            if self.meta_forward:
                run.outputs = run.run_forward()
        except Exception:
            return None
        if same_tensors and self.tensor_difference(run) is not None:
            return None
        return run

    def tensor_difference(self, run: Run) -> Optional[str]:
        """How `run`'s tensors differ from those at the problem's own sizes (self.meta), or None when they are
        the same: the same forward arguments, the same state-dict entries and outputs, each of the same rank.
        A module may build other submodules at other sizes (a ShuffleNet unit's shortcut is an empty
        Sequential when its input and output channels are equal, a 1x1 convolution and a BatchNorm
        otherwise): a task has one set of tensors, the oracle's parameter map names them, and every
        configuration must have all of them."""
        base, shapes = self.shapes(self.meta), self.shapes(run)
        if self.meta.outputs is None or run.outputs is None:  # output shapes known only from real runs
            base = {k: v for k, v in base.items() if k[0] != "output"}
            shapes = {k: v for k, v in shapes.items() if k[0] != "output"}
            if self.meta.outputs is None and run.outputs is not None and getattr(self, "real", None):
                known = next(iter(self.real.values())).outputs or []
                if len(known) != len(run.outputs):
                    return f"{len(run.outputs)} outputs instead of {len(known)}"
        missing = [_key_text(k) for k in base if k not in shapes]
        extra = [_key_text(k) for k in shapes if k not in base]
        rank = [_key_text(k) for k in base if k in shapes and len(shapes[k]) != len(base[k])]
        parts = ([f"without {', '.join(missing[:4])}{' ...' if len(missing) > 4 else ''}"] if missing else []) + \
                ([f"with {', '.join(extra[:4])}{' ...' if len(extra) > 4 else ''} in addition"] if extra else []) + \
                ([f"{', '.join(rank[:4])} of another rank"] if rank else [])
        return "; ".join(parts) or None

    # -- step 2: which constants are sizes
    def perturb_constants(self) -> None:
        base = self.shapes(self.meta)
        base_bounds = self.meta.tracer.randint_bounds
        self.follows: Dict[str, set] = {}  # constant -> tensor dims that equal it and follow it
        self.changes: Dict[str, set] = {}  # constant -> tensors whose shape it changes
        self.kind: Dict[str, str] = {}
        self.why: Dict[str, str] = {}
        forward_or_output = {"forward", "output"}
        for name, value in self.constants.items():
            run, other_tensors = None, False
            for new in (value + 1, value * 2, value + 2, value - 1, value + 3):
                if new == value or new < 0:
                    continue
                # A value at which the module has other tensors (a shortcut that exists only when two channel
                # counts differ, and 2x one of them equals the other) says nothing of this constant: the next
                # value is tried.
                run = self.meta_run({**self.timing_values, name: new}, same_tensors=False)
                if run is not None and self.tensor_difference(run) is not None:
                    run, other_tensors = None, True
                if run is not None:
                    break
            if run is None:
                self.kind[name], self.why[name] = "structural", (
                    "it changes which tensors there are or their ranks" if other_tensors
                    else "the problem fails when it changes")
                continue
            shapes = self.shapes(run)
            followed = {(k, axis) for k in base for axis, (old, now) in enumerate(zip(base[k], shapes[k]))
                        if old == value and now == new}
            self.follows[name] = followed
            self.changes[name] = {k for k in base if shapes[k] != base[k]}
            if run.tracer.randint_bounds != base_bounds:
                self.kind[name] = "fixed" if followed else "structural"
                self.why[name] = "it bounds the values of an integer input"
            elif any(k[0] in forward_or_output for k, _ in followed):
                self.kind[name], self.why[name] = "plain", "it sets an input's or an output's dimension"
            elif followed:
                self.kind[name], self.why[name] = "fixed", "it sets a parameter's dimension only"
            else:
                changed = any(shapes[k] != base[k] for k in base)
                self.kind[name] = "structural"
                self.why[name] = "it changes shapes without being a dimension" if changed else "no shape follows it"
        self.plain = [name for name in self.constants if self.kind[name] == "plain"]

    # -- step 2b: the timing sizes the user asked for (--scale, --size)
    def resize(self, scale: Optional[float], overrides: Dict[str, int]) -> None:
        """Replaces the timing sizes by the problem's own times `scale` (:func:`scaled_size`) and/or the values of
        `overrides`; the check configurations are then chosen below these. Only sizes (constants that set a
        tensor dimension: plain or fixed) change. `self.resized` says what changed and the bytes of all
        tensors before and after."""
        self.resized: Dict[str, Any] = {}
        if scale is None and not overrides:
            return
        sizes = [name for name in self.constants if self.kind[name] in ("plain", "fixed")]
        for name, value in overrides.items():
            if name not in sizes:
                what = (f"a constant of the problem that is not a size ({self.why[name]})" if name in self.constants
                        else "not a constant of the problem")
                raise Refusal(f"--size {name}={value}: {name} is {what}; its sizes are "
                              f"{', '.join(sizes) or '(none)'}")
            if not (isinstance(value, int) and value > 0):
                raise Refusal(f"--size {name}={value}: give a positive integer")
        values = dict(self.timing_values)
        if scale is not None:
            values.update({name: scaled_size(values[name], scale) for name in sizes})
        values.update(overrides)
        changed = {name: {"from": self.timing_values[name], "to": values[name]}
                   for name in sizes if values[name] != self.timing_values[name]}
        before = self._total_bytes(self.meta)
        run = self.meta_run(values, same_tensors=False)
        text = _sizes_text(values, list(changed)) if changed else _sizes_text(values, sizes)
        retry = "choose another --scale, or set the sizes that must agree with --size NAME=VALUE"
        if run is None:
            raise Refusal(f"the module fails on the meta device at the resized sizes {text}; {retry}")
        difference = self.tensor_difference(run)
        if difference is not None:
            raise Refusal(f"at the resized sizes {text} the module has other tensors than at its own ({difference}); "
                          f"{retry}")
        self.meta, self.timing_values = run, values
        self.resized = {"scale": scale, "sizes": changed, "bytes": {"from": before, "to": self._total_bytes(run)}}

    def _total_bytes(self, run: Run) -> int:
        return sum(_bytes(shape, self._dtype_of(run, key)) for key, shape in self.shapes(run).items())

    # -- step 3: the check configurations
    def _candidates(self, kind: str, index: int, value: int) -> List[int]:
        targets = SMALL_TARGETS if kind == "small" else ODD_TARGETS
        target = targets[index % len(targets)]
        if value <= target:
            first = value if kind == "small" or value % 2 == 1 or value < 2 else value - 1
            return list(dict.fromkeys([first, value]))
        values = [target]
        step = target
        while step * 2 < value:  # larger values of the same kind, for sizes that need room (pooling, dilation)
            step *= 2
            values.append(step + 1 if kind == "odd" else step)
        power = 16
        while power < value:  # then powers of two, for sizes that must divide by a group count
            values.append(power)
            power *= 2
        values.append(value)
        return list(dict.fromkeys(v for v in values if 0 < v <= value))

    def _largest_over_budget(self, run: Run) -> Optional[Tuple[str, Any]]:
        largest, key = CHECK_TENSOR_BYTES, None
        for k, shape in self.shapes(run).items():
            size = _bytes(shape, self._dtype_of(run, k))
            if size > largest:
                largest, key = size, k
        return key

    def _dtype_of(self, run: Run, key) -> str:
        tensor = run.inputs[key[1]] if key[0] == "forward" else (
            run.state()[key[1]] if key[0] == "state" else run.outputs[key[1]])
        return TASK_DTYPES.get(str(tensor.dtype).replace("torch.", ""), "float64")

    def choose_config(self, kind: str) -> Optional[Dict[str, int]]:
        values = dict(self.timing_values)
        for index, name in enumerate(self.plain):
            for candidate in self._candidates(kind, index, values[name]):
                if candidate == values[name] or self.meta_run({**values, name: candidate}) is not None:
                    values[name] = candidate
                    break
        # Shrink the plain sizes of the largest tensor until every tensor fits the budget.
        stuck: set = set()
        for _ in range(64):
            run = self.meta_run(values)
            if run is None:
                return None
            key = self._largest_over_budget(run)
            if key is None:
                return values
            drivers = [name for name in self.plain if name not in stuck and values[name] > MIN_CHECK_VALUE[kind]
                       and key in self.changes.get(name, ())]
            if not drivers:
                self.notes.append(f"the {kind} sizes keep a tensor over {CHECK_TENSOR_BYTES >> 20} MiB: its sizes "
                                  f"cannot shrink further")
                return values
            name = max(drivers, key=lambda n: values[n])
            smaller = max(values[name] // 2, MIN_CHECK_VALUE[kind])
            if kind == "odd" and smaller % 2 == 0:
                smaller -= 1 if smaller > MIN_CHECK_VALUE[kind] else -1
            if smaller >= values[name] or self.meta_run({**values, name: smaller}) is None:
                stuck.add(name)
            else:
                values[name] = smaller
        return values

    # -- step 4: real runs
    def real_run(self, values: Dict[str, int]) -> Run:
        run = Run(self.problem, values, self.device, forward=True)
        difference = self.tensor_difference(run)
        if difference is not None:
            raise OtherTensors(f"the module has other tensors at these sizes than at its own ({difference})")
        again = run.run_forward()
        for i, (first, second) in enumerate(zip(run.outputs, again)):
            if not _same(first, second):
                dropout = [f"{name or 'the model'} ({type(m).__name__}, p={getattr(m, 'p', '?')})"
                           for name, m in run.model.named_modules()
                           if "Dropout" in type(m).__name__ and getattr(m, "p", 0) > 0]
                why = f": the model has dropout in training mode, {', '.join(dropout)}" if dropout else ""
                raise Refusal(f"non-deterministic: two forward passes on the same inputs give different outputs"
                              f"{why}")
            note = f"forward is not bitwise reproducible on {self.device} (two passes differ by less than a tenth " \
                   f"of the tolerance)"
            if not self.torch.equal(first, second) and note not in self.notes:
                self.notes.append(note)
        return run

    def check_configs(self) -> None:
        """Chooses and runs the check configurations; a configuration that fails for real is retried with
        its plain sizes doubled, then dropped."""
        self.configs: Dict[str, Dict[str, int]] = {"timing": dict(self.timing_values)}
        self.real: Dict[str, Run] = {}
        failures: List[str] = []
        for kind in ("small", "odd"):
            values = self.choose_config(kind)
            for attempt in range(3):
                if values is None:
                    break
                if any(values == other for other in self.configs.values()):
                    values = None  # the same as another configuration: nothing new to check
                    break
                try:
                    self.real[kind] = self.real_run(values)
                    self.configs[kind] = values
                    break
                except Refusal:
                    raise
                except Exception as error:
                    failures.append(f"{kind} sizes {_sizes_text(values, self.plain)}: {one_line(error)}")
                    values = {**values, **{n: min(values[n] * 2 + (kind == "odd"), self.timing_values[n])
                                           for n in self.plain}}
        if self._timing_is_small():
            try:
                self.real["timing"] = self.real_run(self.timing_values)
            except Refusal:
                raise
            except Exception as error:
                if not self.device.startswith("cuda"):
                    raise Refusal(f"the problem fails at its own sizes: {one_line(error)}") from None
                # On a GPU the estimate of its memory may fall short (intermediate tensors): not its fault.
                self.notes.append(f"not run at its own sizes on {self.device}: {one_line(error)}")
                self.torch.cuda.empty_cache()
        if not self.real and self._fits_device(self.timing_values):
            # No smaller sizes (a size that cannot change alone): the problem's own sizes, on a GPU with room.
            try:
                self.real["timing"] = self.real_run(self.timing_values)
                self.notes.append("no smaller sizes work: checked at the problem's own sizes only")
            except Refusal:
                raise
            except Exception as error:
                failures.append(f"the problem's own sizes: {one_line(error)}")
        if not self.real:
            if failures:
                why = failures[-1]
            else:
                fixed = [f"{n} ({self.why[n]})" for n in self.constants if self.kind[n] != "plain"]
                why = "no constant can shrink: " + (", ".join(fixed) or "the file has no integer constants")
            where = "" if self.device.startswith("cuda") else "; its own sizes are too large to run on a CPU " \
                                                             "(import it with --device cuda on a GPU)"
            raise Refusal(f"no sizes were found at which the module runs for real ({why}){where}")
        if failures:
            self.notes.append("check sizes that failed and were replaced or dropped: " + "; ".join(failures))

    def _fits_device(self, values: Dict[str, int]) -> bool:
        """Whether a configuration's tensors take at most an eighth of the GPU's memory (room for the drawn
        inputs, two trials' outputs and the intermediate tensors); never on a CPU, where a problem's own sizes
        reach many GiB."""
        torch = self.torch
        if not self.device.startswith("cuda") or not self.meta_forward:
            return False
        run = self.meta_run(values)
        if run is None:
            return False
        return self._total_bytes(run) <= torch.cuda.get_device_properties(self.device).total_memory // 8

    def _timing_is_small(self) -> bool:
        if not self.meta_forward:
            return False
        if self.device.startswith("cuda"):
            return self._fits_device(self.timing_values)
        return self._total_bytes(self.meta) <= REAL_TIMING_BYTES and self.flops <= REAL_TIMING_FLOPS

    # -- step 5: FLOPs at the problem's own sizes
    def count_flops(self) -> None:
        self.flops = 0
        if not self.meta_forward:
            return
        try:
            self.flops = self._flops_at(self.timing_values, raise_errors=True)
        except Exception as error:
            self.notes.append(f"FLOPs not counted ({one_line(error)}): work.flops is 0")

    def _flops_at(self, values: Dict[str, int], raise_errors: bool = False) -> Optional[int]:
        """What torch.utils.flop_counter counts for one forward pass at `values`, on the meta device."""
        from torch.utils.flop_counter import FlopCounterMode

        try:
            run = Run(self.problem, values, "meta", forward=False)
            with FlopCounterMode(display=False) as counter:
                run.run_forward()
            return int(counter.get_total_flops())
        except Exception:
            if raise_errors:
                raise
            return None

    # -- the tensors of the task
    def describe_tensors(self) -> None:
        torch = self.torch
        # A check-size run shows parameter values and buffer effects cheaply; the timing run only when alone.
        reference = self.real.get("odd") or self.real.get("small") or self.real.get("timing")
        self.outputs_known = self.meta.outputs if self.meta_forward else reference.outputs
        self.tensors: List[Dict[str, Any]] = []
        # Forward arguments.
        sample = self._sample_inputs(reference)
        for i, (name, kind) in enumerate(zip(self.forward_names, self.forward_kinds)):
            if kind != "tensor":
                value = self.meta.inputs[i]
                self.tensors.append({"key": ["forward", i], "source": "forward", "name": name, "role": "input",
                                     "dtype": "float64" if kind == "python_float" else "int64",
                                     "distribution": {"kind": "constant", "a": value}, "cast": kind})
                continue
            meta_value = self.meta.inputs[i]
            spec: Dict[str, Any] = {"key": ["forward", i], "source": "forward", "name": name, "role": "input",
                                    "dtype": task_dtype(meta_value.dtype, f"the forward argument {name}")}
            if meta_value.dtype == torch.bool:
                spec["cast"] = "bool"
            spec["distribution"] = self._input_distribution(i, sample)
            self.tensors.append(spec)
        # Parameters and the buffers that matter.
        parameters = self.meta.parameter_keys()
        influential = self._influential_buffers(reference)
        for key, tensor in self.meta.state().items():
            is_parameter = key in parameters
            if not is_parameter and key not in influential:
                continue
            source = "parameter" if is_parameter else "buffer"
            spec = {"key": ["state", key], "source": source, "name": key, "role": "input",
                    "dtype": task_dtype(tensor.dtype, f"the {source} {key}")}
            spec["distribution"] = self._state_distribution(key, tensor, reference, spec)
            self.tensors.append(spec)
        # Outputs.
        for i, value in enumerate(self.outputs_known):
            spec = {"key": ["output", i], "source": "output", "index": i, "role": "output",
                    "dtype": task_dtype(value.dtype, f"output {i}")}
            if value.dtype == torch.bool:
                self.notes.append(f"output {i} is bool: the task's output is uint8 (0 or 1)")
            self.tensors.append(spec)
        self.skipped_buffers = [k for k in self.meta.state() if k not in parameters and k not in influential]

    def _sample_inputs(self, reference: Run) -> Run:
        """A real run whose forward arguments show their values: the problem's own sizes when they are small
        enough to materialise, else the largest check configuration."""
        total = sum(_bytes(v.shape, TASK_DTYPES.get(str(v.dtype).replace("torch.", ""), "float64"))
                    for v in self.meta.inputs if isinstance(v, self.torch.Tensor))
        if total <= MATERIALISE_BYTES and "timing" in self.real:
            return self.real["timing"]
        if total <= MATERIALISE_BYTES:
            try:
                return Run(self.problem, self.timing_values, self.device, forward=False)
            except Exception:
                pass
        return reference

    def _input_distribution(self, index: int, sample: Run) -> Dict[str, Any]:
        meta_value = self.meta.inputs[index]
        traced = self.meta.tracer.lookup(meta_value)
        if traced is not None:
            return traced
        values = sample.inputs[index]
        # The structure shows at small sizes, and must hold at every size the task has (or the evaluator would
        # draw something else); the values' distribution is read at the largest size materialised.
        small_runs = [run.inputs[index] for run in self.real.values() if run.inputs[index].numel() <= STRUCTURE_ELEMENTS]
        found = {detect_structure(v) for v in small_runs}
        structure = found.pop() if len(found) == 1 else "none"
        if structure != "none":
            # The drawn part's distribution, from the largest sample that shows the structure.
            sample_holds = values.numel() <= STRUCTURE_ELEMENTS and detect_structure(values) == structure
            values = values if sample_holds else max(small_runs, key=lambda v: v.numel())
        distribution = infer_distribution(structured_values(values, structure))
        if structure != "none":
            distribution["structure"] = structure
            if distribution["kind"] == "constant" and structure == "probability_rows":
                distribution = {"kind": "uniform", "a": 0.0, "b": 1.0, "structure": structure}
        if distribution["kind"] == "integers" and values.is_floating_point():
            self.notes.append(f"the forward argument {self.forward_names[index]} is a float tensor of integer "
                              f"values: drawn as integers in [{distribution['a']}, {distribution['b']}]")
        return distribution

    def _state_distribution(self, key: str, meta_tensor, reference: Run, spec: Dict[str, Any]) -> Dict[str, Any]:
        # The initialiser recorded at the problem's own sizes (meta build), when a real build at small sizes
        # shows the same initialiser made the values (its bounds may depend on the sizes: 1/sqrt(fan_in));
        # else the one recorded in the real build if the values agree with it; else the values themselves.
        real_tensor = reference.state()[key]
        at_timing = self.meta.tracer.lookup(meta_tensor)
        at_small = reference.tracer.lookup(real_tensor)
        if at_small is not None and consistent(at_small, real_tensor):
            same_kind = at_timing is not None and at_timing["kind"] == at_small["kind"]
            distribution = at_timing if same_kind else at_small
        elif at_small is None and at_timing is not None and consistent(at_timing, real_tensor):
            distribution = at_timing
        else:
            distribution = infer_distribution(real_tensor)
        if distribution["kind"] == "constant" and spec["dtype"] in DEFAULT_ATOL:
            # A constant parameter (BatchNorm's weight 1, bias 0) varies around its value, so that a kernel
            # ignoring it fails the check.
            c = float(distribution["a"])
            distribution = {"kind": "normal", "a": c, "b": CONSTANT_PARAMETER_STD * max(1.0, abs(c))}
            spec["note"] = f"initialised to the constant {c:g}; drawn from normal({c:g}, {distribution['b']:g})"
        if distribution["kind"] == "integers" and spec["dtype"] in DEFAULT_ATOL:
            spec["note"] = "a float parameter of integer values"
        return distribution

    def _influential_buffers(self, reference: Run) -> set:
        """The persistent buffers whose values change the output (BatchNorm's running statistics do in eval
        mode, not in training mode), at small sizes: all of them perturbed at once first (a network has hundreds
        of BatchNorm buffers, ResNet-101 312, and in training mode none matters), then, when that changes the
        output, each in turn."""
        parameters = reference.parameter_keys()
        buffers = [k for k in reference.state() if k not in parameters]
        if not buffers:
            return set()
        if len(buffers) > 1 and not self._buffers_change_output(reference, buffers):
            return set()
        return {key for key in buffers if self._buffers_change_output(reference, [key])}

    def _buffers_change_output(self, reference: Run, keys: Sequence[str]) -> bool:
        """Whether perturbing these buffers of a fresh model changes its output on the reference's inputs (a
        forward that then fails counts as a change: the module needs their values)."""
        torch = self.torch
        run = Run(self.problem, reference.values, self.device, forward=False)
        state = run.state()
        with torch.no_grad():
            for key in keys:
                tensor = state[key]
                if tensor.is_floating_point():
                    tensor.mul_(1.5).add_(0.25)
                elif tensor.dtype == torch.bool:
                    tensor.logical_not_()
                else:
                    tensor.add_(3)
        try:
            outputs = run.run_forward()
        except Exception:
            return True
        return any(not _same(a, b) for a, b in zip(reference.outputs, outputs))

    # -- dimensions in terms of sizes
    def resolve_dims(self) -> None:
        """Each tensor dimension becomes a size's name (it equals the size in every configuration and follows
        it), a literal (the same everywhere) or a derived size (its value per configuration)."""
        shapes_by_config: Dict[str, Dict[Tuple[str, Any], Tuple[int, ...]]] = {}
        for config, values in self.configs.items():
            if config in self.real:
                shapes_by_config[config] = self.shapes(self.real[config])
            elif config == "timing":
                shapes_by_config[config] = self.shapes(self.meta)  # the outputs too when forward ran on meta
            else:
                run = self.meta_run(values)
                if run is None:
                    raise Refusal(f"the module fails on the meta device at the {config} sizes")
                shapes_by_config[config] = self.shapes(run)
        if not self.meta_forward and "timing" not in self.real:
            self._infer_timing_outputs(shapes_by_config)
        self.sizes: Dict[str, str] = {}
        for spec in self.tensors:
            key = (spec["key"][0], spec["key"][1])
            if spec.get("cast") in ("python_float", "python_int"):
                spec["dims"] = []
                continue
            rank = len(shapes_by_config["timing"][key])
            dims = []
            for axis in range(rank):
                per_config = {c: shapes[key][axis] for c, shapes in shapes_by_config.items()}
                dims.append(self._resolve_dim(key, axis, per_config))
            spec["dims"] = dims

    def _resolve_dim(self, key, axis: int, per_config: Dict[str, int]) -> Dict[str, Any]:
        for name in self.constants:
            if self.kind.get(name) not in ("plain", "fixed") or (key, axis) not in self.follows.get(name, ()):
                continue
            if all(per_config[c] == self.configs[c][name] for c in per_config):
                self.sizes[name] = self.kind[name]
                return {"size": name}
        if len(set(per_config.values())) == 1:
            return {"value": per_config["timing"]}
        return {"derived": per_config}

    def _infer_timing_outputs(self, shapes_by_config) -> None:
        # Forward failed on the meta device and the problem is too large to run: an output dimension is known
        # at the timing sizes only when it is a plain size's in every check configuration, or a literal.
        timing = shapes_by_config["timing"]
        checks = [c for c in shapes_by_config if c != "timing"]
        for i in range(len(self.outputs_known)):
            key = ("output", i)
            shape = []
            for axis in range(len(shapes_by_config[checks[0]][key])):
                values = {shapes_by_config[c][key][axis] for c in checks}
                sized = [n for n in self.plain
                         if all(shapes_by_config[c][key][axis] == self.configs[c][n] for c in checks)]
                if sized and len(checks) > 1:
                    shape.append(self.timing_values[sized[0]])
                    self.follows.setdefault(sized[0], set()).add((key, axis))
                elif len(values) == 1:
                    shape.append(values.pop())
                else:
                    raise Refusal("forward fails on the meta device and the problem is too large to run here, so "
                                  "its output shape at its own sizes is unknown")
            timing[key] = tuple(shape)

    # -- step 4 again: the checks the evaluator will make, on inputs drawn from the task's distributions
    def _drawn_trials(self, run: Run, config: str, passes: int) -> List[List[Any]]:
        """Outputs for two input sets drawn from the task's distributions (as the evaluator draws its random
        cases), each run `passes` times: they must be identical and finite. Each is a case of the
        trivial-program check (self.trivial_checks or self.trivial_own, :meth:`check_trivial`)."""
        torch = self.torch
        trials: List[List[Any]] = []
        for trial in range(2):
            generator = torch.Generator(device=self.device)
            generator.manual_seed(1000 + trial)
            fresh, args, named = self._drawn_run(run, generator, "random")
            try:
                outputs = [fresh.run_forward(args) for _ in range(passes)]
            except Refusal:
                raise
            except Exception as error:
                raise Refusal(f"forward fails at the {config} sizes on inputs drawn from the inferred "
                              f"distributions: {one_line(error)}") from None
            for i, first in enumerate(outputs[0]):
                if any(not _same(first, again[i]) for again in outputs[1:]):
                    raise Refusal("non-deterministic: two forward passes on the same drawn inputs give "
                                  "different outputs")
                if first.is_floating_point() and not bool(torch.isfinite(first).all()):
                    raise Refusal(f"output {i} has NaN or infinite values at the {config} sizes on inputs "
                                  f"drawn from the inferred distributions")
            trials.append(outputs[0])
            group = self.trivial_own if config in ("timing", "rows") else self.trivial_checks
            group.add(triviality.Case(named, outputs[0], f"{config} sizes, trial {trial}"))
            del named
        if config not in ("timing", "rows"):
            self._adversarial_cases(run, config)
        return trials

    def _drawn_run(self, run: Run, generator, kind: str):
        """(a fresh model holding drawn parameters, the drawn forward arguments, every drawn input by name) at
        `run`'s sizes, for input `kind`. The inputs by name are copies: a forward that works in place on its
        arguments must not make them look like its output to the trivial-program check."""
        torch = self.torch
        args, state, named = self._drawn_inputs(run, generator, kind)
        named = {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in named.items()}
        fresh = Run(self.problem, run.values, self.device, forward=False)
        fresh.model.load_state_dict(state, strict=False)
        return fresh, args, named

    def _adversarial_cases(self, run: Run, config: str) -> None:
        """The evaluator's adversarial cases of a check size, for the trivial-program check only: their outputs
        may be non-finite (the evaluator skips those elements), and a forward that fails on them gives no
        case."""
        torch = self.torch
        for number, kind in enumerate(ADVERSARIAL_KINDS):
            generator = torch.Generator(device=self.device)
            generator.manual_seed(2000 + number)
            fresh, args, named = self._drawn_run(run, generator, kind)
            try:
                outputs = fresh.run_forward(args)
            except Refusal:
                raise
            except Exception:
                continue
            self.trivial_checks.add(triviality.Case(named, outputs, f"{config} sizes, {kind} inputs"))

    def validate_drawn(self) -> None:
        """The evaluator's checks on inputs drawn from the task's distributions: deterministic and finite at
        every verified size; not near-constant (relative spread, the evaluator's rule) at the problem's own
        sizes, where the evaluator checks it, or with only the batch shrunk (:meth:`rows_run`), else at the
        check sizes."""
        torch = self.torch
        outputs = [s for s in self.tensors if s["role"] == "output"]
        spreads: Dict[str, Dict[str, float]] = {}
        # The trivial-program check's two groups of cases (triviality.py): the check sizes, and the problem's
        # own sizes (the timing run, else rows_run standing for it).
        self.trivial_checks = triviality.Verdicts([s["dtype"] for s in outputs])
        self.trivial_own = triviality.Verdicts([s["dtype"] for s in outputs], constant=False)
        runs = dict(self.real)
        if "timing" not in runs:
            rows = self.rows_run()
            if rows is not None:
                runs["rows"] = rows
        single_shapes: Dict[int, List[Tuple[int, ...]]] = {}
        for config, run in runs.items():
            trials = self._drawn_trials(run, config, passes=1 if config == "rows" else 2)
            for i, spec in enumerate(outputs):
                single_shapes.setdefault(i, []).append(tuple(trials[0][i].shape))
                spreads.setdefault(i, {})[config] = relative_spread([t[i] for t in trials])
                atol = DEFAULT_ATOL.get(spec["dtype"])
                if config != "rows" and atol is not None and trials[0][i].numel() > 0:
                    magnitude = float(sample_of(trials[0][i]).abs().to(torch.float64).median())
                    if magnitude < 10 * atol:
                        self.notes.append(f"output {i} at the {config} sizes is mostly below 10x its tolerance "
                                          f"(median |value| {magnitude:.3g}): the relative error check matters there")
        for i, by_config in spreads.items():
            threshold = near_constant_spread(outputs[i]["dtype"])
            if all(math.prod(shape) == 1 for shape in single_shapes.get(i, [()])):
                # A single value (a loss): its spread is only how much it moves between input draws, which a
                # mean over millions of elements barely does; the evaluator judges it over the scaled input
                # kinds of the check sizes too, where a constant fails.
                continue
            decisive = "timing" if "timing" in by_config else "rows" if "rows" in by_config else None
            if decisive is not None:
                if by_config[decisive] < threshold:
                    where = "the problem's own sizes" + (f" ({self.rows_note})" if decisive == "rows" else "")
                    raise Refusal(f"output {i} is near-constant on random inputs (relative spread "
                                  f"{by_config[decisive]:.3g} < {threshold:g} at {where}): a wrong kernel "
                                  f"could pass, and the evaluator refuses such a task")
                weak = [c for c, v in by_config.items() if v < threshold and c != decisive]
                if weak:
                    self.notes.append(f"output {i} is near-constant at the {' and '.join(weak)} sizes (relative "
                                      f"spread {min(by_config[c] for c in weak):.3g}): a weak check there")
            elif max(by_config.values()) < threshold:
                raise Refusal(f"output {i} is near-constant on random inputs at every size checked (relative spread "
                              f"{max(by_config.values()):.3g} < {threshold:g}); the problem's own sizes, "
                              f"where the evaluator checks it, are too large to run here (import with --device cuda "
                              f"on a GPU to check them)")

    def rows_run(self) -> Optional[Run]:
        """The problem at its own sizes but for the batch (the plain size of the first input's first
        dimension, at most ROWS_BATCH), when that is small enough to run here: an output's spread over rows
        and trials there is the spread the evaluator measures at the problem's own sizes."""
        batch = next((n for n in self.plain if (("forward", 0), 0) in self.follows.get(n, ())), None)
        if batch is None or not self.meta_forward:
            return None
        values = {**self.timing_values, batch: min(self.timing_values[batch], ROWS_BATCH)}
        self.rows_note = f"{batch}={values[batch]}"
        run = self.meta_run(values)
        if run is None:
            return None
        total = sum(_bytes(shape, self._dtype_of(run, k)) for k, shape in self.shapes(run).items())
        fits = self._fits_device(values) if self.device.startswith("cuda") else total <= ROWS_BYTES
        if not fits or (not self.device.startswith("cuda") and (self._flops_at(values) or 0) > ROWS_FLOPS):
            return None
        try:
            return Run(self.problem, values, self.device, forward=False)
        except Exception:
            return None

    # -- step 4, last: trivial programs must fail the task's checks
    def check_trivial(self) -> None:
        """Whether a trivial program (triviality.PROGRAMS: a copy of an input, zeros, a constant, an input
        negated) passes every case validate_drawn drew in one of two groups, as the evaluator judges them: the
        check sizes (random and adversarial inputs), or the problem's own sizes (random inputs; with the batch
        shrunk, rows_run, where they do not run here). If one does, the inputs are widened (:meth:`_widenings`,
        the first that works) and the checks run again on the wider distributions: the module must stay
        deterministic, finite and not near-constant there, and every trivial program must fail. When no
        widening does that, the problem is refused, naming what passed."""
        passing = self._trivial_passing()
        self.trivial_passed = passing
        self.widened: Dict[str, Dict[str, Any]] = {}
        if not passing:
            return
        inputs = {spec["name"]: spec for spec in self.tensors if spec["role"] == "input"}
        original = {name: spec["distribution"] for name, spec in inputs.items()}
        notes = list(self.notes)
        tried: List[str] = []
        for widening in self._widenings(inputs):
            for name, distribution in widening.items():
                inputs[name]["distribution"] = distribution
            self.notes = list(notes)  # validate_drawn's notes are of the distributions it checks
            text = triviality.distribution_text
            what = ", ".join(f"{name} {text(original[name])} -> {text(d)}" for name, d in widening.items())
            try:
                self.validate_drawn()
                still = self._trivial_passing()
            except Refusal as refusal:
                still, why = None, str(refusal)
            if still == []:
                self.widened = {name: {"from": original[name], "to": d} for name, d in widening.items()}
                self.notes.append(f"a trivial program passed on the problem's own input distributions ({passing[0]}"
                                  f"{' and more' if len(passing) > 1 else ''}): inputs widened, {what}")
                return
            tried.append(f"{what}: " + (f"{still[0]} still passes" if still else why))
            for name in widening:
                inputs[name]["distribution"] = original[name]
        self.notes = notes
        raise Refusal(f"a trivial program passes every check of the task ({'; '.join(passing)}), so a kernel that "
                      f"ignores the operation would be judged right; no wider input distribution makes it fail"
                      + (f" ({'; '.join(tried)})" if tried else " (no float input can be widened)"))

    def _trivial_passing(self) -> List[str]:
        return ([f"{p} on the check sizes" for p in self.trivial_checks.passing()]
                + [f"{p} on the problem's own sizes" for p in self.trivial_own.passing()])

    def _widenings(self, inputs: Dict[str, Dict[str, Any]]) -> List[Dict[str, Dict[str, Any]]]:
        """The input distributions to try, in order, each {input name: distribution}: the one-signed float
        forward inputs made symmetric at the same magnitude (uniform(0, 1) -> uniform(-1, 1)); then the
        one-signed float parameters too; then every random float forward input normal(0, 1), then uniform(-1,
        1). Structures are kept; integers, constants and probability rows (positive by construction) are not
        widened."""
        def widenable(spec) -> bool:
            d = spec["distribution"]
            return (spec["dtype"] in DEFAULT_ATOL and not spec.get("cast") and d["kind"] in ("uniform", "normal")
                    and d.get("structure", "none") != "probability_rows")

        def one_signed(d) -> bool:
            if d["kind"] == "uniform":
                return d["a"] >= 0 or d["b"] <= 0
            return abs(d["a"]) >= 2 * d["b"]  # normal: 98% of the values of one sign

        def symmetric(d) -> Dict[str, Any]:
            if d["kind"] == "uniform":
                m = max(abs(d["a"]), abs(d["b"]))
                wide = {"kind": "uniform", "a": -m, "b": m}
            else:
                wide = {"kind": "normal", "a": 0.0, "b": abs(d["a"]) + d["b"]}
            return _with_structure(wide, d)

        candidates = [spec for spec in inputs.values() if widenable(spec)]
        forward = [spec for spec in candidates if spec["source"] == "forward"]
        attempts = [
            {s["name"]: symmetric(s["distribution"]) for s in forward if one_signed(s["distribution"])},
            {s["name"]: symmetric(s["distribution"]) for s in candidates if one_signed(s["distribution"])},
            {s["name"]: _with_structure({"kind": "normal", "a": 0.0, "b": 1.0}, s["distribution"]) for s in forward},
            {s["name"]: _with_structure({"kind": "uniform", "a": -1.0, "b": 1.0}, s["distribution"])
             for s in forward},
        ]
        unique: List[Dict[str, Dict[str, Any]]] = []
        for attempt in attempts:
            attempt = {n: d for n, d in attempt.items() if d != inputs[n]["distribution"]}
            if attempt and attempt not in unique:
                unique.append(attempt)
        return unique

    def _drawn_inputs(self, run: Run, generator, kind: str = "random"):
        """(forward arguments, state-dict entries, every input by name) drawn from the task's distributions for
        input `kind` (draw)."""
        torch = self.torch
        args: List[Any] = []
        state: Dict[str, Any] = {}
        named: Dict[str, Any] = {}
        real_state = run.state()
        for spec in self.tensors:
            if spec["role"] != "input":
                continue
            source, index = spec["key"]
            if spec.get("cast") in ("python_float", "python_int"):
                args.append(run.inputs[index])
                named[spec["name"]] = run.inputs[index]
                continue
            original = run.inputs[index] if source == "forward" else real_state[index]
            dtype = torch.uint8 if spec.get("cast") == "bool" else original.dtype
            values = draw(spec, original.shape, dtype, self.device, generator, kind)
            if spec.get("cast") == "bool":
                values = values.bool()
            named[spec["name"]] = values
            if source == "forward":
                args.append(values)
            else:
                state[index] = values
        return args, state, named

    def facts(self) -> Dict[str, Any]:
        return {
            "constants": self.constants,
            "constant_kinds": {n: {"kind": self.kind[n], "why": self.why[n]} for n in self.constants},
            "sizes": self.sizes,
            "configs": {c: {n: v[n] for n in self.sizes} for c, v in self.configs.items() if c in self._verified()},
            "tensors": self.tensors,
            "flops": self.flops,
            "training": True,
            "buffers_left_out": self.skipped_buffers,
            "trivial_programs_passed": self.trivial_passed,
            "widened": self.widened,
            "resized": self.resized,
            "notes": self.notes,
            "real_device": self.device,
            "module_source": self.problem.source,
            "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        }

    def _verified(self) -> set:
        return {"timing"} | set(self.real)

    def run(self, scale: Optional[float] = None, sizes: Optional[Dict[str, int]] = None) -> Dict[str, Any]:
        self.instantiate_meta()
        self.perturb_constants()
        self.resize(scale, sizes or {})
        self.count_flops()
        self.check_configs()
        self.describe_tensors()
        self.resolve_dims()
        self.validate_drawn()
        self.check_trivial()
        return self.facts()


def _with_structure(distribution: Dict[str, Any], like: Dict[str, Any]) -> Dict[str, Any]:
    """`distribution` with the structure of `like` (none is not written)."""
    structure = like.get("structure", "none")
    return {**distribution, "structure": structure} if structure != "none" else distribution


def _same(a, b) -> bool:
    """Whether two outputs of the same computation agree: integers exactly; floats bitwise, or within a tenth
    of the dtype's default tolerance (cuDNN's transposed convolutions are not bitwise reproducible on a GPU,
    and the oracle's outputs are computed once; dropout differs by whole values), NaN where NaN."""
    import torch

    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if torch.equal(a, b):
        return True
    if not a.is_floating_point():
        return False
    nan = torch.isnan(a)
    if not torch.equal(nan, torch.isnan(b)):
        return False
    atol = DEFAULT_ATOL.get(str(a.dtype).replace("torch.", ""), 1e-4)  # rtol equals atol for every float dtype
    a, b = torch.where(nan, 0, a), torch.where(nan, 0, b)
    return bool(((a - b).abs() <= 0.1 * (atol + atol * b.abs())).all())


def scaled_size(value: int, scale: float) -> int:
    """`value` times `scale`, rounded to a multiple of the largest power of two (up to RESIZE_ALIGNMENT) that
    divides `value` and is not above the scaled value; at least 1."""
    target = value * scale
    step = min(value & -value, RESIZE_ALIGNMENT) if value > 0 else 1
    while step > 1 and target < step:
        step //= 2
    return max(1, step * math.floor(target / step + 0.5))  # halves round up


def _key_text(key: Tuple[str, Any]) -> str:
    """A tensor key of Analysis.shapes in words: the state-dict entry, "forward argument 0", "output 1"."""
    kind, what = key
    return str(what) if kind == "state" else f"{'forward argument' if kind == 'forward' else kind} {what}"


def _sizes_text(values: Dict[str, int], names: Sequence[str]) -> str:
    return ", ".join(f"{n}={values[n]}" for n in names) or "(none)"


# ---------------------------------------------------------------------------------------------------------
# The helper's main loop
# ---------------------------------------------------------------------------------------------------------

def _out_of_memory(error: BaseException) -> bool:
    """Whether `error` is an allocation that failed (a CPU allocator's or a GPU's out of memory)."""
    import torch

    if isinstance(error, (MemoryError, torch.OutOfMemoryError)):
        return True
    text = str(error)
    return isinstance(error, RuntimeError) and ("can't allocate memory" in text or "out of memory" in text)


def _reset_torch_state(torch) -> None:
    # One problem must not change the next one's defaults.
    torch.set_default_dtype(torch.float32)
    torch.set_grad_enabled(True)
    if torch.cuda.is_available():
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False


def probe(path: str, device: str, scale: Optional[float] = None,
          sizes: Optional[Dict[str, int]] = None) -> Dict[str, Any]:
    """The reply for one problem: {"ok": true, "facts": ...} or {"ok": false, "reason": ...}; its timing sizes
    are its own scaled by `scale` and/or set by `sizes` ({name: value}; Analysis.resize)."""
    import torch

    _reset_torch_state(torch)
    started = time.monotonic()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a problem's own warnings are not the importer's concern
            facts = Analysis(path, device).run(scale, sizes)
        facts["seconds"] = round(time.monotonic() - started, 3)
        return {"ok": True, "facts": facts}
    except Refusal as refusal:
        return {"ok": False, "reason": str(refusal)}
    except Exception as error:  # a bug of the probe or an unforeseen problem shape: refused, with where
        if _out_of_memory(error):
            where = "" if device.startswith("cuda") else "; import it on a GPU with room (--device cuda)"
            return {"ok": False, "reason": f"the problem needs more memory on {device} than the helper could allocate "
                                           f"at the smallest sizes it runs at ({one_line(error)}); a size written "
                                           f"inside a list or a tuple literal does not shrink{where}"}
        frame = traceback.extract_tb(error.__traceback__)[-1]
        return {"ok": False, "reason": f"the probe failed: {one_line(error)} (at {os.path.basename(frame.filename)}:"
                                       f"{frame.lineno})"}
    finally:
        if device.startswith("cuda"):
            torch.cuda.empty_cache()  # the next problem gets the GPU's memory back


def _resolve_device(requested: str) -> str:
    import torch

    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if requested.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit(f"--device {requested}: this torch has no CUDA device")
    return requested


def serve(device_option: str) -> int:
    # Replies go to the original stdout; anything the problems print goes to stderr instead.
    replies = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        import torch
    except Exception as error:
        replies.write(json.dumps({"ready": False, "reason": f"torch cannot be imported by {sys.executable}: "
                                                           f"{one_line(error)}; install torch there"}) + "\n")
        return 1
    device = _resolve_device(device_option)
    replies.write(json.dumps({"ready": True, "torch": torch.__version__, "device": device}) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            reply = probe(request["path"], device, request.get("scale"), request.get("sizes"))
            reply["id"] = request.get("id")
        except (ValueError, KeyError, TypeError) as error:
            reply = {"ok": False, "reason": f"bad request: {one_line(error)}"}
        replies.write(json.dumps(reply) + "\n")
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="Probe KernelBench problem files (a helper of kernelsmith's "
                                                 "KernelBench importer).")
    parser.add_argument("path", nargs="?", help="probe this file and print its facts as JSON")
    parser.add_argument("--serve", action="store_true", help="serve JSON-line requests on stdin")
    parser.add_argument("--device", default="auto", help="where the real runs go: cpu, cuda, cuda:N or auto")
    args = parser.parse_args(argv)
    if args.serve:
        return serve(args.device)
    if not args.path:
        parser.error("give a problem file, or --serve")
    print(json.dumps(probe(args.path, _resolve_device(args.device)), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
