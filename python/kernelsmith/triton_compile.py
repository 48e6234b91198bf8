"""Ahead-of-time compilation of Triton candidates, in a helper process (docs/triton.md).

A Triton candidate is one Python file of ``@triton.jit`` functions whose launch plan is in ``# @``
comment lines. Before the file is executed, :func:`check_source` (the gate) refuses anything but imports
of triton, triton.language and math, ``@triton.jit`` functions and constexpr globals at the top level, and
any name in a kernel that is not its own or in the allowlist (:data:`ALLOWLIST`). The file is then
executed and compiled only here, in ``python -m kernelsmith.triton_compile``, never in the caller's
process: the helper reads one JSON request per line on stdin and writes one JSON reply per line on
stdout, and serves any number of requests, each in a child forked from it (:func:`run_isolated`).

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
import json
import os
import re
import select
import shutil
import signal
import struct
import sys
import tempfile
import time
import traceback
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

# ---------------------------------------------------------------------------------------------------------
# The allowlist: everything a candidate may name, in one place (docs/triton.md lists it too)


def _words(text: str) -> Tuple[str, ...]:
    return tuple(text.split())


#: triton.language functions a kernel may call: the documented public API of triton.language
#: (programming model, creation, shape, linear algebra, memory, indexing, math, reductions, scans and
#: sorts, atomics, random numbers, iterators, inline assembly, compiler hints, assertions). Left out:
#: static_print and device_print (a compile-time print lands in the ptxas log the reply is read from),
#: extern_elementwise (links a bitcode file named by path), and every internal module (core, semantic,
#: standard, target_info, ...).
TL_FUNCTIONS = _words("""
    program_id num_programs
    arange cat full zeros zeros_like cast
    broadcast broadcast_to expand_dims interleave join permute ravel reshape split trans view
    dot dot_scaled
    load store make_block_ptr advance make_tensor_descriptor load_tensor_descriptor store_tensor_descriptor
    flip where swizzle2d gather
    abs cdiv ceil clamp cos div_rn erf exp exp2 fdiv floor fma log log2 maximum minimum rsqrt sigmoid sin
    softmax sqrt sqrt_rn umulhi add sub mul
    argmax argmin max min reduce reduce_or sum xor_sum
    associative_scan cumprod cumsum histogram sort topk bitonic_merge
    atomic_add atomic_and atomic_cas atomic_max atomic_min atomic_or atomic_xchg atomic_xor
    rand randn randint randint4x rand4x randn4x philox pair_uniform_to_normal uint_to_uniform_float
    range static_range
    inline_asm_elementwise map_elementwise
    assume debug_barrier max_constancy max_contiguous multiple_of
    static_assert device_assert
""")
#: triton.language types and dtypes: annotations (``BLOCK: tl.constexpr``), casts (``x.to(tl.float16)``)
#: and the attributes of :data:`VALUE_ATTRIBUTES` (``tl.float32.primitive_bitwidth``).
TL_TYPES = _words("""
    constexpr const dtype pointer_type block_type tensor tensor_descriptor tuple void
    int1 int8 int16 int32 int64 uint8 uint16 uint32 uint64
    float16 bfloat16 float32 float64 float8e4b15 float8e4nv float8e4b8 float8e5 float8e5b16
""")
#: triton.language constants.
TL_CONSTANTS = _words("TRITON_MAX_TENSOR_NUMEL PropagateNan.ALL PropagateNan.NONE")
#: triton.language.math functions (tl.math.exp, ...).
TL_MATH_FUNCTIONS = _words("abs ceil cos div_rn erf exp exp2 fdiv floor fma log log2 rsqrt sin sqrt sqrt_rn umulhi")
#: libdevice's functions (tl.extra.cuda.libdevice.tanh, or ``from triton.language.extra import libdevice``).
LIBDEVICE_FUNCTIONS = _words("""
    abs acos acosh add_rd add_rn add_ru add_rz asin asinh atan atan2 atanh brev byte_perm cbrt ceil clz
    copysign cos cosh cospi cyl_bessel_i0 cyl_bessel_i1 div_rd div_rn div_ru div_rz double2float_rd
    double2float_rn double2float_ru double2float_rz double2hiint double2int_rd double2int_rn double2int_ru
    double2int_rz double2ll_rd double2ll_rn double2ll_ru double2ll_rz double2loint double2uint_rd
    double2uint_rn double2uint_ru double2uint_rz double2ull_rd double2ull_rn double2ull_ru double2ull_rz
    double_as_longlong erf erfc erfcinv erfcx erfinv exp exp10 exp2 expm1 fast_cosf fast_dividef fast_exp10f
    fast_expf fast_log10f fast_log2f fast_logf fast_powf fast_sinf fast_tanf fdim ffs finitef float2int_rd
    float2int_rn float2int_ru float2int_rz float2ll_rd float2ll_rn float2ll_ru float2ll_rz float2uint_rd
    float2uint_rn float2uint_ru float2uint_rz float2ull_rd float2ull_rn float2ull_ru float2ull_rz
    float_as_int float_as_uint floor fma fma_rd fma_rn fma_ru fma_rz fmod hadd hiloint2double hypot ilogb
    int2double_rn int2float_rd int2float_rn int2float_ru int2float_rz int_as_float isfinited isinf isnan j0
    j1 jn ldexp lgamma ll2double_rd ll2double_rn ll2double_ru ll2double_rz ll2float_rd ll2float_rn
    ll2float_ru ll2float_rz llrint llround log log10 log1p log2 logb longlong_as_double mul24 mul_rd mul_rn
    mul_ru mul_rz mulhi nearbyint nextafter norm3d norm4d normcdf normcdfinv popc pow rcbrt rcp64h rcp_rd
    rcp_rn rcp_ru rcp_rz remainder rhadd rhypot rint rnorm3d rnorm4d round rsqrt rsqrt_rn sad saturatef
    scalbn signbit sin sinh sinpi sqrt sqrt_rd sqrt_rn sqrt_ru sqrt_rz sub_rd sub_rn sub_ru sub_rz tan tanh
    tgamma trunc uint2double_rn uint2float_rd uint2float_rn uint2float_ru uint2float_rz uint_as_float
    ull2double_rd ull2double_rn ull2double_ru ull2double_rz ull2float_rd ull2float_rn ull2float_ru
    ull2float_rz y0 y1 yn
