"""The Triton gate as an allowlist (docs/triton.md, "The gate"): what a candidate's file may name, checked
on its syntax tree before anything in it is executed. Each attack below is a way out of the kernel
language into the compile helper's Python (triton.language's core module re-exports builtins; triton's
code generator calls whatever Python callable a kernel reaches, at compile time): every one is refused
with the line and the name. Every shipped Triton source still passes; the allowlist's entries exist in
the installed triton, and a kernel using its less common forms compiles (those tests need triton)."""

from __future__ import annotations

import ast
import json
import pathlib
import re
import subprocess
import sys
import types

import pytest

from kernelsmith import triton_compile as tc

ROOT = pathlib.Path(__file__).resolve().parents[2]
HAS_TRITON, TRITON_WHY = tc.availability()
needs_triton = pytest.mark.skipif(not HAS_TRITON, reason=f"needs triton: {TRITON_WHY}")

HEAD = "import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef k(x_ptr, n, BLOCK: tl.constexpr):\n"


def kernel(*lines: str) -> str:
    """A kernel whose body is ``lines``; the first of them is line 7."""
    return HEAD + "".join(f"    {line}\n" for line in lines)


#: (name, source, the line refused, words of the message)
ATTACKS = [
    ("core-builtins-exec", kernel("tl.core.builtins.exec('import os')"), 7, "triton.language.core"),
    ("alias-to-core", "import triton\nimport triton.language as L\n\n@triton.jit\ndef k(x):\n    M = L.core\n", 6, "triton.language.core"),
    ("from-import-core", "from triton.language import core\n", 1, "triton.language.core is not in the allowlist"),
    ("import-submodule", "import triton.language.core as C\n", 1, "`import triton.language.core` is not allowed"),
    ("module-in-a-variable", kernel("L = tl", "L.load(x_ptr)"), 7, "`tl` is the module triton.language"),
    ("module-in-a-tuple", kernel("t = (tl, 1)"), 7, "`tl` is the module triton.language"),
    ("module-as-argument", kernel("tl.static_assert(tl)"), 7, "`tl` may not be passed"),
    ("subscript-dunder", kernel("y = tl.__dict__['core']"), 7, "triton.language.__dict__"),
    ("lambda", kernel("f = lambda: 0"), 7, "a lambda"),
    ("default-argument", "import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x, B=tl.core):\n    pass\n", 5, "the default value `tl.core` must be a literal"),
    ("annotation", "import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x: tl.core.builtins.exec):\n    pass\n", 5, "the annotation `tl.core.builtins.exec`"),
    ("string-annotation", "import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x: \"__import__('os').system('id')\"):\n    pass\n", 5, "must name a type"),
    ("future-annotations", "from __future__ import annotations\n", 1, "`from __future__ import annotations` is not allowed"),
    ("second-decorator", "import triton\nimport triton.language as tl\n\n@triton.jit\n@tl.core.builtins.print\ndef k(x):\n    pass\n", 6, "must be decorated with @triton.jit"),
    ("autotune", "import triton\n\n@triton.autotune(configs=[], key=[])\n@triton.jit\ndef k(x):\n    pass\n", 5, "must be decorated with @triton.jit"),
    ("class-body", "import triton\n\nclass K:\n    x = __import__('os')\n", 3, "a class"),
    ("class-in-kernel", kernel("class K:", "    pass"), 7, "a class"),
    ("nested-function", kernel("def g():", "    pass"), 7, "a nested function"),
    ("f-string", kernel("tl.static_assert(True, f'{tl.core}')"), 7, "triton.language.core"),
    ("f-string-dunder", kernel("tl.static_assert(True, f'{n.__class__}')"), 7, "the attribute .__class__"),
    ("str-format", kernel("tl.static_assert(True, '{0.__class__}'.format(n))"), 7, "the attribute .format"),
    ("walrus", kernel("y = (m := tl.load(x_ptr))"), 7, "an assignment expression"),
    ("global-statement", kernel("global tl"), 7, "`global`"),
    ("nonlocal-like-rebind", "import triton\nimport triton.language as tl\ntl = tl.constexpr(1)\n", 3, "bound twice"),
    ("function-rebinds-alias", "import triton\nimport triton.language as tl\n\n@triton.jit\ndef tl(x):\n    pass\n", 5, "bound twice"),
    ("alias-reused", "import triton\nimport triton.language as tl\nimport math as tl\n", 3, "bound twice"),
    ("parameter-hides-import", "import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(tl):\n    tl.core\n", 5, "hides the import of triton.language"),
    ("local-hides-import", kernel("tl = 1"), 7, "hides the import"),
    ("constexpr-global-of-module", "import triton\nimport triton.language as tl\nX = tl.constexpr(tl.core)\n", 3, "must be a literal"),
    ("constexpr-value", kernel("y = tl.constexpr(1).value.__class__"), 7, "the attribute .__class__"),
    ("top-level-exec", "import triton\nimport triton.language as tl\nX = tl.core.builtins.exec('1')\n", 3, "is not allowed"),
    ("top-level-expression", "import triton\nimport triton.language as tl\ntl.core\n", 3, "an expression statement"),
    ("getattr-string", kernel("y = getattr(tl, 'co' + 're')"), 7, "the name `getattr`"),
    ("builtins-name", kernel("y = __builtins__"), 7, "the name `__builtins__`"),
    ("undefined-name", kernel("y = os"), 7, "the name `os`"),
    ("ir-handle", kernel("y = tl.zeros([16], tl.float32).handle"), 7, "the attribute .handle"),
    ("dtype-to-ir", kernel("y = tl.float32.to_ir"), 7, "the attribute .to_ir"),
    ("libdevice-core", kernel("y = tl.extra.cuda.libdevice.core"), 7, "triton.language.extra.cuda.libdevice.core"),
    ("libdevice-import-core", "from triton.language.extra.cuda.libdevice import core\n", 1, "not in the allowlist"),
    ("math-module-builtins", "import triton\nimport math\n\n@triton.jit\ndef k(x):\n    y = math.__builtins__\n", 6, "math.__builtins__"),
    ("math-factorial", "import triton\nimport math\n\n@triton.jit\ndef k(x):\n    y = math.factorial(10 ** 9)\n", 6, "math.factorial"),
    ("knobs", kernel("y = triton.knobs.compilation"), 7, "triton.knobs"),
    ("runtime-driver", kernel("triton.runtime.driver"), 7, "triton.runtime"),
    ("static-print", kernel("tl.static_print('Used 0 registers')"), 7, "triton.language.static_print"),
    ("extern-elementwise", kernel("tl.extern_elementwise('x', '/etc/passwd', [], {}, True)"), 7, "triton.language.extern_elementwise"),
    ("kernel-attribute", "import triton\n\n@triton.jit\ndef g(x):\n    pass\n\n@triton.jit\ndef k(x):\n    y = g.fn\n", 9, "`g.fn`"),
    ("kernel-in-a-variable", "import triton\n\n@triton.jit\ndef g(x):\n    pass\n\n@triton.jit\ndef k(x):\n    f = g\n", 9, "`g` may only be called (or passed to a call)"),
    ("starred-kwargs", kernel("tl.load(**n)"), 7, "pass keywords by name"),
    ("starred-args", kernel("tl.load(*n)"), 7, "the starred argument"),
    ("assign-attribute", kernel("tl.float32.name = 'x'"), 7, "assigning to `tl.float32.name`"),
    ("assign-item", kernel("n[0] = 1"), 7, "assigning to `n[0]`"),
    ("with", kernel("with n:", "    pass"), 7, "a with statement"),
    ("try", kernel("try:", "    pass", "except Exception:", "    pass"), 7, "a try statement"),
    ("import-in-kernel", kernel("import os"), 7, "an import"),
    ("comprehension", kernel("y = [i for i in range(4)]"), 7, "a comprehension"),
    ("dict", kernel("y = {'a': 1}"), 7, "a dict"),
    ("propagate-nan-class", kernel("y = tl.PropagateNan.ALL.__class__"), 7, "the attribute .__class__"),
    ("namespace-not-callable", kernel("y = tl.extra.cuda.libdevice(1)"), 7, "`tl.extra.cuda.libdevice` cannot be called"),
    ("relative-import", "from . import triton_compile\n", 1, "is not allowed"),
    ("star-import", "from triton.language import *\n", 1, "import names one by one"),
    ("jit-with-arguments", "import triton\n\n@triton.jit(noinline=True)\ndef k(x):\n    pass\n", 4, "must be decorated with @triton.jit"),
    ("jit-inside-kernel", kernel("y = triton.jit"), 7, "triton.jit"),
    ("builtin-as-value", kernel("f = range"), 7, "`range` may only be called"),
    ("print-builtin", kernel("print(n)"), 7, "the name `print`"),
    ("module-builtins-global", "import triton\n__builtins__ = 1\n", 2, "the top-level name `__builtins__`"),
    ("module-getattr", "import triton\n\n@triton.jit\ndef __getattr__(name):\n    pass\n", 4,
     "the top-level name `__getattr__`"),
    ("import-as-dunder", "import triton as __loader__\n", 1, "the top-level name `__loader__`"),
]


