"""Ahead-of-time compilation of Triton candidates, in a helper process (docs/triton.md).

A Triton candidate is one Python file of ``@triton.jit`` functions whose launch plan is in ``# @``
comment lines. Before the file is executed, :func:`check_source` (the gate) refuses anything but imports
of triton, triton.language and math, ``@triton.jit`` functions and constexpr globals at the top level.
The file is then executed and compiled only here, in ``python -m kernelsmith.triton_compile``, never in
the caller's process: the helper reads one JSON request per line on stdin and writes one JSON reply per
line on stdout, and serves any number of requests.

Request::

    {"id": 1, "source": "...", "kernel": "add", "signature": ["*fp32", "*fp32", "*fp32", "i32"],
     "constexprs": {"BLOCK": 1024}, "num_warps": 4, "num_stages": 3, "target": "sm_90",
     "aligned": [0, 1, 2], "filename": "candidate.py"}

(``"reverse_program_ids": true`` compiles the candidate with its program indices reversed, for the
schedule check: :func:`reverse_program_ids`.) ``signature`` gives the types of the kernel's non-constexpr parameters in order (see
:func:`signature_for`); ``aligned`` the indices (into ``signature``) of pointers the harness aligns to
16 bytes and of integers whose value is a multiple of 16 (both get ``tt.divisibility = 16``);
``constexprs`` the tl.constexpr parameters by name (those with a default may be left out).

Reply: ``{"id": 1, "ok": true, "cubin": base64, "name": ..., "num_warps": ..., "num_ctas": ...,
"shared": ..., "global_scratch_size": ..., "global_scratch_align": ..., "profile_scratch_size": ...,
"profile_scratch_align": ..., "launch_pdl": ..., "launch_cooperative_grid": ..., "param_count": ...,
"scratch_pointers": 2, "registers": ..., "spills": ..., "spill_store_bytes": ..., "spill_load_bytes": ...,
"ptxas_log": ..., "triton_version": ...}`` (and ``"ptx"`` when the request has ``"want_ptx": true``), or
``{"id": 1, "ok": false, "stage": "gate" | "load" | "signature" | "compile" | "triton" | "request",
"line": n or null, "message": ...}`` where ``line`` is a line of the candidate's own file and stage
``triton`` means triton itself is missing or too old. ``{"op": "status"}`` answers ``{"ok": true,
"available": bool, "version": "3.6.0", "reason": why not}``.

This module imports only the standard library at import time (triton when a request needs it), so the
gate and the signature mapping work without triton installed.
"""

from __future__ import annotations

import ast
import base64
import contextlib
import functools
import hashlib
import importlib.util
import io
import os
import re
import sys
import tempfile
import traceback
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

#: The modules a candidate may import.
ALLOWED_MODULES = ("triton", "triton.language", "math")
#: Names a candidate may import from ``triton`` with ``from triton import ...``.
ALLOWED_FROM_TRITON = ("jit", "language")
#: Names a kernel body may not use: they reach the host when triton evaluates them at compile time.
FORBIDDEN_NAMES = frozenset({
    "open", "exec", "eval", "compile", "__import__", "getattr", "setattr", "delattr", "globals", "locals",
    "vars", "input", "breakpoint", "exit", "quit", "help", "memoryview", "__builtins__",
})

ALLOWED_SUMMARY = (
    "a Triton candidate may import only triton, triton.language and math, and at the top level holds only "
    "those imports, @triton.jit functions and constexpr globals (NAME = tl.constexpr(4))"
)


class GateError(Exception):
    """A candidate refused before it is executed: what is not allowed, where, and what is."""

    def __init__(self, line: Optional[int], what: str):
        self.line = line
        self.what = what
        where = f"line {line}: " if line else ""
        super().__init__(f"{where}{what}; {ALLOWED_SUMMARY}")

    def to_json(self) -> Dict[str, Any]:
        return {"ok": False, "stage": "gate", "line": self.line, "message": str(self)}


# ---------------------------------------------------------------------------------------------------------
# The gate