""")
#: Python's math module: pure functions of numbers and constants, for constexpr arithmetic.
MATH_FUNCTIONS = _words("sqrt log log2 log10 exp ceil floor")
MATH_CONSTANTS = _words("pi e tau inf nan")
#: The folders of names (import targets and the left of a dotted name); none is a value a kernel may hold.
NAMESPACES = (
    "triton", "triton.language", "triton.language.math", "triton.language.extra", "triton.language.extra.cuda",
    "triton.language.extra.cuda.libdevice", "triton.language.extra.libdevice", "math",
)
#: Attributes a kernel may read from a value (a tensor, a dtype, a constexpr, a tuple, a tensor
#: descriptor, a block pointer) or from a type of TL_TYPES: tensor methods and properties, dtype
#: queries. Not the IR handles (``handle``, ``to_ir``), nothing of a function or a module.
VALUE_ATTRIBUTES = frozenset(_words("""
    T dtype shape type numel value values
    to cast reshape view trans permute broadcast_to expand_dims ravel split flip gather
    sum max min argmax argmin reduce reduce_or xor_sum cumsum cumprod associative_scan sort histogram
    abs exp exp2 log log2 cos sin sqrt sqrt_rn rsqrt sigmoid softmax erf floor ceil cdiv item
    logical_and logical_or advance load store scatter block_shape block_type
    atomic_add atomic_and atomic_cas atomic_max atomic_min atomic_or atomic_xchg atomic_xor
    element_ty primitive_bitwidth int_bitwidth fp_mantissa_width exponent_bias itemsize nbytes name scalar
    get_int_max_value get_int_min_value
    is_floating is_standard_floating is_int is_int_signed is_int_unsigned is_bool is_ptr is_block is_void
    is_const is_fp8 is_fp8e4nv is_fp8e4b8 is_fp8e4b15 is_fp8e5 is_fp8e5b16 is_fp16 is_bf16 is_fp32 is_fp64
    is_int1 is_int8 is_int16 is_int32 is_int64 is_uint8 is_uint16 is_uint32 is_uint64