@pytest.mark.parametrize("source, line, what", [pytest.param(s, l, w, id=n) for n, s, l, w in ATTACKS])
def test_each_escape_is_refused_with_its_line_and_name(source, line, what):
    with pytest.raises(tc.GateError) as caught:
        tc.check_source(source)
    error = caught.value
    assert error.line == line, str(error)
    assert what in str(error), str(error)
    assert str(error).startswith(f"line {line}: ")
    assert "docs/triton.md" in str(error)  # where the allowlist is listed


def test_no_attack_is_executed_by_the_gate(tmp_path):
    marker = tmp_path / "ran"
    for source in (kernel(f"tl.core.builtins.open({str(marker)!r}, 'w')"),
                   f"import triton\nimport triton.language as tl\nX = tl.core.builtins.open({str(marker)!r}, 'w')\n",
                   "import triton\nimport triton.language as tl\n\n@triton.jit\n"
                   f"def k(x: tl.core.builtins.open({str(marker)!r}, 'w')):\n    pass\n"):
        with pytest.raises(tc.GateError):
            tc.check_source(source)
    assert not marker.exists()


@needs_triton
def test_the_issues_escape_is_refused_through_the_helper(tmp_path):
    """The escape that compiled (and ran as the user) before the allowlist, sent to the helper process as
    the evaluator sends it: refused at the gate, nothing written."""
    marker = tmp_path / "ran"
    source = ("import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
              "def add(x_ptr, n, BLOCK: tl.constexpr):\n"
              f"    tl.core.builtins.exec(\"open({str(marker)!r}, 'w')\")\n"
              "    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)\n")
    request = {"id": 1, "source": source, "kernel": "add", "signature": ["*fp32", "i32"],
               "constexprs": {"BLOCK": 128}, "target": "sm_90"}
    workdir = tmp_path / "helper"
    workdir.mkdir()
    done = subprocess.run([sys.executable, "-m", "kernelsmith.triton_compile", "--workdir", str(workdir)],
                          input=json.dumps(request) + "\n", capture_output=True, text=True, timeout=300,
                          cwd=workdir)
    assert done.returncode == 0, done.stderr
    [reply] = [json.loads(line) for line in done.stdout.splitlines()]
    assert reply["ok"] is False and reply["stage"] == "gate" and reply["line"] == 7, reply
    assert "triton.language.core" in reply["message"]
    assert not marker.exists()