def _dotted(node: ast.AST) -> Optional[str]:
    """``a.b.c`` for a chain of attribute accesses on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _snippet(node: ast.AST, source: str) -> str:
    text = ast.get_source_segment(source, node) or type(node).__name__
    text = text.splitlines()[0] if text else type(node).__name__
    return text if len(text) <= 60 else text[:57] + "..."


class _Gate:
    def __init__(self, source: str):
        self.source = source
        # Local names bound to allowed modules or objects: "tl" -> "triton.language".
        self.aliases: Dict[str, str] = {}

    def refuse(self, node: ast.AST, what: str) -> None:
        raise GateError(getattr(node, "lineno", None), what)

    def resolve(self, node: ast.AST) -> Optional[str]:
        """The full dotted name an expression refers to, through the import aliases."""
        dotted = _dotted(node)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        if head not in self.aliases:
            return dotted
        base = self.aliases[head]
        return f"{base}.{rest}" if rest else base

    def check_module(self, tree: ast.Module) -> None:
        for index, statement in enumerate(tree.body):
            if isinstance(statement, ast.Import):
                self.check_import(statement)
            elif isinstance(statement, ast.ImportFrom):
                self.check_import_from(statement)
            elif isinstance(statement, ast.FunctionDef):
                self.check_function(statement)
            elif isinstance(statement, ast.AnnAssign):
                self.refuse(statement, f"the annotated global `{_snippet(statement, self.source)}` is not "
                            "readable from a kernel; write NAME = tl.constexpr(value)")
            elif isinstance(statement, ast.Assign):
                self.check_global(statement)
            elif (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) and
                  isinstance(statement.value.value, str) and index == 0):
                continue  # the module's docstring
            elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
                self.refuse(statement, f"the top-level call `{_snippet(statement, self.source)}` is not allowed")
            else:
                kind = {
                    ast.ClassDef: "a class", ast.AsyncFunctionDef: "an async function", ast.If: "an if statement",
                    ast.For: "a for loop", ast.While: "a while loop", ast.With: "a with statement",
                    ast.Try: "a try statement", ast.Expr: "an expression statement", ast.Delete: "del",
                    ast.Global: "global", ast.AugAssign: "an augmented assignment",
                }.get(type(statement), f"a {type(statement).__name__} statement")
                self.refuse(statement, f"{kind} (`{_snippet(statement, self.source)}`) is not allowed at the top level")

    def check_import(self, statement: ast.Import) -> None:
        for alias in statement.names:
            if alias.name not in ALLOWED_MODULES:
                self.refuse(statement, f"`import {alias.name}` is not allowed")
            if alias.asname:
                self.aliases[alias.asname] = alias.name
            else:
                head = alias.name.split(".")[0]
                self.aliases[head] = head

    def check_import_from(self, statement: ast.ImportFrom) -> None:
        module = statement.module or ""
        names = ", ".join(a.name for a in statement.names)
        if statement.level != 0 or module not in ("triton", "triton.language", "math"):
            self.refuse(statement, f"`from {'.' * statement.level}{module} import {names}` is not allowed")
        for alias in statement.names:
            if alias.name == "*":
                self.refuse(statement, f"`from {module} import *` is not allowed; import names one by one")
            if module == "triton" and alias.name not in ALLOWED_FROM_TRITON:
                self.refuse(statement, f"`from triton import {alias.name}` is not allowed "
                            f"(only {', '.join(ALLOWED_FROM_TRITON)})")
            self.aliases[alias.asname or alias.name] = f"{module}.{alias.name}"

    def is_jit(self, decorator: ast.AST) -> bool:
        return self.resolve(decorator) == "triton.jit"

    def check_annotation(self, node: Optional[ast.AST]) -> None:
        if node is None:
            return
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return
        if _dotted(node) is None:
            self.refuse(node, f"the annotation `{_snippet(node, self.source)}` must be a name such as tl.constexpr")

    def check_constant(self, node: ast.AST, role: str) -> None:
        """Literals and arithmetic over literals (what is evaluated when the file is executed)."""
        for child in ast.walk(node):
            if not isinstance(child, (ast.Constant, ast.UnaryOp, ast.BinOp, ast.unaryop, ast.operator,
                                      ast.Tuple, ast.expr_context)):
                self.refuse(node, f"{role} `{_snippet(node, self.source)}` must be a literal "
                            "(numbers, strings, True/False/None and arithmetic over them)")

    def check_function(self, function: ast.FunctionDef) -> None:
        if not function.decorator_list or not all(self.is_jit(d) for d in function.decorator_list):
            self.refuse(function, f"the function {function.name} must be decorated with @triton.jit (and nothing "
                        "else): plain Python functions would run on the host")
        arguments = function.args
        for argument in arguments.posonlyargs + arguments.args + arguments.kwonlyargs:
            self.check_annotation(argument.annotation)
        if arguments.vararg or arguments.kwarg:
            self.refuse(function, f"the function {function.name} may not take *args or **kwargs")
        for default in arguments.defaults + [d for d in arguments.kw_defaults if d is not None]:
            self.check_constant(default, "the default value")
        self.check_annotation(function.returns)
        for node in ast.walk(function):
            if node is function:
                continue
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                self.refuse(node, f"an import inside {function.name} is not allowed")
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                self.refuse(node, f"`{_snippet(node, self.source)}` inside {function.name} is not allowed")
            elif isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
                self.refuse(node, f"{node.id} is not allowed in a kernel ({function.name})")
            elif isinstance(node, ast.Attribute):
                if node.attr.startswith("_"):
                    self.refuse(node, f"the attribute .{node.attr} is not allowed in a kernel ({function.name})")
                full = self.resolve(node)
                if full and full.startswith("triton.") and not full.startswith(("triton.language", "triton.jit")):
                    self.refuse(node, f"{full} is not allowed in a kernel ({function.name}): use triton.language")

    def check_global(self, statement: ast.Assign) -> None:
        targets = statement.targets
        if len(targets) != 1 or not isinstance(targets[0], ast.Name):
            self.refuse(statement, f"the assignment `{_snippet(statement, self.source)}` must bind one name")
        value = statement.value
        if isinstance(value, ast.Call):
            if self.resolve(value.func) != "triton.language.constexpr" or value.keywords or len(value.args) != 1:
                self.refuse(statement, f"the top-level call `{_snippet(value, self.source)}` is not allowed "
                            "(a global's value is a literal or tl.constexpr(literal))")
            value = value.args[0]
        self.check_constant(value, f"the value of {targets[0].id}")


def check_source(source: str, filename: str = "<candidate>") -> ast.Module:
    """The gate: parses the candidate and refuses, with :class:`GateError`, anything at its top level but
    imports of triton / triton.language / math, @triton.jit functions and constexpr globals, and kernel
    bodies that reach the host (open, exec, getattr, dunder attributes, triton outside triton.language).
    Nothing is executed. Returns the parsed module."""
    return _gated(source, filename)[0]


def _gated(source: str, filename: str) -> Tuple[ast.Module, _Gate]:
    """check_source's work: the parsed module and the gate that passed it (with the file's import aliases)."""
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as error:
        raise GateError(error.lineno, f"syntax error: {error.msg}") from None
    gate = _Gate(source)
    gate.check_module(tree)
    return tree, gate


#: The module alias the reversed build uses for its num_programs / program_id calls.
_REVERSED_ALIAS = "kernelsmith_reversed_tl"


def reverse_program_ids(source: str, filename: str = "<candidate>") -> str:
    """The candidate with its program indices reversed, for the evaluator's schedule check
    (docs/evaluation.md, "Races"): every ``tl.program_id(axis)`` becomes ``tl.num_programs(axis) - 1 -
    tl.program_id(axis)``, so that programs that ran first now run last. The source passes the gate first
    (GateError otherwise); the result is regenerated from the syntax tree, so its line numbers are not the
    candidate's (its compile errors are not shown)."""
    tree, gate = _gated(source, filename)

    def call(name: str, node: ast.Call) -> ast.Call:
        function = ast.Attribute(value=ast.Name(id=_REVERSED_ALIAS, ctx=ast.Load()), attr=name, ctx=ast.Load())
        return ast.Call(func=function, args=node.args, keywords=node.keywords)

    class Reverse(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.AST:
            self.generic_visit(node)
            if gate.resolve(node.func) != "triton.language.program_id":
                return node
            last = ast.BinOp(left=call("num_programs", node), op=ast.Sub(), right=ast.Constant(1))
            return ast.copy_location(ast.BinOp(left=last, op=ast.Sub(), right=call("program_id", node)), node)

    tree = Reverse().visit(tree)
    tree.body.insert(0, ast.Import(names=[ast.alias(name="triton.language", asname=_REVERSED_ALIAS)]))
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


# ---------------------------------------------------------------------------------------------------------
# Signatures

#: Task dtype names (kernelsmith.DType) -> Triton pointer types.
POINTER_TYPES = {
    "float16": "*fp16", "bfloat16": "*bf16", "float32": "*fp32", "float64": "*fp64",
    "int8": "*i8", "uint8": "*u8", "int32": "*i32", "int64": "*i64",
}
_INT32_MIN, _INT32_MAX = -(2 ** 31), 2 ** 31 - 1


def pointer_type(dtype: Any) -> str:
    """The Triton type of a pointer to a tensor of ``dtype`` (a kernelsmith.DType or its name):
    float32 -> "*fp32"."""
    name = getattr(dtype, "name", dtype)
    if name not in POINTER_TYPES:
        raise ValueError(f"no Triton pointer type for dtype {name!r}; known: {', '.join(POINTER_TYPES)}")
    return POINTER_TYPES[name]


def integer_type(values: Iterable[int]) -> str:
    """"i32" when every value an integer argument takes (over the task's size configurations) fits in 32
    bits, else "i64"."""
    values = list(values)
    if not values:
        raise ValueError("an integer argument needs at least one value to choose its width")
    return "i32" if all(_INT32_MIN <= int(v) <= _INT32_MAX for v in values) else "i64"


def signature_for(arguments: Sequence[Any]) -> List[str]:
    """The Triton signature of a launch's positional arguments, in order. Each argument is a tensor or
    workspace dtype (a kernelsmith.DType or its name: a pointer) or the integer values it takes over the
    task's size configurations (a list of ints, or one int: i32 or i64 by range)."""
    signature = []
    for argument in arguments:
        if isinstance(argument, bool):
            raise ValueError("a bool is not a kernel argument; pass an integer")
        if isinstance(argument, int):
            signature.append(integer_type([argument]))
        elif isinstance(argument, (list, tuple, range)):
            signature.append(integer_type(argument))
        else:
            signature.append(pointer_type(argument))
    return signature


#: Device attributes of an H100 SXM (the names of docs/candidate-format.md), for plans evaluated without a
#: device (grids and integer arguments such as ``SM_COUNT * WAVES``).
H100_ATTRIBUTES = {
    "SM_COUNT": 132, "WARP_SIZE": 32, "MAX_THREADS_PER_BLOCK": 1024, "SMEM_PER_BLOCK": 49152,
    "SMEM_PER_BLOCK_OPTIN": 232448, "L2_BYTES": 52428800, "COMPUTE_CAPABILITY": 90,
}


def attributes_device(attributes: Optional[Dict[str, int]] = None) -> Any:
    """A kernelsmith.DeviceInfo whose attributes (the names of docs/candidate-format.md) are
    ``attributes`` (default :data:`H100_ATTRIBUTES`): a device for plans evaluated without one."""
    import kernelsmith  # the compiled extension; this module stays importable without it

    values = dict(H100_ATTRIBUTES if attributes is None else attributes)
    device = kernelsmith.DeviceInfo()
    device.backend = "cuda"
    device.name = "device attributes"
    device.compute_units = values["SM_COUNT"]
    device.warp_size = values["WARP_SIZE"]
    device.max_threads_per_block = values["MAX_THREADS_PER_BLOCK"]
    device.shared_per_block = values["SMEM_PER_BLOCK"]
    device.shared_per_block_optin = values["SMEM_PER_BLOCK_OPTIN"]
    device.l2_bytes = values["L2_BYTES"]
    capability = values.get("COMPUTE_CAPABILITY", 0)
    device.architecture = f"sm_{capability}" if capability > 0 else ""
    return device


def compile_requests(task: Any, source: str, target: str = "sm_90",
                     attributes: Optional[Dict[str, int]] = None) -> List[Dict[str, Any]]:
    """The compile requests a Triton candidate's plan needs for a task (a kernelsmith.Task), exactly the
    specializations the evaluator compiles (kernelsmith.triton_kernel_specs, docs/triton.md): one per
    distinct kernel, constexprs, warps, stages and argument types over the task's size configurations,
    with the plan's expressions evaluated on a device of ``attributes`` (default
    :data:`H100_ATTRIBUTES`). Each request also carries ``"name"`` (the specialization) and ``"configs"``
    (the size configurations it serves); the helper ignores both. Raises kernelsmith's PlanError or
    ValidationError."""
    import kernelsmith

    requests = []
    for spec in kernelsmith.triton_kernel_specs(task, source, attributes_device(attributes)):
        requests.append({
            "source": source, "kernel": spec.kernel, "signature": list(spec.signature),
            "constexprs": dict(spec.constexprs), "num_warps": spec.num_warps, "num_stages": spec.num_stages,
            "target": target, "aligned": list(spec.aligned), "name": spec.name, "configs": list(spec.configs),
        })
    return requests


# ---------------------------------------------------------------------------------------------------------
# Compiling


#: The oldest triton whose launch ABI kernelsmith knows: the kernel's parameters are its non-constexpr
#: arguments, then SCRATCH_POINTERS device pointers (global scratch, then profile scratch).
MINIMUM_TRITON = (3, 4)
SCRATCH_POINTERS = 2


def _version_tuple(version: str) -> Tuple[int, ...]:
    parts = []
    for part in version.split("."):
        digits = re.match(r"\d+", part)
        if not digits:
            break
        parts.append(int(digits.group(0)))
    return tuple(parts)


def availability() -> Tuple[bool, str]:
    """(True, "triton 3.6.0") when a triton that kernelsmith can launch can be imported, else (False, why)."""
    try:
        import triton
    except Exception as error:  # ImportError, or a broken install
        return False, (f"the triton package is not importable ({type(error).__name__}: {error}); install it with "
                       "`pip install kernelsmith[triton]` (triton>=3.4)")
    if _version_tuple(triton.__version__) < MINIMUM_TRITON:
        return False, (f"triton {triton.__version__} is older than 3.4, whose launch ABI kernelsmith knows; "
                       "upgrade it with `pip install -U 'triton>=3.4'`")
    return True, f"triton {triton.__version__}"


def status() -> Dict[str, Any]:
    """The helper's answer to ``{"op": "status"}``: whether triton is usable, its version, or why not."""
    ok, text = availability()
    version = text.split(" ", 1)[1] if ok else ""
    return {"ok": True, "available": ok, "version": version, "reason": "" if ok else text}


class CompileError(Exception):
    """A candidate the helper could not compile: the stage (load, signature, compile, triton), what went
    wrong, and the candidate's line where it is known. (A plain class, not a dataclass: the helper runs this
    file as a script, under a module name dataclasses cannot look up.)"""

    def __init__(self, stage: str, message: str, line: Optional[int] = None):
        super().__init__(message)
        self.stage = stage
        self.message = message
        self.line = line

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line else self.message

    def to_json(self) -> Dict[str, Any]:
        return {"ok": False, "stage": self.stage, "line": self.line, "message": str(self)}


def _parse_target(target: str) -> int:
    match = re.fullmatch(r"(?:sm_|compute_)?(\d+)a?", str(target))
    if not match:
        raise CompileError("signature", f"target {target!r}: expected a compute capability such as \"sm_90\"")
    return int(match.group(1))


def _candidate_line(tb: Any, path: str) -> Optional[int]:
    line = None
    for frame, lineno in traceback.walk_tb(tb):
        if os.path.abspath(frame.f_code.co_filename) == path:
            line = lineno
    return line


class Compiler:
    """Loads candidates into private modules and compiles their kernels; one per helper process."""

    def __init__(self, workdir: Optional[str] = None):
        self.workdir = workdir or tempfile.mkdtemp(prefix="kernelsmith-triton-")
        self.modules: Dict[str, Any] = {}

    def load(self, source: str, filename: str) -> Tuple[Any, str]:
        key = hashlib.sha256(source.encode()).hexdigest()[:16]
        path = os.path.abspath(os.path.join(self.workdir, f"candidate_{key}.py"))
        if key in self.modules:
            return self.modules[key], path
        check_source(source, filename)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(source)
        spec = importlib.util.spec_from_file_location(f"kernelsmith_candidate_{key}", path)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as error:
            raise CompileError("load", f"{type(error).__name__}: {error}",
                               _candidate_line(error.__traceback__, path)) from None
        self.modules[key] = module
        return module, path

    def compile(self, request: Dict[str, Any]) -> Dict[str, Any]:
        usable, why = availability()
        if not usable:
            raise CompileError("triton", why)
        import triton
        from triton.backends.compiler import GPUTarget
        from triton.compiler.errors import CompilationError
        from triton.runtime.jit import JITFunction

        source = request["source"]
        filename = request.get("filename") or "candidate.py"
        if request.get("reverse_program_ids"):
            source = reverse_program_ids(source, filename)
        module, path = self.load(source, filename)
        name = request["kernel"]
        fn = getattr(module, name, None)
        if not isinstance(fn, JITFunction):
            kernels = sorted(k for k, v in vars(module).items() if isinstance(v, JITFunction))
            raise CompileError("signature", f"the launch names kernel {name}, but the file has no @triton.jit function "
                               f"of that name (it has: {', '.join(kernels) or 'none'})")
        runtime = [p for p in fn.params if not p.is_constexpr]
        constexpr = [p for p in fn.params if p.is_constexpr]
        types = list(request.get("signature") or [])
        if len(types) != len(runtime):
            raise CompileError("signature",
                               f"kernel {name} takes {len(runtime)} non-constexpr argument(s) "
                               f"({', '.join(p.name for p in runtime)}) but the launch passes {len(types)}",
                               _def_line(fn))
        given = dict(request.get("constexprs") or {})
        unknown = [k for k in given if k not in {p.name for p in constexpr}]
        if unknown:
            raise CompileError("signature",
                               f"kernel {name} has no tl.constexpr parameter {', '.join(unknown)} (its constexpr "
                               f"parameters: {', '.join(p.name for p in constexpr) or 'none'})",
                               _def_line(fn))
        constexprs: Dict[str, Any] = {}
        for param in constexpr:
            if param.name in given:
                constexprs[param.name] = given[param.name]
            elif param.has_default:
                constexprs[param.name] = param.default
            else:
                raise CompileError("signature", f"kernel {name} needs the tl.constexpr parameter {param.name}: pass "
                                   f"it by keyword in the launch ({param.name}=...)", _def_line(fn))
        signature = {}
        runtime_index = iter(types)
        for param in fn.params:
            signature[param.name] = "constexpr" if param.is_constexpr else next(runtime_index)
        attrs = {}
        for index in request.get("aligned") or []:
            # A pointer aligned to 16 bytes, or an integer that is a multiple of 16 (as triton's JIT
            # specializes them).
            if 0 <= index < len(runtime) and re.fullmatch(r"\*\w+|[iu](32|64)", str(types[index])):
                attrs[(runtime[index].num,)] = [["tt.divisibility", 16]]
        capability = _parse_target(request.get("target", "sm_90"))
        options = {"num_warps": int(request.get("num_warps", 4)), "num_stages": int(request.get("num_stages", 3))}

        src = triton.compiler.ASTSource(fn, signature=signature, constexprs=constexprs, attrs=attrs)
        log = io.StringIO()
        try:
            # ptxas's -v log (registers, spills) is printed when dump_ptxas_log is set; always compile, so
            # that the log is there (kernelsmith caches compiles itself).
            with _knob(triton.knobs.nvidia, "dump_ptxas_log", True), \
                    _knob(triton.knobs.compilation, "always_compile", True), contextlib.redirect_stdout(log):
                kernel = triton.compile(src, target=GPUTarget("cuda", capability, 32), options=options)
        except CompilationError as error:
            inner = _innermost(error)
            line = _error_line(inner, module) or _error_line(error, module)
            raise CompileError("compile", _compilation_message(inner), line) from None
        except Exception as error:
            message = f"{type(error).__name__}: {error}".strip()
            raise CompileError("compile", message, _candidate_line(error.__traceback__, path)) from None
        return _reply(kernel, log.getvalue(), triton.__version__, bool(request.get("want_ptx")))


@contextlib.contextmanager
def _knob(knobs: Any, name: str, value: Any):
    old = getattr(knobs, name)
    setattr(knobs, name, value)
    try:
        yield
    finally:
        setattr(knobs, name, old)


def _innermost(error: Any) -> Any:
    """Triton wraps a CompilationError once per call level; the innermost one says what went wrong."""
    from triton.compiler.errors import CompilationError

    inner = error
    while isinstance(inner.__cause__ or inner.__context__, CompilationError):
        inner = inner.__cause__ or inner.__context__
    return inner


def _compilation_message(error: Any) -> str:
    text = (error.error_message or "").strip() if getattr(error, "error_message", None) else ""
    if not text and error.__cause__ is not None:
        text = f"{type(error.__cause__).__name__}: {error.__cause__}".strip()
    return text or str(error)


def _def_line(fn: Any) -> Optional[int]:
    """The candidate's line of a @triton.jit function's `def`."""
    from triton.runtime.jit import get_jit_fn_file_line

    return get_jit_fn_file_line(fn)[1]


def _error_line(error: Any, module: Any) -> Optional[int]:
    """The candidate's line of a triton CompilationError: its node's line counts from the `def` line of
    the @triton.jit function whose source it carries."""
    from triton.runtime.jit import JITFunction

    node_line = getattr(getattr(error, "node", None), "lineno", None)
    if node_line is None:
        return None
    for value in vars(module).values():
        if isinstance(value, JITFunction) and value.src == error.src:
            return _def_line(value) + node_line - 1
    return None


def _ptx_param_count(ptx: str, name: str) -> Optional[int]:
    match = re.search(r"\.entry\s+" + re.escape(name) + r"\s*\((.*?)\)", ptx, re.S)
    if not match:
        return None
    return len(re.findall(r"\.param\s", match.group(1)))


def _reply(kernel: Any, ptxas_log: str, version: str, want_ptx: bool = False) -> Dict[str, Any]:
    metadata = kernel.metadata
    registers = re.search(r"Used (\d+) registers", ptxas_log)
    spills = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", ptxas_log)
    ptx = kernel.asm.get("ptx", "")
    reply = {
        "ok": True,
        "cubin": base64.b64encode(kernel.asm["cubin"]).decode("ascii"),
        "name": metadata.name,
        "num_warps": metadata.num_warps,
        "num_ctas": metadata.num_ctas,
        "shared": metadata.shared,
        "global_scratch_size": getattr(metadata, "global_scratch_size", 0),
        "global_scratch_align": getattr(metadata, "global_scratch_align", 1),
        "profile_scratch_size": getattr(metadata, "profile_scratch_size", 0),
        "profile_scratch_align": getattr(metadata, "profile_scratch_align", 1),
        "launch_pdl": bool(getattr(metadata, "launch_pdl", False)),
        "launch_cooperative_grid": bool(getattr(metadata, "launch_cooperative_grid", False)),
        "param_count": _ptx_param_count(ptx, metadata.name),
        "scratch_pointers": SCRATCH_POINTERS,
        "registers": int(registers.group(1)) if registers else None,
        "spills": (int(spills.group(1)) + int(spills.group(2))) if spills else None,
        "spill_store_bytes": int(spills.group(1)) if spills else None,
        "spill_load_bytes": int(spills.group(2)) if spills else None,
        "ptxas_log": ptxas_log.strip(),
        "triton_version": version,
    }
    if want_ptx:
        reply["ptx"] = ptx
    return reply


def handle(compiler: Compiler, request: Dict[str, Any]) -> Dict[str, Any]:
    """One request → one reply; every failure is a reply, never an exception."""
    try:
        reply = status() if request.get("op") == "status" else compiler.compile(request)
    except GateError as error:
        reply = error.to_json()
    except CompileError as error:
        reply = error.to_json()
    except Exception as error:  # a malformed request or a helper bug: still one reply
        reply = {"ok": False, "stage": "request", "line": None, "message": f"{type(error).__name__}: {error}"}
    if "id" in request:
        reply["id"] = request["id"]
    return reply


def serve(stdin: Any = None, stdout: Any = None, workdir: Optional[str] = None) -> int:
    """Reads JSON requests, one per line, until end of input; writes one JSON reply per line. Candidates
    are written to ``workdir`` (a fresh temporary folder when not given) to be imported."""
    compiler = Compiler(workdir)
    return _helper_io().serve_json_lines(functools.partial(handle, compiler), stdin, stdout)


def _helper_io() -> Any:
    """The helpers' shared request loop (_helper_io.py beside this file), loaded by path: the helper runs
    as a script with neither the package nor its folder on sys.path."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_helper_io.py")
    spec = importlib.util.spec_from_file_location("kernelsmith_helper_io", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: Optional[Sequence[str]] = None) -> int:
    return _helper_io().run_helper(lambda workdir: functools.partial(handle, Compiler(workdir)),
                                   "Compile Triton candidates: JSON requests on stdin, one per line.", argv)


if __name__ == "__main__":
    sys.exit(main())