"""))
#: Python built-ins a kernel may call (those triton's code generator knows, but getattr, hasattr, print
#: and list).
KERNEL_BUILTINS = frozenset(_words("range min max len float int isinstance"))

_FUNCTION, _TYPE, _CONSTANT, _DECORATOR = "function", "type", "constant", "decorator"


def _allowlist() -> Dict[str, str]:
    names: Dict[str, str] = {"triton.jit": _DECORATOR}
    for prefix, functions in (("triton.language.", TL_FUNCTIONS), ("triton.language.math.", TL_MATH_FUNCTIONS),
                              ("triton.language.extra.cuda.libdevice.", LIBDEVICE_FUNCTIONS),
                              ("triton.language.extra.libdevice.", LIBDEVICE_FUNCTIONS)):
        names.update((prefix + name, _FUNCTION) for name in functions)
    names.update(("triton.language." + name, _TYPE) for name in TL_TYPES)
    names.update(("triton.language." + name, _CONSTANT) for name in TL_CONSTANTS)
    names.update(("math." + name, _FUNCTION) for name in MATH_FUNCTIONS)
    names.update(("math." + name, _CONSTANT) for name in MATH_CONSTANTS)
    return names


#: Every dotted name a candidate may name, by full name ("triton.language.load") -> its kind: a function
#: (called, or passed to one), a type (also annotations and VALUE_ATTRIBUTES), a constant, or the
#: decorator triton.jit.
ALLOWLIST: Dict[str, str] = _allowlist()

#: Kept for callers of the old gate: the modules a candidate may import by ``import``.
ALLOWED_MODULES = NAMESPACES
ALLOWED_SUMMARY = (
    "a Triton candidate may import only triton, triton.language (and its math and libdevice) and math, holds "
    "at the top level only those imports, @triton.jit functions and constexpr globals (NAME = tl.constexpr(4)), "
    "and names in its kernels only its own variables, kernels and globals and the triton.language functions, "
    "types and attributes of the allowlist (docs/triton.md, \"The gate\")"
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


# What an expression in a kernel is, to the gate: a namespace (only ever the left of a dotted name), an
# allowlisted name (with its kind), one of the file's kernels, a built-in, or a value (a tensor, a number,
# a dtype: what locals, globals and results of calls hold).
_NAMESPACE, _ENTRY, _KERNEL, _BUILTIN, _VALUE = "namespace", "entry", "kernel", "builtin", "value"

#: Expressions a kernel may contain beyond names, attributes, calls and subscripts; their parts are checked.
_PLAIN_EXPRESSIONS = (ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Tuple, ast.List, ast.Slice,
                      ast.JoinedStr, ast.FormattedValue)
_OPERATORS = (ast.operator, ast.unaryop, ast.boolop, ast.cmpop, ast.expr_context)
#: Statements a kernel may contain (Python's others: nested functions, classes, lambdas, imports, global,
#: with, try, del, ... are refused).
_STATEMENTS = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return, ast.If, ast.For, ast.While,
               ast.Break, ast.Continue, ast.Pass, ast.Assert)
_STRING_ANNOTATION = re.compile(r"[A-Za-z_][\w.]*|\*?[a-z]+\d*")


class _Gate:
    def __init__(self, source: str):
        self.source = source
        # Names the file's imports bind: "tl" -> "triton.language" (a namespace) or "load" ->
        # "triton.language.load" (an allowlisted name).
        self.aliases: Dict[str, str] = {}
        self.kernels: set = set()
        self.globals: set = set()
        self.locals: set = set()  # the variables and parameters of the kernel being checked
        self.where = ""  # " (in kernel k)" while a kernel is checked

    def refuse(self, node: ast.AST, what: str) -> None:
        raise GateError(getattr(node, "lineno", None), what + self.where)

    def snippet(self, node: ast.AST) -> str:
        return _snippet(node, self.source)

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

    # --- the top level ---------------------------------------------------------------------------------

    def check_module(self, tree: ast.Module) -> None:
        # Every name the top level binds, first, so that a kernel may call one defined below it.
        for statement in tree.body:
            if isinstance(statement, ast.FunctionDef):
                self.kernels.add(statement.name)
            elif isinstance(statement, ast.Assign) and len(statement.targets) == 1 and \
                    isinstance(statement.targets[0], ast.Name):
                self.globals.add(statement.targets[0].id)
        functions = []
        for index, statement in enumerate(tree.body):
            if isinstance(statement, ast.Import):
                self.check_import(statement)
            elif isinstance(statement, ast.ImportFrom):
                self.check_import_from(statement)
            elif isinstance(statement, ast.FunctionDef):
                functions.append(statement)
            elif isinstance(statement, ast.AnnAssign):
                self.refuse(statement, f"the annotated global `{self.snippet(statement)}` is not "
                            "readable from a kernel; write NAME = tl.constexpr(value)")
            elif isinstance(statement, ast.Assign):
                self.check_global(statement)
            elif (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) and
                  isinstance(statement.value.value, str) and index == 0):
                continue  # the module's docstring
            elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
                self.refuse(statement, f"the top-level call `{self.snippet(statement)}` is not allowed")
            else:
                kind = {
                    ast.ClassDef: "a class", ast.AsyncFunctionDef: "an async function", ast.If: "an if statement",
                    ast.For: "a for loop", ast.While: "a while loop", ast.With: "a with statement",
                    ast.Try: "a try statement", ast.Expr: "an expression statement", ast.Delete: "del",
                    ast.Global: "global", ast.AugAssign: "an augmented assignment",
                }.get(type(statement), f"a {type(statement).__name__} statement")
                self.refuse(statement, f"{kind} (`{self.snippet(statement)}`) is not allowed at the top level")
        self.check_bindings(tree)
        for function in functions:
            self.check_function(function)

    def check_bindings(self, tree: ast.Module) -> None:
        """A name the top level binds twice (an import's name reused by a kernel or a global, two kernels
        or globals of one name) could make a name mean something the gate did not check."""
        seen = set(self.aliases)
        for statement in tree.body:
            if isinstance(statement, (ast.Import, ast.ImportFrom)):
                names = [alias.asname or alias.name.split(".")[0] for alias in statement.names]
            elif isinstance(statement, ast.FunctionDef):
                names = [statement.name]
            elif isinstance(statement, ast.Assign):
                names = [statement.targets[0].id]
            else:
                continue
            for name in names:
                # A module's __builtins__, __getattr__, __loader__, __file__ ... are read by Python and triton.
                if name.startswith("__"):
                    self.refuse(statement, f"the top-level name `{name}` is not allowed (names starting with __ "
                                "are Python's own)")
                if name in seen and not isinstance(statement, (ast.Import, ast.ImportFrom)):
                    self.refuse(statement, f"`{name}` is bound twice at the top level; give each its own name")
                seen.add(name)

    def bind_import(self, statement: ast.AST, name: str, full: str) -> None:
        if name in self.aliases and self.aliases[name] != full:
            self.refuse(statement, f"`{name}` is bound twice at the top level ({self.aliases[name]}, then "
                        f"{full}); give each its own name")
        self.aliases[name] = full

    def check_import(self, statement: ast.Import) -> None:
        for alias in statement.names:
            if alias.name not in NAMESPACES:
                self.refuse(statement, f"`import {alias.name}` is not allowed (modules: {', '.join(NAMESPACES)})")
            if alias.asname:
                self.bind_import(statement, alias.asname, alias.name)
            else:
                head = alias.name.split(".")[0]
                self.bind_import(statement, head, head)

    def check_import_from(self, statement: ast.ImportFrom) -> None:
        module = statement.module or ""
        names = ", ".join(a.name for a in statement.names)
        if statement.level != 0 or module not in NAMESPACES:
            self.refuse(statement, f"`from {'.' * statement.level}{module} import {names}` is not allowed")
        for alias in statement.names:
            if alias.name == "*":
                self.refuse(statement, f"`from {module} import *` is not allowed; import names one by one")
            full = f"{module}.{alias.name}"
            if full not in NAMESPACES and full not in ALLOWLIST:
                self.refuse(statement, f"`from {module} import {alias.name}` is not allowed: {full} is not in the "
                            "allowlist")
            self.bind_import(statement, alias.asname or alias.name, full)

    def check_constant(self, node: ast.AST, role: str) -> None:
        """Literals and arithmetic over literals (what is evaluated when the file is executed)."""
        for child in ast.walk(node):
            if not isinstance(child, (ast.Constant, ast.UnaryOp, ast.BinOp, ast.unaryop, ast.operator,
                                      ast.Tuple, ast.expr_context)):
                self.refuse(node, f"{role} `{self.snippet(node)}` must be a literal "
                            "(numbers, strings, True/False/None and arithmetic over them)")

    def check_global(self, statement: ast.Assign) -> None:
        targets = statement.targets
        if len(targets) != 1 or not isinstance(targets[0], ast.Name):
            self.refuse(statement, f"the assignment `{self.snippet(statement)}` must bind one name")
        value = statement.value
        if isinstance(value, ast.Call):
            if self.resolve(value.func) != "triton.language.constexpr" or value.keywords or len(value.args) != 1:
                self.refuse(statement, f"the top-level call `{self.snippet(value)}` is not allowed "
                            "(a global's value is a literal or tl.constexpr(literal))")
            value = value.args[0]
        self.check_constant(value, f"the value of {targets[0].id}")

    def check_annotation(self, node: Optional[ast.AST]) -> None:
        """Python evaluates an annotation when the file is executed: an allowlisted type (tl.constexpr,
        tl.float32) or a string that names one."""
        if node is None:
            return
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if not _STRING_ANNOTATION.fullmatch(node.value):
                self.refuse(node, f"the annotation {node.value!r} must name a type such as tl.constexpr")
            return
        kind = self.kind_of_dotted(node)
        if kind is None or kind[0] != _ENTRY or ALLOWLIST[kind[1]] != _TYPE:
            self.refuse(node, f"the annotation `{self.snippet(node)}` must be a type of triton.language such as "
                        "tl.constexpr")

    # --- kernels ---------------------------------------------------------------------------------------

    def is_jit(self, decorator: ast.AST) -> bool:
        return self.kind_of_dotted(decorator) == (_ENTRY, "triton.jit")

    def kind_of_dotted(self, node: ast.AST) -> Optional[Tuple[str, str]]:
        """(namespace or entry, full name) for a dotted name on an import alias, else None; no refusal."""
        full = self.resolve(node)
        if full is None or _dotted(node).split(".")[0] not in self.aliases:
            return None
        if full in NAMESPACES:
            return _NAMESPACE, full
        if full in ALLOWLIST:
            return _ENTRY, full
        return None

    def check_function(self, function: ast.FunctionDef) -> None:
        if not function.decorator_list or not all(self.is_jit(d) for d in function.decorator_list):
            self.refuse(function, f"the function {function.name} must be decorated with @triton.jit (and nothing "
                        "else): plain Python functions would run on the host")
        arguments = function.args
        if arguments.vararg or arguments.kwarg:
            self.refuse(function, f"the function {function.name} may not take *args or **kwargs")
        parameters = arguments.posonlyargs + arguments.args + arguments.kwonlyargs
        for argument in parameters:
            self.check_annotation(argument.annotation)
        for default in arguments.defaults + [d for d in arguments.kw_defaults if d is not None]:
            self.check_constant(default, "the default value")
        self.check_annotation(function.returns)

        self.where = f" (in kernel {function.name})"
        self.locals = {argument.arg for argument in parameters}
        for node in ast.walk(function):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                self.locals.add(node.id)
        for name in sorted(self.locals):
            if name in self.aliases:
                line = next((a.lineno for a in parameters if a.arg == name), function.lineno)
                for node in ast.walk(function):
                    if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
                        line = node.lineno
                        break
                raise GateError(line, f"the variable `{name}` hides the import of {self.aliases[name]}"
                                f"{self.where}; give it another name")
        for statement in function.body:
            self.check_statement(statement)
        self.where = ""

    def check_statement(self, node: ast.stmt) -> None:
        if not isinstance(node, _STATEMENTS):
            kind = {
                ast.FunctionDef: "a nested function", ast.AsyncFunctionDef: "a nested function",
                ast.ClassDef: "a class", ast.Import: "an import", ast.ImportFrom: "an import",
                ast.Global: "`global`", ast.Nonlocal: "`nonlocal`", ast.With: "a with statement",
                ast.Try: "a try statement", ast.Raise: "raise", ast.Delete: "del",
            }.get(type(node), f"a {type(node).__name__} statement")
            self.refuse(node, f"{kind} (`{self.snippet(node)}`) is not allowed in a kernel")
        if isinstance(node, ast.Assign):
            for target in node.targets:
                self.check_target(target)
            self.check_value(node.value)
        elif isinstance(node, ast.AugAssign):
            self.check_target(node.target)
            self.check_value(node.value)
        elif isinstance(node, ast.AnnAssign):
            self.check_target(node.target)
            self.check_annotation(node.annotation)
            if node.value is not None:
                self.check_value(node.value)
        elif isinstance(node, ast.Expr):
            if not (isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
                self.check_value(node.value)
        elif isinstance(node, ast.Return):
            if node.value is not None:
                self.check_value(node.value)
        elif isinstance(node, ast.Assert):
            self.check_value(node.test)
            if node.msg is not None:
                self.check_value(node.msg)
        elif isinstance(node, (ast.If, ast.While)):
            self.check_value(node.test)
        elif isinstance(node, ast.For):
            self.check_target(node.target)
            self.check_value(node.iter)
        for block in (getattr(node, "body", []), getattr(node, "orelse", [])):
            for statement in block:
                self.check_statement(statement)

    def check_target(self, node: ast.AST) -> None:
        """What a kernel assigns to: its own variables, or tuples of them (never an attribute or an item:
        that would change an object triton or the file shares)."""
        if isinstance(node, ast.Name):
            return
        if isinstance(node, (ast.Tuple, ast.List)):
            for element in node.elts:
                self.check_target(element)
            return
        self.refuse(node, f"assigning to `{self.snippet(node)}` is not allowed: assign to a variable")

    def check_value(self, node: ast.AST) -> None:
        """An expression whose result a kernel keeps, passes or returns: never a namespace, a built-in or
        an allowlisted function (those are only called); a kernel may be passed to a call."""
        kind, name = self.check_expression(node)
        if kind == _NAMESPACE:
            self.refuse(node, f"`{self.snippet(node)}` is the module {name}: a kernel may only name its allowlisted "
                        "functions, types and constants (tl.load, tl.float32, ...)")
        if kind in (_BUILTIN, _KERNEL) or (kind == _ENTRY and ALLOWLIST[name] in (_FUNCTION, _DECORATOR)):
            self.refuse(node, f"`{self.snippet(node)}` may only be called (or passed to a call), not kept")

    def check_argument(self, node: ast.AST) -> None:
        kind, name = self.check_expression(node)
        if kind in (_NAMESPACE, _BUILTIN) or (kind == _ENTRY and ALLOWLIST[name] == _DECORATOR):
            self.refuse(node, f"`{self.snippet(node)}` may not be passed to a function" + (
                f" (it is the module {name})" if kind == _NAMESPACE else ""))

    def check_expression(self, node: ast.AST) -> Tuple[str, str]:
        if isinstance(node, ast.Constant):
            return _VALUE, ""
        if isinstance(node, ast.Name):
            return self.check_name(node)
        if isinstance(node, ast.Attribute):
            return self.check_attribute(node)
        if isinstance(node, ast.Call):
            kind, name = self.check_expression(node.func)
            if kind == _NAMESPACE or (kind == _ENTRY and ALLOWLIST[name] in (_CONSTANT, _DECORATOR)):
                self.refuse(node, f"`{self.snippet(node.func)}` cannot be called in a kernel")
            for argument in node.args:
                if isinstance(argument, ast.Starred):
                    self.refuse(argument, f"the starred argument `{self.snippet(argument)}` is not allowed")
                self.check_argument(argument)
            for keyword in node.keywords:
                if keyword.arg is None:
                    self.refuse(keyword.value, f"`**{self.snippet(keyword.value)}` is not allowed; pass keywords "
                                "by name")
                self.check_argument(keyword.value)
            return _VALUE, ""
        if isinstance(node, ast.Subscript):
            self.check_value(node.value)
            self.check_value(node.slice)
            return _VALUE, ""
        if isinstance(node, _PLAIN_EXPRESSIONS):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    self.check_value(child)
                elif not isinstance(child, _OPERATORS):
                    self.refuse(node, f"`{self.snippet(node)}` is not allowed in a kernel")
            return _VALUE, ""
        what = {
            ast.Lambda: "a lambda", ast.NamedExpr: "an assignment expression (:=)", ast.ListComp: "a comprehension",
            ast.SetComp: "a comprehension", ast.DictComp: "a comprehension", ast.GeneratorExp: "a generator",
            ast.Dict: "a dict", ast.Set: "a set", ast.Starred: "a starred expression", ast.Await: "await",
            ast.Yield: "yield", ast.YieldFrom: "yield",
        }.get(type(node), f"a {type(node).__name__} expression")
        self.refuse(node, f"{what} (`{self.snippet(node)}`) is not allowed in a kernel")
        raise AssertionError  # refuse raises

    def check_name(self, node: ast.Name) -> Tuple[str, str]:
        name = node.id
        if name in self.locals or name in self.globals:
            return _VALUE, ""
        if name in self.aliases:
            full = self.aliases[name]
            return (_NAMESPACE if full in NAMESPACES else _ENTRY), full
        if name in self.kernels:
            return _KERNEL, name
        if name in KERNEL_BUILTINS:
            return _BUILTIN, name
        self.refuse(node, f"the name `{name}` is not allowed in a kernel: it is not a variable, parameter, kernel "
                    "or global of the file, an allowlisted import or one of the built-ins "
                    f"{', '.join(sorted(KERNEL_BUILTINS))}")
        raise AssertionError  # refuse raises

    def check_attribute(self, node: ast.Attribute) -> Tuple[str, str]:
        kind, name = self.check_expression(node.value)
        if kind == _NAMESPACE:
            full = f"{name}.{node.attr}"
            if full in NAMESPACES:
                return _NAMESPACE, full
            if full in ALLOWLIST and ALLOWLIST[full] != _DECORATOR:
                return _ENTRY, full
            # An allowlisted constant under a name such as PropagateNan.ALL.
            if any(entry.startswith(full + ".") for entry in ALLOWLIST):
                return _NAMESPACE, full
            self.refuse(node, f"`{self.snippet(node)}` names {full}, which is not in the allowlist of what a kernel "
                        "may name")
        if node.attr.startswith("_"):
            self.refuse(node, f"the attribute .{node.attr} is not allowed")
        if (kind == _VALUE or (kind == _ENTRY and ALLOWLIST[name] == _TYPE)) and node.attr in VALUE_ATTRIBUTES:
            return _VALUE, ""
        if kind == _VALUE or (kind == _ENTRY and ALLOWLIST[name] == _TYPE):
            self.refuse(node, f"the attribute .{node.attr} (`{self.snippet(node)}`) is not one a kernel may read "
                        "(tensor and dtype methods and properties such as .to, .dtype, .shape; docs/triton.md)")
        self.refuse(node, f"`{self.snippet(node)}`: a {kind if kind != _ENTRY else ALLOWLIST[name]} has no "
                    "attribute a kernel may read")
        raise AssertionError  # refuse raises


def check_source(source: str, filename: str = "<candidate>") -> ast.Module:
    """The gate: parses the candidate and refuses, with :class:`GateError` naming the line and the name,
    anything but imports of the allowlisted modules, @triton.jit functions and constexpr globals at its
    top level, and kernel bodies that name anything but their own variables, the file's kernels and
    globals, the allowlisted triton.language functions, types and constants (:data:`ALLOWLIST`) and the
    value attributes of :data:`VALUE_ATTRIBUTES`. Nothing is executed. Returns the parsed module."""
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
        reply = CompileError("request", f"{type(error).__name__}: {error}").to_json()
    if "id" in request:
        reply["id"] = request["id"]
    return reply


# ---------------------------------------------------------------------------------------------------------
# One request, one process
#
# A compile request executes the candidate's file and triton's front end on it, so a request that got
# past the gate could change the helper's modules, files or processes. The helper therefore imports
# triton once and answers each request in a child forked from that pristine process (a zygote): the
# child works in a fresh folder inside the helper's own, which is removed afterwards; its reply comes
# back through a pipe, and the parent, which no request runs in, writes it to the socket; the child's
# process group (and any process it left to the helper) is killed before the next request.

#: The environment variables through which triton and the tools it runs (ptxas) choose where they write:
#: each points into the request's folder in the child.
WRITE_PATH_VARIABLES = ("TRITON_CACHE_DIR", "TRITON_HOME", "TRITON_DUMP_DIR", "TRITON_OVERRIDE_DIR", "TMPDIR",
                        "HOME")
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
_PR_SET_CHILD_SUBREAPER = 36
_LENGTH = struct.Struct("<Q")


@functools.lru_cache(maxsize=None)
def _libc() -> Any:
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


#: This process's children when it became a subreaper (None: it is not one); run_isolated kills every
#: other child it finds after a request.
_children_before_subreaper: Optional[frozenset] = None


def become_subreaper() -> bool:
    """Makes this process the parent of every orphan among its descendants (Linux), so that a process a
    request started and detached (setsid, double fork) is still found and killed after the request: from
    now on, :func:`run_isolated` kills every child of this process but those it has now (a helper has
    none; start no other child process while a request runs). False where the system refuses."""
    global _children_before_subreaper
    try:
        if _libc().prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            return False
    except (OSError, AttributeError):
        return False
    _children_before_subreaper = frozenset(_children())
    return True


def _children() -> set:
    """This process's child processes (from /proc: /proc/PID/task/*/children needs a kernel option that
    is not always on)."""
    me = os.getpid()
    children = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue  # ended meanwhile
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses; it ends at the last ')'.
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1 and int(fields[1]) == me:
            children.add(int(entry))
    return children


def _kill_leftovers(pid: int) -> None:
    """Kills the request's process group and reaps its first process; in a subreaper, then kills and reaps
    every new child of this process (orphans of the request, also those that left its group)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
    before = _children_before_subreaper
    if before is None:
        return  # orphans go to init: only the group can be reached
    for _ in range(100):  # each round kills what the last one orphaned; killed processes start nothing
        left = _children() - before
        if not left:
            return
        for child in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(child, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)
        for child in left:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(child, 0)


