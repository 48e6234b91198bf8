"""A KernelBench problem's task manifest, from what the probe learnt about it (pure Python, no torch).

The naming rules are the shared contract's (docs/kernelbench.md, "Names"): the task is
``kb_l<level>_<slug>``; forward inputs keep the forward signature's names, parameters and buffers their
state-dict names with ``.`` -> ``_``, outputs are ``out`` or ``out0``, ``out1``...; sizes keep the module
constants' names; a dimension that is not a size is a literal or a derived size ``<tensor>_d<axis>``. A name
that collides gets ``_t`` (tensors) or ``_size`` (sizes).
"""

from __future__ import annotations

import math
import os
import re
from typing import Any, Dict, List, Optional, Tuple

from kernelsmith.kernelbench.triviality import distribution_text

TASK_SCHEMA = "kernelsmith.task/1"
#: Names the task loader refuses for sizes and tensors: the device attributes of launch plans
#: (lib/device_attributes.cpp) and, for sizes, the prefix of @specialize macros.
RESERVED_NAMES = frozenset({"SM_COUNT", "WARP_SIZE", "MAX_THREADS_PER_BLOCK", "SMEM_PER_BLOCK", "SMEM_PER_BLOCK_OPTIN",
                            "L2_BYTES", "COMPUTE_CAPABILITY"})
RESERVED_PREFIX = "KS_"
DTYPE_BYTES = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "int8": 1, "uint8": 1, "int32": 4,
               "int64": 8}
#: The file the task folder keeps the problem's source in (the oracle's module).
PROBLEM_FILE = "problem.py"
_FILE_NAME = re.compile(r"^(\d+)_.*\.py$")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def problem_number(path: str) -> Optional[int]:
    """The problem's number from KernelBench's file naming ``<number>_<Name>.py``; None otherwise."""
    match = _FILE_NAME.match(os.path.basename(path))
    return int(match.group(1)) if match else None


def problem_level(path: str) -> Optional[int]:
    """The level from the folder the file is in (KernelBench's ``level1``, ``level2``...); None otherwise."""
    match = re.fullmatch(r"level(\d+)", os.path.basename(os.path.dirname(os.path.abspath(path))))
    return int(match.group(1)) if match else None


def task_name(path: str, level: int) -> str:
    """``kb_l<level>_<slug>``: the file name without .py, lower-cased, non-alphanumerics -> ``_``, repeated
    ``_`` collapsed, trailing ``_`` stripped (``1_Square_matrix_multiplication_.py`` at level 1 ->
    ``kb_l1_1_square_matrix_multiplication``)."""
    stem = os.path.basename(path)
    stem = stem[:-3] if stem.endswith(".py") else stem
    slug = re.sub(r"_+", "_", re.sub(r"[^a-z0-9]", "_", stem.lower())).rstrip("_")
    return f"kb_l{level}_{slug}"


class _Names:
    """Hands out unique names: a taken or reserved one gets `suffix` (repeatedly) until it is free."""

    def __init__(self):
        self.taken: set = set()

    def claim(self, wanted: str, suffix: str) -> str:
        name = wanted if _IDENTIFIER.match(wanted) else f"param_{wanted}"
        while name in self.taken or name in RESERVED_NAMES or name.startswith(RESERVED_PREFIX):
            name += suffix
        self.taken.add(name)
        return name


def _product_expression(coefficient: int, factors: List[str]) -> str:
    return " * ".join([str(coefficient)] + factors) if factors else str(coefficient)


#: A sum of more terms than this (a whole network's tensors: ResNet-101 has 316) is written with its
#: like terms added up and in parenthesised groups of at most this many terms: the task format's expressions may
#: nest at most 256 levels deep, and a chain of additions counts one level per term.
MAX_SUM_TERMS = 32


def _sum_expression(terms: List[Tuple[int, List[str]]]) -> str:
    """The sum of (coefficient, size factors) terms as an expression: term by term when there are few; else the
    terms over the same sizes added up (the literal ones into one integer, last) and grouped (MAX_SUM_TERMS)."""
    if len(terms) <= MAX_SUM_TERMS:
        return " + ".join(_product_expression(c, f) for c, f in terms)
    combined: Dict[Tuple[str, ...], int] = {}
    for coefficient, factors in terms:
        key = tuple(sorted(factors))
        combined[key] = combined.get(key, 0) + coefficient
    literal = combined.pop((), 0)
    texts = [_product_expression(c, list(f)) for f, c in combined.items()] + ([str(literal)] if literal else [])
    while len(texts) > MAX_SUM_TERMS:
        texts = [f"({' + '.join(texts[i:i + MAX_SUM_TERMS])})" for i in range(0, len(texts), MAX_SUM_TERMS)]
    return " + ".join(texts) or "0"