# --- what stays accepted -----------------------------------------------------------------------------------


def shipped_triton_sources():
    """Every Triton file and test source of the project: the tasks' and KernelBench examples' seeds, the
    docs' examples, and the complete files (with their imports) inside the C++ and Python tests and the
    benchmarks."""
    sources = {}
    for path in sorted(ROOT.glob("tasks/*/seed.py")) + sorted(ROOT.glob("examples/kernelbench/*/seed.py")) + \
            sorted(ROOT.glob("docs/examples/*.py")):
        sources[str(path.relative_to(ROOT))] = path.read_text()
    for path in sorted(ROOT.glob("tests/cpp/*.cpp")):
        text = path.read_text()
        for match in re.finditer(r'R"(\w*)\((.*?)\)\1"', text, re.S):
            if "@triton.jit" in match.group(2) and "import triton" in match.group(2):
                sources[f"{path.relative_to(ROOT)}:{text[:match.start()].count(chr(10)) + 1}"] = match.group(2)
    for path in sorted(ROOT.glob("tests/python/*.py")) + sorted(ROOT.glob("bench/*.py")):
        if path.name == pathlib.Path(__file__).name:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            # A ModelNew file or template (host code importing torch.nn, docs/kernelbench-modelnew.md) is run by
            # its confined runner, not gated.
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and "@triton.jit" in node.value \
                    and "import triton" in node.value and "class ModelNew" not in node.value \
                    and "import torch.nn" not in node.value:
                sources[f"{path.relative_to(ROOT)}:{node.lineno}"] = node.value
    return sources