def _enter_request(folder: str, reply_fd: int, parent: int) -> None:
    """The child's setup: its own process group, death with the helper, nothing of the helper's input
    or reply socket (stdin is /dev/null, stdout goes to the helper's log on stderr), no other inherited
    file, and every place triton, ptxas and tempfile write inside ``folder``, which is also the working
    directory."""
    os.setpgid(0, 0)
    with contextlib.suppress(OSError, AttributeError):
        _libc().prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)  # the helper died before the request took effect
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    os.close(null)
    os.closerange(3, reply_fd)
    os.closerange(reply_fd + 1, 1 << 16)
    for variable in WRITE_PATH_VARIABLES:
        os.environ[variable] = folder
    tempfile.tempdir = folder
    os.chdir(folder)


#: The largest reply a request may send (a reply with PTX is a few megabytes).
MAX_REPLY_BYTES = 256 << 20


def _whole(data: bytearray) -> Optional[bytes]:
    """The framed reply (length, then JSON) once ``data`` holds all of it."""
    if len(data) < _LENGTH.size:
        return None
    size = _LENGTH.unpack_from(data)[0]
    if size > MAX_REPLY_BYTES:
        return json.dumps(CompileError("request", f"the request's reply is {size} bytes, more than "
                                               f"{MAX_REPLY_BYTES}").to_json()).encode()
    return bytes(data[_LENGTH.size:_LENGTH.size + size]) if len(data) >= _LENGTH.size + size else None