def _widened_text(facts: Dict[str, Any], tensors: List[Dict[str, Any]]) -> str:
    """A sentence naming the inputs drawn wider than the problem's own (the probe's trivial-program check),
    by their task names; empty when none is."""
    widened = facts.get("widened") or {}
    if not widened:
        return ""
    task_names = {t["name"]: t["task_name"] for t in tensors if t["role"] == "input"}
    parts = [f"{task_names.get(n, n)} from {distribution_text(w['to'])} (the problem draws "
             f"{distribution_text(w['from'])})" for n, w in widened.items()]
    return (" Inputs are drawn wider than the problem's own, because on its own a trivial program passed: "
            + "; ".join(parts) + ".")


def build_manifest(facts: Dict[str, Any], path: str, level: int, source: str) -> Tuple[str, Dict[str, Any]]:
    """(task name, task.json document) for a problem whose probe facts are `facts`."""
    name = task_name(path, level)
    names = _Names()
    tensors = facts["tensors"]
    outputs = [t for t in tensors if t["role"] == "output"]
    # Tensors first: they keep the names users see in the forward signature and the state dict.
    for spec in tensors:
        if spec["source"] == "output":
            wanted = "out" if len(outputs) == 1 else f"out{spec['index']}"
        else:
            wanted = spec["name"].replace(".", "_")
        spec["task_name"] = names.claim(wanted, "_t")
    size_names = {constant: names.claim(constant, "_size") for constant in facts["sizes"]}
    configs = facts["configs"]
    config_names = ["timing"] + [c for c in configs if c != "timing"]
    sizes: Dict[str, Dict[str, int]] = {c: {size_names[k]: v for k, v in configs[c].items()} for c in config_names}

    def shape_of(spec) -> List[Any]:
        shape: List[Any] = []
        for axis, dim in enumerate(spec["dims"]):
            if "size" in dim:
                shape.append(size_names[dim["size"]])
            elif "value" in dim:
                shape.append(int(dim["value"]))
            else:
                derived = names.claim(f"{spec['task_name']}_d{axis}", "_size")
                for config in config_names:
                    sizes[config][derived] = int(dim["derived"][config])
                shape.append(derived)
        return shape

    manifest_tensors = []
    byte_terms = []
    for spec in tensors:
        shape = shape_of(spec)
        entry: Dict[str, Any] = {"name": spec["task_name"], "dtype": spec["dtype"], "shape": shape, "role": spec["role"]}
        if spec["role"] == "input":
            entry["distribution"] = spec["distribution"]
        manifest_tensors.append(entry)
        literal = math.prod(d for d in shape if isinstance(d, int))
        byte_terms.append((DTYPE_BYTES[spec["dtype"]] * literal, [d for d in shape if isinstance(d, str)]))
    if not sizes[config_names[0]]:
        # The task format needs a size: the first literal dimension of the first input becomes one.
        first = next((t for t in manifest_tensors if t["role"] == "input" and t["shape"]), None)
        if first is None:
            raise ValueError("the problem has no size and no input with a dimension; the task format needs a size")
        derived = names.claim(f"{first['name']}_d0", "_size")
        for config in config_names:
            sizes[config][derived] = first["shape"][0]
        first["shape"][0] = derived

    oracle: Dict[str, Any] = {
        "kind": "pytorch",
        "module": PROBLEM_FILE,
        "constants": {constant: size_names[constant] for constant in facts["sizes"]},
        "forward": [t["task_name"] for t in tensors if t["source"] == "forward"],
        "parameters": {t["name"]: t["task_name"] for t in tensors if t["source"] in ("parameter", "buffer")},
        "outputs": [t["task_name"] for t in outputs],
        "casts": {t["task_name"]: t["cast"] for t in tensors if t.get("cast")},
        "seed": 42,
        "training": bool(facts.get("training", True)),
        "baselines": ["eager", "compile", "compile_max_autotune"],
    }
    manifest = {
        "schema": TASK_SCHEMA,
        "name": name,
        "description": (f"KernelBench level {level} problem {problem_number(path)} ({os.path.basename(path)}); the "
                        f"expected outputs come from its PyTorch module below (the oracle)."
                        f"{_widened_text(facts, tensors)}\n\n{source}"),
        "sizes": sizes[config_names[0]],
        "check_sizes": [{"name": c, "sizes": sizes[c]} for c in config_names[1:]],
        "tensors": manifest_tensors,
        "work": {"flops": int(facts.get("flops", 0)), "bytes": _sum_expression(byte_terms)},
        "oracle": oracle,
    }
    return name, manifest