SHIPPED = shipped_triton_sources()
#: Test sources that are meant to be refused (the gate's own tests).
MEANT_TO_BE_REFUSED = {"exec(", "__class__", "triton.runtime", "open(", "import os"}


def test_every_shipped_triton_source_passes_the_gate():
    assert len(SHIPPED) >= 30  # the seeds and the tests' kernels were found
    refused = {}
    for name, source in SHIPPED.items():
        try:
            tc.check_source(source, name)
        except tc.GateError as error:
            if not any(word in source for word in MEANT_TO_BE_REFUSED):
                refused[name] = str(error)
    assert not refused, refused


#: A kernel using the allowlist's less common forms: libdevice imported by name, tl.math, a dtype's
#: attributes, PropagateNan, a combine function passed to tl.reduce, tuple unpacking, an annotated
#: local, an assertion with an f-string, math's constants, a string annotation.
BROAD = '''\
import math
import triton
import triton.language as tl
from triton.language.extra import libdevice
from triton.language.extra.cuda import libdevice as cuda_libdevice
from triton.language import float32 as f32

SCALE = tl.constexpr(2.0)


@triton.jit
def combine(a, b):
    return a + b


@triton.jit
def broad(x_ptr, y_ptr, n: "i32", BLOCK: tl.constexpr):
    """A docstring."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(f32)
    tl.static_assert(tl.float32.primitive_bitwidth == 32, f"{BLOCK} lanes")
    width: tl.constexpr = x.dtype.primitive_bitwidth
    low, high = x * 0.5, x * SCALE
    y = libdevice.tanh(low) + cuda_libdevice.erf(high) + tl.math.exp2(x) * (math.pi / width)
    y = tl.maximum(y, 0.0, propagate_nan=tl.PropagateNan.ALL)
    total = tl.reduce(y, 0, combine)
    for i in tl.static_range(2):
        y = y + i
    y = tl.where(mask, y + total * 0.0, 0.0)
    tl.store(y_ptr + offsets, y.to(tl.float32), mask=mask)
'''


def test_the_broad_kernel_passes_the_gate():
    tc.check_source(BROAD)


@needs_triton
def test_the_broad_kernel_compiles():
    reply = tc.handle(tc.Compiler(), {"source": BROAD, "kernel": "broad", "signature": ["*fp32", "*fp32", "i32"],
                                      "constexprs": {"BLOCK": 256}, "target": "sm_90", "aligned": [0, 1]})
    assert reply["ok"], reply.get("message")


@needs_triton
def test_every_allowlisted_name_exists_and_none_is_a_module():
    import importlib

    for full, kind in tc.ALLOWLIST.items():
        module_name, _, attribute = full.rpartition(".")
        if module_name.endswith("PropagateNan"):
            module_name, attribute = module_name.rpartition(".")[0], f"PropagateNan.{attribute}"
        value = importlib.import_module(module_name)
        for part in attribute.split("."):
            value = getattr(value, part)
        assert not isinstance(value, types.ModuleType), full
        if kind == "function":
            assert callable(value), full
    for namespace in tc.NAMESPACES:
        assert isinstance(importlib.import_module(namespace), types.ModuleType), namespace


@needs_triton
def test_value_attributes_reach_no_module_and_no_host_function():
    """The attributes a kernel may read from any value, read from every kind of object a kernel can hold:
    none gives a module, a code object or a function of the host (the methods of triton values are
    fine: triton calls them with its own arguments)."""
    import triton
    import triton.language as tl

    jit = next(iter(v for v in vars(__import__("triton.language.standard", fromlist=["x"])).values()
                    if isinstance(v, triton.runtime.jit.JITFunction)))
    samples = [tl.float32, tl.pointer_type(tl.float16), tl.block_type(tl.float32, [16]), tl.constexpr(3),
               tl.constexpr("text"), tl.load, jit, tl.tensor, tl.dtype, tl.PropagateNan.ALL, 3, 2.5, "text", (1, 2)]
    for sample in samples:
        for attribute in tc.VALUE_ATTRIBUTES:
            assert not attribute.startswith("_")
            value = getattr(sample, attribute, None)
            assert not isinstance(value, (types.ModuleType, types.CodeType)), (sample, attribute)
            assert not (isinstance(value, types.FunctionType) and not value.__module__.startswith("triton.")), \
                (sample, attribute)