def _read_reply(fd: int, pid: int) -> Tuple[Optional[bytes], str]:
    """The child's reply, read until it is whole, or None and how the child ended when it ended (or
    closed the pipe) first. Waits on the child too: a process it left behind may hold the pipe open."""
    data = bytearray()
    while True:
        reply = _whole(data)
        if reply is not None:
            return reply, ""
        if select.select([fd], [], [], 0.05)[0]:
            chunk = os.read(fd, 1 << 20)
            if chunk:
                data += chunk
                continue
            # The pipe's end: the child ended, or closed it; a moment to tell which.
            for _ in range(20):
                ended = _ended(pid)
                if ended is not None:
                    return None, _how(ended)
                time.sleep(0.01)
            return None, "it closed its pipe"
        ended = _ended(pid)
        if ended is not None:
            # What it wrote before it ended is in the pipe (a process it left may still add to it).
            while _whole(data) is None and len(data) <= MAX_REPLY_BYTES and select.select([fd], [], [], 0)[0]:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                data += chunk
            reply = _whole(data)
            return (reply, "") if reply is not None else (None, _how(ended))


def _ended(pid: int) -> Any:
    """How the child ended, or None while it runs. WNOWAIT: it stays unreaped, so that its process group
    id cannot be reused before the group is killed."""
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)


def _how(ended: Any) -> str:
    if ended.si_code in (os.CLD_KILLED, os.CLD_DUMPED):
        return f"it was killed by signal {ended.si_status}"
    return f"it exited with status {ended.si_status}"


def run_isolated(handler: Callable[[Dict[str, Any], str], Dict[str, Any]], request: Dict[str, Any],
                 workdir: str) -> Dict[str, Any]:
    """``handler(request, folder)`` run in a child forked from this process, in a fresh ``folder`` inside
    ``workdir`` (its working directory and every place triton writes: WRITE_PATH_VARIABLES), removed
    afterwards; returns the reply it sent through a pipe. Whatever the handler does to its process (its
    modules, its environment, its files) ends with the child, and the processes it started are killed
    before this returns. A child that ends without a reply gives a failure reply saying how it ended."""
    folder = tempfile.mkdtemp(prefix="request-", dir=workdir)
    read_fd, write_fd = os.pipe()
    parent = os.getpid()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_fd)
        os.close(write_fd)
        shutil.rmtree(folder, ignore_errors=True)
        raise
    if pid == 0:  # the child: never returns
        try:
            os.close(read_fd)
            _enter_request(folder, write_fd, parent)
            try:
                reply = handler(request, folder)
            except BaseException as error:  # noqa: BLE001 - one reply per request, whatever happened
                reply = CompileError("request", f"{type(error).__name__}: {error}").to_json()
            payload = json.dumps(reply).encode()
            message = memoryview(_LENGTH.pack(len(payload)) + payload)
            while message:
                message = message[os.write(write_fd, message):]
        finally:
            os._exit(0)
    os.close(write_fd)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.setpgid(pid, pid)  # also here, so that the group exists whichever process runs first
    try:
        payload, how = _read_reply(read_fd, pid)
    finally:
        os.close(read_fd)
        _kill_leftovers(pid)
        shutil.rmtree(folder, ignore_errors=True)
    if payload is None:
        return CompileError("compile", f"the process that served this request ended without a reply ({how}); "
                            "triton or ptxas may have crashed on this candidate").to_json()
    try:
        return json.loads(payload)
    except (ValueError, RecursionError) as error:  # it came from a process that ran candidate code
        return CompileError("request", f"the request's reply is not JSON: {error}").to_json()


#: The warm-up's kernel (Zygote.warm_up).
_WARM_UP_REQUEST = {
    "source": "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
              "def warm_up(x_ptr, n, BLOCK: tl.constexpr):\n"
              "    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
              "    tl.store(x_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < n) + 1.0, mask=offsets < n)\n",
    "kernel": "warm_up", "signature": ["*fp32", "i32"], "constexprs": {"BLOCK": 128}, "num_warps": 4,
    "num_stages": 1, "aligned": [0],
}


def _compile_in(request: Dict[str, Any], folder: str) -> Dict[str, Any]:
    return handle(Compiler(folder), request)


class Zygote:
    """The helper's request handler: triton imported once, here; every request that executes a candidate
    runs in a child of this process (:func:`run_isolated`) inside ``workdir``; status is answered here."""

    def __init__(self, workdir: Optional[str] = None):
        self.workdir = os.path.abspath(workdir or os.getcwd())
        os.makedirs(self.workdir, exist_ok=True)
        # The working folder holds request folders only: not a place to import modules from.
        sys.path[:] = [p for p in sys.path if p and os.path.abspath(p) != self.workdir]
        sys.dont_write_bytecode = True  # no .pyc beside a module imported late (outside the workdir)
        become_subreaper()
        if availability()[0]:
            self.warm_up()

    def warm_up(self) -> None:
        """Compiles a kernel of this module's own, once, before any request: triton's first compile in a
        process loads and initialises most of what it needs (about half a second), and every child
        forked afterwards starts with that done. Its files go to a folder of its own, removed after."""
        saved = {name: os.environ.get(name) for name in WRITE_PATH_VARIABLES}
        folder = tempfile.mkdtemp(prefix="warm-up-", dir=self.workdir)
        try:
            for variable in WRITE_PATH_VARIABLES:
                os.environ[variable] = folder
            tempfile.tempdir = folder
            for target in ("sm_90", "sm_80"):
                handle(Compiler(folder), dict(_WARM_UP_REQUEST, target=target))
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
            tempfile.tempdir = None
            shutil.rmtree(folder, ignore_errors=True)

    def handle(self, request: Dict[str, Any]) -> Dict[str, Any]:
        if request.get("op") == "status":
            reply = status()
        else:
            reply = run_isolated(_compile_in, request, self.workdir)
        if "id" in request:
            reply["id"] = request["id"]
        return reply


def serve(stdin: Any = None, stdout: Any = None, workdir: Optional[str] = None) -> int:
    """Reads JSON requests, one per line, until end of input; writes one JSON reply per line, each
    compiled in a child of this process (:class:`Zygote`) in a fresh folder inside ``workdir`` (default:
    the working directory)."""
    return _helper_io().serve_json_lines(Zygote(workdir).handle, stdin, stdout)


def _helper_io() -> Any:
    """The helpers' shared request loop (_helper_io.py beside this file), loaded by path: the helper runs
    as a script with neither the package nor its folder on sys.path."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_helper_io.py")
    spec = importlib.util.spec_from_file_location("kernelsmith_helper_io", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: Optional[Sequence[str]] = None) -> int:
    return _helper_io().run_helper(lambda workdir: Zygote(workdir).handle,
                                   "Compile Triton candidates: JSON requests on stdin, one per line.", argv)


if __name__ == "__main__":
    sys.exit(main())
