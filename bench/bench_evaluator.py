#!/usr/bin/env python3
"""kernelsmith's evaluator on a CUDA GPU, measured side by side with the usual ways of evaluating kernels.

Four measurements, in one run, on the built-in tasks' CUDA candidates (each task's reference, its seed,
and seed variants with other tunable values):

1. Throughput: end-to-end evaluations per minute through kernelsmith's evaluator (compile, load,
   correctness checks, timing; screen mode; no compile cache) against evaluating the same kernels the
   KernelBench way: a ``torch.utils.cpp_extension.load_inline`` build per kernel, 5 correctness trials
   against PyTorch, then CUDA events with 3 warm-ups and 100 timed trials, each after an L2 flush.
   A load_inline build takes about 47 s, so the KernelBench way is measured on a few kernels only
   (``--kernelbench-kernels``) and its per-minute rate is extrapolated from their mean cost.
2. Agreement: kernelsmith's median time (strict mode) against ``triton.testing.do_bench``'s median for
   the same kernels, launched from the same source through CuPy's RawModule (NVRTC); do_bench evicts the
   L2 by a read, as kernelsmith does (triton_timing.py), so both time the same cold start.
3. Noise: the run-to-run spread of kernelsmith's strict median over repeated evaluations, for kernels of
   50 us or more and for kernels of 10 to 50 us (timed over CUDA-graph replays), with how each was sampled.

Targets: throughput at least 50x the KernelBench way from a cold cache and 100x warm (the references'
outputs kept); medians within 2% of do_bench; run-to-run noise at most 0.5% for kernels of 50 us or more
and at most 1% for kernels of 10 to 50 us.

Run on a machine with a CUDA GPU, torch, triton and cupy (see bench/README.md). Every phase reports its
own failure and the others still run; the exit status is 1 when a phase failed or a target was missed.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shlex
import shutil
import statistics
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

REPO = Path(__file__).resolve().parents[1]

TARGET_THROUGHPUT_RATIO = 50.0  # from a cold cache
TARGET_WARM_THROUGHPUT_RATIO = 100.0  # steady state: the references' outputs kept
TARGET_AGREEMENT = 0.02
TARGET_NOISE = 0.005
NOISE_MIN_MS = 0.050
TARGET_TINY_NOISE = 0.01  # kernels of TINY_NOISE_MIN_MS to NOISE_MIN_MS
TINY_NOISE_MIN_MS = 0.010

# ------------------------------------------------------------------------------------------ candidates


@dataclass
class TensorSpec:
    name: str
    dtype: str
    shape: List[str]
    role: str
    distribution: Dict[str, Any]


@dataclass
class BenchTask:
    name: str
    manifest: Dict[str, Any]
    tensors: List[TensorSpec]
    sizes: Dict[str, int]
    pytorch: str
    folder: Path
    handle: Any = None  # kernelsmith.Task


@dataclass
class BenchCandidate:
    task: BenchTask
    label: str  # "reference", "seed", "seed BLOCK=128"
    source: str
    handle: Any = None  # kernelsmith.Candidate
    language: str = "cuda"  # the kernel language: "cuda", or "triton" for bench_triton.py
    compile_target: str = ""  # the architecture kernelsmith's evaluator compiled it for (e.g. sm_90a)

    @property
    def key(self) -> str:
        return f"{self.task.name}/{self.label}"


def task_folders() -> Dict[str, Path]:
    """Built-in task folders, from the installed package's search path when it says, else the source tree."""
    folders: Dict[str, Path] = {}
    search: List[Path] = []
    try:
        import kernelsmith

        if hasattr(kernelsmith, "task_search_path"):
            search = [Path(p) for p in kernelsmith.task_search_path()]
    except Exception:  # the source tree is enough
        pass
    search.append(REPO / "tasks")
    for root in search:
        if not root.is_dir():
            continue
        for manifest in sorted(root.glob("*/task.json")):
            folders.setdefault(manifest.parent.name, manifest.parent)
    return folders


def load_task(folder: Path) -> BenchTask:
    """One task from its folder's task.json (no kernelsmith needed: bench_triton's subprocesses use it)."""
    manifest = json.loads((folder / "task.json").read_text())
    tensors = [
        TensorSpec(t["name"], t.get("dtype", "float32"), list(t["shape"]), t.get("role", "input"),
                   t.get("distribution", {"kind": "normal", "a": 0.0, "b": 1.0}))
        for t in manifest["tensors"]
    ]
    return BenchTask(manifest.get("name", folder.name), manifest, tensors, dict(manifest["sizes"]),
                     manifest.get("pytorch", ""), folder)


def load_tasks(names: Optional[Sequence[str]]) -> List[BenchTask]:
    tasks = []
    for name, folder in sorted(task_folders().items()):
        if names and name not in names:
            continue
        task = load_task(folder)
        if "cuda" not in task.manifest.get("references", {}):
            continue
        task.name = name
        tasks.append(task)
    return tasks


def tune_line(marker: str = "//") -> "re.Pattern[str]":
    """`@tune NAME = value in {...}` directive lines behind a comment marker: "//" (C family) or "#" (Triton)."""
    return re.compile(r"^(\s*" + re.escape(marker) + r"\s*@tune\s+)([A-Za-z_]\w*)(\s*=\s*)(-?\d+)(\s+in\s+\{([^}]*)\})?",
                      re.M)


def seed_variants(source: str, limit: int, marker: str = "//") -> List[Tuple[str, str]]:
    """Sources with one tunable set to another allowed value: what the parameter mutator proposes. `marker`
    is the language's comment marker ("#" for Triton files)."""
    variants = []
    for match in tune_line(marker).finditer(source):
        name, current, allowed = match.group(2), int(match.group(4)), match.group(6)
        if not allowed:
            continue
        for text in allowed.split(","):
            text = text.strip()
            if not text or int(text) == current:
                continue
            changed = source[: match.start(4)] + text + source[match.end(4):]
            variants.append((f"seed {name}={text}", changed))
    # Spread the picks over the tunables instead of taking the first tunable's values only.
    variants.sort(key=lambda item: item[0].split("=")[0])
    picked: List[Tuple[str, str]] = []
    by_name: Dict[str, List[Tuple[str, str]]] = {}
    for label, text in variants:
        by_name.setdefault(label.split("=")[0], []).append((label, text))
    while len(picked) < limit and any(by_name.values()):
        for name in list(by_name):
            if by_name[name] and len(picked) < limit:
                picked.append(by_name[name].pop(0))
    return picked


def build_candidates(tasks: Sequence[BenchTask], variants_per_task: int) -> List[BenchCandidate]:
    candidates = []
    for task in tasks:
        reference = (task.folder / task.manifest["references"]["cuda"]).read_text()
        candidates.append(BenchCandidate(task, "reference", reference))
        seed_file = task.manifest.get("seeds", {}).get("cuda")
        if seed_file:
            seed = (task.folder / seed_file).read_text()
            candidates.append(BenchCandidate(task, "seed", seed))
            for label, source in seed_variants(seed, variants_per_task):
                candidates.append(BenchCandidate(task, label, source))
    return candidates


# ------------------------------------------------------------------------------------------ kernelsmith API


def ks():
    import kernelsmith

    return kernelsmith


def require(obj: Any, name: str) -> Any:
    if not hasattr(obj, name):
        raise RuntimeError(f"the kernelsmith Python bindings lack {getattr(obj, '__name__', type(obj).__name__)}.{name}; "
                           "this benchmark needs the evaluator bindings (Task, Candidate, EvaluatorOptions, create_evaluator)")
    return getattr(obj, name)


def make_ks_objects(tasks: Sequence[BenchTask], candidates: Sequence[BenchCandidate]) -> None:
    module = ks()
    for task in tasks:
        task.handle = require(module, "Task").load(str(task.folder))
    for candidate in candidates:
        candidate.handle = candidate_handle(module, candidate, candidate.source)


def candidate_handle(module, candidate: BenchCandidate, source: str):
    """A kernelsmith.Candidate of `candidate`'s language and origin holding `source`."""
    handle = require(module, "Candidate")()
    handle.language = candidate.language
    handle.source = source
    try:
        handle.lineage.origin = "seed" if candidate.label.startswith("seed") else "reference"
    except AttributeError:
        pass
    return handle


def make_evaluator(mode: str, cache_dir: str):
    module = ks()
    options = require(module, "EvaluatorOptions")()
    options.backend = "cuda"
    options.mode = mode
    options.cache_dir = cache_dir
    options.use_disk_cache = False
    return require(module, "create_evaluator")(options)


def status_name(evaluation: Any) -> str:
    status = evaluation.status
    return getattr(status, "name", str(status).split(".")[-1])


def timing_median_ms(evaluation: Any) -> Optional[float]:
    timing = getattr(evaluation, "timing", None)
    return None if timing is None else float(timing.median_ms)


def cuda_device() -> Any:
    for backend in ks().devices():
        if backend.name == "cuda":
            if not backend.available or not backend.devices:
                raise RuntimeError(f"kernelsmith's CUDA backend is unavailable: {backend.reason}")
            return backend.devices[0]
    raise RuntimeError("this kernelsmith build has no CUDA backend")


# ------------------------------------------------------------------------------------------ launch plans
# The benchmark launches candidates outside kernelsmith too (load_inline, CuPy), so it reads their
# launch plans itself, following docs/candidate-format.md: `// @launch k<<<grid, block[, smem]>>>(args)
# [cluster=dim3(x, y, z)]`,
# `// @workspace name: dtype[count]`, `// @tune NAME = value in {...}`, `// @specialize`.


def split_top_level(text: str, separator: str = ",") -> List[str]:
    parts, depth, current = [], 0, []
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == separator and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    if "".join(current).strip():
        parts.append("".join(current).strip())
    return parts


def evaluate_expression(expression: str, bindings: Dict[str, int]) -> int:
    """Integer arithmetic of launch plans: + - * / % with / as floor division, ceil_div, round_up, min, max,
    and the comparisons and && || ! of conditions (1 or 0)."""
    functions: Dict[str, Callable[..., int]] = {
        "ceil_div": lambda a, b: -((-a) // b),
        "round_up": lambda a, b: -((-a) // b) * b,
        "min": min,
        "max": max,
    }

    def value(node: ast.AST) -> int:
        if isinstance(node, ast.Expression):
            return value(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in bindings:
                raise ValueError(f"unknown name {node.id} in '{expression}'")
            return int(bindings[node.id])
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            operand = value(node.operand)
            return -operand if isinstance(node.op, ast.USub) else operand
        if isinstance(node, ast.BinOp):
            left, right = value(node.left), value(node.right)
            if isinstance(node.op, ast.Add):
                return left + right
            if isinstance(node.op, ast.Sub):
                return left - right
            if isinstance(node.op, ast.Mult):
                return left * right
            if isinstance(node.op, (ast.Div, ast.FloorDiv)):
                return left // right
            if isinstance(node.op, ast.Mod):
                return left % right
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in functions:
            return int(functions[node.func.id](*[value(a) for a in node.args]))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return int(not value(node.operand))
        if isinstance(node, ast.BoolOp):
            values = [value(v) for v in node.values]
            return int(all(values) if isinstance(node.op, ast.And) else any(values))
        if isinstance(node, ast.Compare):
            left = value(node.left)
            for op, comparator in zip(node.ops, node.comparators):
                right = value(comparator)
                if type(op) not in COMPARISONS:
                    break
                if not COMPARISONS[type(op)](left, right):
                    return 0
                left = right
            else:
                return 1
        raise ValueError(f"unsupported expression '{expression}'")

    # C's logic operators as Python's ("!=" stays a comparison).
    text = re.sub(r"!(?!=)", " not ", str(expression).strip().replace("&&", " and ").replace("||", " or "))
    return value(ast.parse(text.strip(), mode="eval"))  # manifests may give a shape as a number


COMPARISONS: Dict[type, Callable[[int, int], bool]] = {
    ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b}


@dataclass
class Launch:
    kernel: str
    grid: List[str]
    block: List[str]
    shared: str
    args: List[str]
    cluster: List[str] = field(default_factory=lambda: ["1", "1", "1"])


@dataclass
class Plan:
    launches: List[Launch] = field(default_factory=list)
    workspaces: List[Tuple[str, str, str]] = field(default_factory=list)  # name, dtype, count
    tunables: Dict[str, int] = field(default_factory=dict)
    specialize: bool = False
    tensor_maps: Dict[str, str] = field(default_factory=dict)  # name -> its when(...) condition, "1" if none


def parse_dims(text: str) -> List[str]:
    text = text.strip()
    if text.startswith("dim3(") and text.endswith(")"):
        dims = split_top_level(text[5:-1])
    else:
        dims = [text]
    return (dims + ["1", "1", "1"])[:3]


def closing_parenthesis(text: str) -> int:
    """The index of the parenthesis that closes the one `text` starts with; -1 if it starts with none or
    none closes it."""
    if not text.startswith("("):
        return -1
    depth = 0
    for index, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth == 0:
            return index
    return -1


def parse_plan(source: str) -> Plan:
    plan = Plan()
    for line in source.splitlines():
        match = re.match(r"\s*//\s*@(\w+)\s*(.*)$", line)
        if not match:
            continue
        directive, rest = match.group(1), match.group(2).strip()
        if directive == "launch":
            at = rest.index("<<<")
            end = rest.index(">>>", at)
            config = split_top_level(rest[at + 3:end])
            after = rest[end + 3:].strip()
            close = closing_parenthesis(after)
            if close < 0:
                raise ValueError(f"cannot read the arguments of '{line.strip()}'")
            cluster = ["1", "1", "1"]
            tail = after[close + 1:].strip()
            if tail:
                given = re.fullmatch(r"cluster\s*=\s*(.+)", tail)
                if not given:
                    raise ValueError(f"cannot read '{tail}' after the arguments of '{line.strip()}' "
                                     "(expected cluster=dim3(x, y, z))")
                cluster = parse_dims(given.group(1))
            plan.launches.append(Launch(rest[:at].strip(), parse_dims(config[0]), parse_dims(config[1]),
                                        config[2] if len(config) > 2 else "0", split_top_level(after[1:close]),
                                        cluster))
        elif directive == "workspace":
            name, declaration = rest.split(":", 1)
            ws = re.match(r"\s*(\w+)\s*\[(.*)\]\s*$", declaration)
            if not ws:
                raise ValueError(f"cannot read '{line.strip()}'")
            plan.workspaces.append((name.strip(), ws.group(1), ws.group(2)))
        elif directive == "tune":
            tune = re.match(r"([A-Za-z_]\w*)\s*=\s*(-?\d+)", rest)
            if tune:
                plan.tunables[tune.group(1)] = int(tune.group(2))
        elif directive == "specialize":
            plan.specialize = True
        elif directive == "tensor_map":
            name = rest.split("=", 1)[0].strip()
            when = re.search(r"\bwhen\((.*)\)\s*$", rest)
            plan.tensor_maps[name] = when.group(1) if when else "1"
    if not plan.launches:
        raise ValueError("the source declares no @launch")
    return plan


def strip_comments(source: str) -> str:
    source = re.sub(r"/\*.*?\*/", " ", source, flags=re.S)
    return re.sub(r"//[^\n]*", "", source)


def kernel_param_kinds(source: str, kernel: str) -> List[str]:
    """'pointer', 'int32' or 'int64' per parameter of an extern "C" kernel, read from its signature."""
    code = strip_comments(source)
    for match in re.finditer(r"\b" + re.escape(kernel) + r"\s*\(", code):
        if "__global__" not in code[max(0, match.start() - 300):match.start()]:
            continue
        depth, end = 1, match.end()
        while end < len(code) and depth:
            depth += {"(": 1, ")": -1}.get(code[end], 0)
            end += 1
        params = [p for p in split_top_level(code[match.end():end - 1]) if p and p != "void"]
        kinds = []
        for param in params:
            if "*" in param:
                kinds.append("pointer")
            elif re.search(r"\b(long|int64_t|uint64_t|size_t|ptrdiff_t)\b", param):
                kinds.append("int64")
            elif re.search(r"\b(float|double|half|__half|bfloat16)\b", param):
                raise ValueError(f"kernel {kernel} takes a floating-point value ({param}); plans pass integers only")
            else:
                kinds.append("int32")
        return kinds
    raise ValueError(f"no __global__ function {kernel} in the source")


TORCH_DTYPES = {"float16": "float16", "bfloat16": "bfloat16", "float32": "float32", "float64": "float64",
                "int8": "int8", "uint8": "uint8", "int32": "int32", "int64": "int64"}


@dataclass
class BoundLaunch:
    kernel: str
    grid: Tuple[int, int, int]
    block: Tuple[int, int, int]
    shared: int
    args: List[Tuple[str, Any]]  # ("tensor", name), ("int", value) or ("zero_tensor_map", name)
    kinds: List[str]


@dataclass
class BoundPlan:
    launches: List[BoundLaunch]
    defines: Dict[str, str]
    workspaces: List[Tuple[str, str, int]]


def device_bindings(device: Any) -> Dict[str, int]:
    return {
        "SM_COUNT": int(device.compute_units),
        "WARP_SIZE": int(device.warp_size),
        "MAX_THREADS_PER_BLOCK": int(device.max_threads_per_block),
        "SMEM_PER_BLOCK": int(device.shared_per_block),
        "SMEM_PER_BLOCK_OPTIN": int(device.shared_per_block_optin),
        "L2_BYTES": int(device.l2_bytes),
        # "sm_90" -> 90, as the evaluator binds it.
        "COMPUTE_CAPABILITY": int(re.sub(r"\D", "", str(getattr(device, "architecture", "")) or "0") or 0),
    }


class TensorMapNeeded(ValueError):
    """A plan passes a tensor map that its conditions leave in: the benchmark's launchers cannot build one."""


class ClusterNeeded(ValueError):
    """A plan launches clusters of more than one block: the benchmark's launchers (CuPy, load_inline) launch
    plain grids only."""


def bind_plan(candidate: BenchCandidate, device: Any) -> BoundPlan:
    plan = parse_plan(candidate.source)
    sizes = candidate.task.sizes
    bindings = dict(sizes)
    bindings.update(plan.tunables)
    bindings.update(device_bindings(device))
    defines = {name: str(value) for name, value in plan.tunables.items()}
    if plan.specialize:
        defines.update({f"KS_{name}": str(value) for name, value in sizes.items()})
    workspaces = [(name, dtype, evaluate_expression(count, bindings)) for name, dtype, count in plan.workspaces]
    known = {t.name for t in candidate.task.tensors} | {w[0] for w in workspaces}
    launches = []
    for launch in plan.launches:
        args: List[Tuple[str, Any]] = []
        for arg in launch.args:
            if arg in plan.tensor_maps:
                if evaluate_expression(plan.tensor_maps[arg], bindings):
                    raise TensorMapNeeded(
                        f"the plan passes the tensor map {arg}, which this launcher does not build (it passes "
                        "arrays and integers); a variant whose when(...) leaves the map out can be compared")
                args.append(("zero_tensor_map", arg))  # the evaluator passes 128 zero bytes (candidate-format.md)
            else:
                args.append(("tensor", arg) if arg in known else ("int", evaluate_expression(arg, bindings)))
        cluster = [evaluate_expression(e, bindings) for e in launch.cluster]
        if cluster[0] * cluster[1] * cluster[2] > 1:
            raise ClusterNeeded(
                f"the plan launches {launch.kernel} in clusters of {cluster[0]} x {cluster[1]} x {cluster[2]} "
                "blocks, which this launcher does not (plain grids only); a variant whose cluster is one block "
                "can be compared")
        kinds = kernel_param_kinds(candidate.source, launch.kernel)
        if len(kinds) != len(args):
            raise ValueError(f"{launch.kernel} takes {len(kinds)} parameters, the plan passes {len(args)}")
        launches.append(BoundLaunch(
            launch.kernel,
            tuple(evaluate_expression(e, bindings) for e in launch.grid),
            tuple(evaluate_expression(e, bindings) for e in launch.block),
            evaluate_expression(launch.shared, bindings), args, kinds))
    return BoundPlan(launches, defines, workspaces)


# ------------------------------------------------------------------------------------------ torch tensors


def make_tensors(task: BenchTask, plan: BoundPlan, seed: int):
    import torch
    from task_inputs import draw_input

    generator = torch.Generator(device="cuda")
    generator.manual_seed(seed)
    tensors = {}
    for spec in task.tensors:
        shape = [evaluate_expression(e, task.sizes) for e in spec.shape]
        dtype = getattr(torch, TORCH_DTYPES[spec.dtype])
        if spec.role == "output":
            tensors[spec.name] = torch.empty(shape, dtype=dtype, device="cuda")
            continue
        tensors[spec.name] = draw_input(torch, spec.distribution, shape, dtype, generator, "cuda")
    for name, dtype, count in plan.workspaces:
        tensors[name] = torch.zeros(max(count, 1), dtype=getattr(torch, TORCH_DTYPES[dtype]), device="cuda")
    return tensors


def pytorch_reference(task: BenchTask, tensors: Dict[str, Any]):
    import torch
    from task_accuracy import float32_exactly

    # The tasks compute float32 exactly; PyTorch's TF32 shortcuts (on by default for cuDNN convolutions)
    # differ from that by more than a task's tolerance (conv2d_3x3).
    scope = {"torch": torch, **task.sizes, **{t.name: tensors[t.name] for t in task.tensors if t.role == "input"}}
    with float32_exactly():
        return eval(task.pytorch, scope)  # the task manifest's own expression  # noqa: S307


# ------------------------------------------------------------------------------------------ the KernelBench way


def inline_module_sources(candidate: BenchCandidate, plan: BoundPlan) -> Tuple[str, str, List[str]]:
    """CUDA and C++ sources for load_inline: the candidate, then one launcher per launch of its plan."""
    defines = "".join(f"#define {name} {value}\n" for name, value in plan.defines.items())
    launchers, declarations, names = [], [], []
    for index, launch in enumerate(plan.launches):
        if any(kind == "zero_tensor_map" for kind, _ in launch.args):
            raise ValueError(f"{launch.kernel} takes a tensor map, which the load_inline launcher does not pass")
        name = f"ks_launch_{index}"
        arguments = ", ".join(
            (f"ks_bench::AnyPointer{{reinterpret_cast<void*>(args[{i}])}}" if kind == "pointer"
             else f"ks_bench::AnyInteger{{args[{i}]}}")
            for i, kind in enumerate(launch.kinds))
        launchers.append(f"""
void {name}(std::vector<int64_t> dims, std::vector<int64_t> args) {{
  const dim3 grid(dims[0], dims[1], dims[2]);
  const dim3 block(dims[3], dims[4], dims[5]);
  const size_t shared = static_cast<size_t>(dims[6]);
  if (shared > 48 * 1024) {{
    cudaFuncSetAttribute(reinterpret_cast<const void*>(&{launch.kernel}),
                         cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared));
  }}
  {launch.kernel}<<<grid, block, shared, 0>>>({arguments});
  const cudaError_t error = cudaGetLastError();
  TORCH_CHECK(error == cudaSuccess, "launch of {launch.kernel} failed: ", cudaGetErrorString(error));
}}
""")
        declarations.append(f"void {name}(std::vector<int64_t> dims, std::vector<int64_t> args);")
        names.append(name)
    cuda_source = (
        "#include <torch/extension.h>\n#include <cuda_runtime.h>\n#include <cstdint>\n#include <vector>\n"
        "namespace ks_bench {\n"
        "struct AnyPointer { void* p; template <class T> operator T*() const { return static_cast<T*>(p); } };\n"
        "struct AnyInteger { int64_t v; template <class T> operator T() const { return static_cast<T>(v); } };\n"
        "}\n" + defines + candidate.source + "\n" + "".join(launchers))
    cpp_source = "#include <torch/extension.h>\n#include <vector>\n" + "\n".join(declarations) + "\n"
    return cuda_source, cpp_source, names


def inline_runner(module: Any, names: List[str], plan: BoundPlan, tensors: Dict[str, Any]) -> Callable[[], None]:
    calls = []
    for name, launch in zip(names, plan.launches):
        dims = list(launch.grid) + list(launch.block) + [launch.shared]
        args = [tensors[value].data_ptr() if kind == "tensor" else int(value) for kind, value in launch.args]
        calls.append((getattr(module, name), dims, args))

    def run() -> None:
        for function, dims, args in calls:
            function(dims, args)

    return run


def kernelbench_correct(task: BenchTask, plan: Any, produce: Callable[[Dict[str, Any]], Sequence[Any]],
                        trials: int = 5) -> bool:
    """KernelBench's correctness check: `trials` sets of fresh inputs (make_tensors with `plan`'s
    workspaces), `produce(tensors)` runs the kernel and returns the outputs in the task's order, each
    compared with the task's PyTorch expression by torch.allclose within the task's tolerance."""
    import torch
    from task_accuracy import tolerance

    correct = True
    outputs = [t for t in task.tensors if t.role == "output"]
    for trial in range(trials):
        tensors = make_tensors(task, plan, seed=1000 + trial)
        produced = list(produce(tensors))
        torch.cuda.synchronize()
        if task.pytorch:
            expected = pytorch_reference(task, tensors)
            expected = expected if isinstance(expected, (tuple, list)) else [expected]
            for spec, got, want in zip(outputs, produced, expected):
                atol, rtol = tolerance(task.manifest, spec.dtype)
                correct = correct and bool(torch.allclose(got.double(), want.reshape(got.shape).double(),
                                                          atol=atol, rtol=rtol, equal_nan=False))
    return correct


def kernelbench_times(run: Callable[[], Any], warmups: int = 3, trials: int = 100) -> List[float]:
    """KernelBench's timing: CUDA events around `run`, `warmups` untimed calls, then `trials` timed ones,
    each after an L2 flush (zeroing 256 MiB). Milliseconds per trial."""
    import torch

    flush = torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device="cuda")
    for _ in range(warmups):
        run()
    torch.cuda.synchronize()
    times = []
    for _ in range(trials):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return times


def kernelbench_evaluate(candidate: BenchCandidate, device: Any, build_root: Path) -> Dict[str, Any]:
    """One candidate evaluated as KernelBench does, with the cost of each stage."""
    from torch.utils.cpp_extension import load_inline

    result: Dict[str, Any] = {"kernel": candidate.key}
    started = time.perf_counter()
    plan = bind_plan(candidate, device)
    cuda_source, cpp_source, names = inline_module_sources(candidate, plan)
    name = "ks_bench_" + re.sub(r"\W", "_", candidate.key) + f"_{os.getpid()}_{int(time.time() * 1000) % 10**9}"
    build_dir = build_root / name
    build_dir.mkdir(parents=True)  # a fresh folder: nothing is reused from an earlier build
    module = load_inline(name=name, cpp_sources=[cpp_source], cuda_sources=[cuda_source], functions=names,
                         extra_cuda_cflags=["-O3"], build_directory=str(build_dir), verbose=False)
    result["compile_s"] = time.perf_counter() - started

    # Correctness: 5 trials with fresh inputs, against the task's PyTorch expression.
    checked = time.perf_counter()
    outputs = [t for t in candidate.task.tensors if t.role == "output"]

    def produce(tensors: Dict[str, Any]) -> List[Any]:
        inline_runner(module, names, plan, tensors)()
        return [tensors[spec.name] for spec in outputs]

    result["correct"] = kernelbench_correct(candidate.task, plan, produce)
    result["correctness_s"] = time.perf_counter() - checked

    # Timing: CUDA events, 3 warm-ups, 100 trials, an L2 flush before each.
    timed = time.perf_counter()
    tensors = make_tensors(candidate.task, plan, seed=7)
    times = kernelbench_times(inline_runner(module, names, plan, tensors))
    result["timing_s"] = time.perf_counter() - timed
    result["median_ms"] = statistics.median(times)
    result["total_s"] = time.perf_counter() - started
    shutil.rmtree(build_dir, ignore_errors=True)
    return result


# ------------------------------------------------------------------------------------------ CuPy + do_bench


def triton_median_ms(candidate: BenchCandidate, device: Any) -> float:
    import cupy
    import numpy as np
    import torch
    from triton_timing import do_bench_median

    plan = bind_plan(candidate, device)
    if not candidate.compile_target:
        # Compiled for another architecture than ours, do_bench would time another kernel (the wgmma path of
        # an sm_90a build is not in a plain sm_90 one): no comparison rather than a wrong one.
        raise ValueError("the evaluator reported no compile target for this kernel, so CuPy cannot compile it "
                         "the same way")
    options = (f"--gpu-architecture={candidate.compile_target}", "--std=c++17") + tuple(
        f"-D{name}={value}" for name, value in plan.defines.items())
    include = os.environ.get("CUDA_HOME", "/usr/local/cuda") + "/include"
    if os.path.isdir(include):
        options += (f"-I{include}",)
    module = cupy.RawModule(code=candidate.source, options=options)
    tensors = make_tensors(candidate.task, plan, seed=7)
    calls = []
    for launch in plan.launches:
        function = module.get_function(launch.kernel)
        if launch.shared > 48 * 1024:
            function.max_dynamic_shared_size_bytes = launch.shared
        args = []
        for (kind, value), param in zip(launch.args, launch.kinds):
            if kind == "tensor":
                args.append(cupy.asarray(tensors[value]))
            elif kind == "zero_tensor_map":
                # A CUtensorMap by value: 128 bytes, as a structured scalar (CuPy passes those by value).
                args.append(np.zeros((), dtype=np.dtype([("opaque", np.uint64, (16,))]))[()])
            elif param == "int64":
                args.append(np.int64(value))
            else:
                args.append(np.int32(value))
        calls.append((function, launch.grid, launch.block, tuple(args), launch.shared))

    def run() -> None:
        for function, grid, block, args, shared in calls:
            function(grid, block, args, shared_mem=shared)

    run()
    torch.cuda.synchronize()
    return do_bench_median(run, warmup=25, rep=100)


# ------------------------------------------------------------------------------------------ report


class Report:
    def __init__(self, path: str = "") -> None:
        self.data: Dict[str, Any] = {"phases": {}, "errors": {}, "targets": {}}
        self.failed = False
        self.path = path

    def save(self) -> None:
        """Written after every phase, so that a run cut short still leaves what it measured."""
        if self.path:
            Path(self.path).write_text(json.dumps(self.data, indent=2, default=str))

    def error(self, phase: str, error: BaseException) -> None:
        self.failed = True
        self.data["errors"][phase] = "".join(traceback.format_exception(type(error), error, error.__traceback__))
        print(f"\n[{phase}] FAILED: {error}", flush=True)

    def phase(self, name: str, run: Callable[[], Any], failed: Any = None) -> Any:
        """Runs one phase and returns what it returns; a phase that raises is recorded under `name` and gives
        `failed`, so that the other phases still run. The report is saved either way."""
        try:
            return run()
        except Exception as error:  # noqa: BLE001 - one phase's failure must not end the run
            self.error(name, error)
            return failed
        finally:
            self.save()

    def target(self, name: str, met: Optional[bool], detail: str) -> None:
        self.data["targets"][name] = {"met": met, "detail": detail}
        if met is False:
            self.failed = True


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    def text(value: Any) -> str:
        if value is None:
            return "n/a"
        if isinstance(value, float):
            return f"{value:.4g}"
        return str(value)

    cells = [[text(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)) for row in cells]
    return "\n".join(lines)


def available(module: str) -> Optional[str]:
    try:
        __import__(module)
        return None
    except Exception as error:  # noqa: BLE001 - any import failure means "not usable here"
        return f"{module} is not usable: {error}"


# ------------------------------------------------------------------------------------------ phases


#: Appended to every candidate for the warm pass: a new source (a new content key), so that nothing the cold
#: pass compiled is reused; only what a run legitimately keeps (the tasks' reference outputs, the device's
#: peaks, the worker) carries over.
WARM_PASS_MARK = "\n// bench_evaluator: warm pass\n"


def timing_details(evaluation: Any) -> Dict[str, Any]:
    """What explains an evaluation's timing cost: its samples and how they were taken, on both sides, and
    whether a suspicious speedup was measured again."""
    details: Dict[str, Any] = {}
    for side in ("timing", "baseline_timing"):
        report = getattr(evaluation, side, None)
        if report is not None:
            details[side] = {field: getattr(report, field, None)
                             for field in ("median_ms", "samples", "noise", "converged", "sampling")}
    integrity = getattr(evaluation, "integrity", None)
    if integrity is not None:
        details["flags"] = list(getattr(integrity, "flags", []))
    return details


def evaluate_all(evaluator, tasks, handles: Dict[int, Any], candidates) -> Dict[str, Any]:
    """Every candidate through `evaluator.evaluate_batch`, task by task: the count, the wall seconds, the
    statuses, the summed stage seconds and each kernel's record."""
    statuses: Dict[str, int] = {}
    stages: Dict[str, float] = {}
    kernels: List[Dict[str, Any]] = []
    started = time.perf_counter()
    for task in tasks:
        batch = [c for c in candidates if c.task is task]
        for candidate, evaluation in zip(batch, evaluator.evaluate_batch(task.handle, [handles[id(c)] for c in batch])):
            statuses[status_name(evaluation)] = statuses.get(status_name(evaluation), 0) + 1
            stage_seconds = dict(getattr(evaluation, "stage_seconds", {}) or {})
            for stage, seconds in stage_seconds.items():
                stages[stage] = stages.get(stage, 0.0) + seconds
            kernels.append({"kernel": candidate.key, "status": status_name(evaluation),
                            "message": str(getattr(evaluation, "message", "") or ""), "stage_seconds": stage_seconds,
                            **timing_details(evaluation)})
    seconds = time.perf_counter() - started
    return {"evaluations": len(kernels), "seconds": seconds, "per_minute": len(kernels) / seconds * 60.0,
            "statuses": statuses, "stage_seconds": stages, "kernels": kernels}


def print_pass(name: str, result: Dict[str, Any]) -> None:
    print(f"  {name}: {result['evaluations']} evaluations in {result['seconds']:.1f} s = "
          f"{result['per_minute']:.1f}/min (statuses {result['statuses']})", flush=True)
    stages = result["stage_seconds"]
    total = sum(stages.values()) or 1.0
    if stages:
        # Compiles overlap the device work of earlier candidates; the other stages are serial.
        print("    seconds by stage (summed, share): " + ", ".join(
            f"{k} {v:.2f} ({v / total:.0%})" for k, v in sorted(stages.items())), flush=True)
    kernels = result["kernels"]
    remeasured = sum(1 for k in kernels if "remeasured" in k.get("flags", []))
    print(f"    suspicious speedups measured again: {remeasured} of {len(kernels)}", flush=True)
    slowest = sorted(kernels, key=lambda k: -sum(k["stage_seconds"].values()))[:5]
    print("    slowest: " + ", ".join(
        f"{k['kernel']} {sum(k['stage_seconds'].values()):.2f} s "
        f"({max(k['stage_seconds'], key=k['stage_seconds'].get) if k['stage_seconds'] else '-'})" for k in slowest),
        flush=True)


def phase_throughput(report: Report, tasks, candidates, cache_root: Path) -> Optional[float]:
    """Evaluations per minute through kernelsmith (screen mode), twice through one evaluator: cold (nothing
    cached: each task's reference outputs are computed on its first evaluation) and warm (the same kernels as
    new sources, the references' outputs kept, as every later evaluation of a run finds them). Returns the
    cold rate; the warm one is in the report."""
    started = time.perf_counter()
    evaluator = make_evaluator("screen", str(cache_root / "throughput"))
    created_s = time.perf_counter() - started
    # The first evaluation starts the worker, creates the context and measures the device's peaks.
    first = candidates[0]
    t0 = time.perf_counter()
    evaluator.evaluate(first.task.handle, first.handle)
    startup_s = created_s + time.perf_counter() - t0
    print("\nkernelsmith, screen mode:", flush=True)
    cold = evaluate_all(evaluator, tasks, {id(c): c.handle for c in candidates}, candidates)
    print_pass("cold (nothing cached)", cold)
    module = ks()
    warm_handles = {id(c): candidate_handle(module, c, c.source + WARM_PASS_MARK) for c in candidates}
    warm = evaluate_all(evaluator, tasks, warm_handles, candidates)
    print_pass("warm (references' outputs kept, every kernel compiled afresh)", warm)
    with_startup_rate = (cold["evaluations"] + 1) / (cold["seconds"] + startup_s) * 60.0
    report.data["phases"]["throughput"] = {
        **cold, "startup_seconds": startup_s, "per_minute_with_startup": with_startup_rate, "warm": warm}
    print(f"  start-up (evaluator, worker, context, device peaks): {startup_s:.1f} s", flush=True)
    return cold["per_minute"]


def phase_kernelbench(report: Report, candidates, device, count: int, build_root: Path) -> Optional[float]:
    reason = available("torch")
    if reason:
        raise RuntimeError(reason)
    import torch

    major, minor = torch.cuda.get_device_capability()
    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", f"{major}.{minor}")
    # One seed per task, from different tasks, with a PyTorch expression to check against.
    picked, seen = [], set()
    for candidate in candidates:
        if candidate.label == "seed" and candidate.task.pytorch and candidate.task.name not in seen:
            picked.append(candidate)
            seen.add(candidate.task.name)
        if len(picked) == count:
            break
    results = []
    for candidate in picked:
        print(f"KernelBench way: {candidate.key} (load_inline, ~47 s) ...", flush=True)
        try:
            results.append(kernelbench_evaluate(candidate, device, build_root))
            print(f"  {results[-1]['total_s']:.1f} s (compile {results[-1]['compile_s']:.1f} s), "
                  f"correct={results[-1]['correct']}", flush=True)
        except Exception as error:  # noqa: BLE001 - one kernel's failure must not end the phase
            results.append({"kernel": candidate.key, "error": str(error)})
            print(f"  failed: {error}", flush=True)
    measured = [r for r in results if "total_s" in r]
    report.data["phases"]["kernelbench"] = {"kernels": results}
    if not measured:
        raise RuntimeError("no kernel could be evaluated the KernelBench way")
    mean_s = statistics.mean(r["total_s"] for r in measured)
    rate = 60.0 / mean_s
    report.data["phases"]["kernelbench"].update({"mean_seconds": mean_s, "per_minute": rate, "measured": len(measured)})
    return rate


def pick_across_tasks(candidates, labels: Sequence[str], count: int) -> List[BenchCandidate]:
    """Up to `count` candidates, one label at a time over every task, so that the picks span the tasks."""
    picked: List[BenchCandidate] = []
    for label in labels:
        for candidate in candidates:
            if candidate.label == label and len(picked) < count:
                picked.append(candidate)
    return picked


def without_live_tensor_maps(candidate: BenchCandidate, candidates, device) -> Tuple[BenchCandidate, str]:
    """`candidate`, or where its plan passes a tensor map the CuPy launcher cannot build (or launches clusters,
    which it cannot either), a variant of the same task's seed whose conditions leave the maps and clusters
    out (the tensor-core seeds' TMA=0), with a note saying so: the first such among `candidates`, else the
    seed with one tunable set to another of its values (the benchmark's variant sample need not hold one).
    `candidate` itself when there is none (its comparison then fails, saying why)."""
    try:
        bind_plan(candidate, device)
        return candidate, ""
    except (TensorMapNeeded, ClusterNeeded):
        pass
    seeds = [other for other in candidates if other.task is candidate.task and other.label.startswith("seed")]
    rewritten = [BenchCandidate(candidate.task, label, source, language=candidate.language)
                 for seed in seeds if seed.label == "seed"
                 for label, source in seed_variants(seed.source, limit=10**6)]
    known = {other.label for other in seeds}
    for other in [c for c in seeds if c.label != "seed"] + [c for c in rewritten if c.label not in known]:
        try:
            bind_plan(other, device)
        except ValueError:
            continue
        return other, f"{other.label} in place of {candidate.label}: tensor maps and clusters are not built here"
    return candidate, ""


def phase_agreement(report: Report, candidates, device, count: int, cache_root: Path, *,
                    measure: Optional[Callable[[BenchCandidate, Any], Any]] = None,
                    needs: Sequence[str] = ("triton", "cupy"), labels: Sequence[str] = ("seed", "reference"),
                    target: float = TARGET_AGREEMENT, how: str = "same kernels, cold L2") -> Dict[str, float]:
    """kernelsmith strict medians vs triton.testing.do_bench medians, same kernels, same sizes.

    `measure(candidate, device)` gives the do_bench median in ms, or (median, note) where the note goes
    into the verdict column (default: the source compiled by CuPy, triton_median_ms); `needs` are the
    modules it imports; `target` the largest accepted |ours/do_bench - 1| for kernels of 50 us or more."""
    picked = pick_across_tasks(candidates, labels, count)
    substitutions: Dict[str, str] = {}
    if measure is None:
        # CuPy launches arrays and integers only: a plan whose tensor maps are live is compared through a
        # variant without them.
        for index, candidate in enumerate(picked):
            picked[index], note = without_live_tensor_maps(candidate, candidates, device)
            if note:
                substitutions[picked[index].key] = note
            if picked[index].handle is None and candidate.handle is not None:  # a variant made for this
                picked[index].handle = candidate_handle(ks(), picked[index], picked[index].source)
    measure = measure or triton_median_ms
    evaluator = make_evaluator("strict", str(cache_root / "strict"))
    ours: Dict[str, float] = {}
    statuses: Dict[str, str] = {}
    for task in {id(c.task): c.task for c in picked}.values():
        batch = [c for c in picked if c.task is task]
        for candidate, evaluation in zip(batch, evaluator.evaluate_batch(task.handle, [c.handle for c in batch])):
            statuses[candidate.key] = status_name(evaluation)
            candidate.compile_target = evaluation.compile.target
            median = timing_median_ms(evaluation)
            if statuses[candidate.key] == "ok" and median:
                ours[candidate.key] = median
    report.data["phases"]["ours_strict"] = {"median_ms": ours, "statuses": statuses}

    missing = next((reason for reason in map(available, needs) if reason), None)
    percent = f"{target * 100:g}%"
    target_name = f"agreement_within_{target * 100:g}pct"
    rows = []
    theirs: Dict[str, float] = {}
    for candidate in picked:
        if candidate.key not in ours:
            rows.append([candidate.key, None, None, None, f"kernelsmith: {statuses.get(candidate.key)}"])
            continue
        if missing:
            rows.append([candidate.key, ours[candidate.key], None, None, missing])
            continue
        try:
            measured = measure(candidate, device)
        except Exception as error:  # noqa: BLE001
            rows.append([candidate.key, ours[candidate.key], None, None, f"do_bench failed: {error}"])
            continue
        median, note = measured if isinstance(measured, tuple) else (measured, "")
        note = "; ".join(part for part in (note, substitutions.get(candidate.key, "")) if part)
        theirs[candidate.key] = float(median)
        ratio = ours[candidate.key] / theirs[candidate.key]
        judged = ours[candidate.key] >= NOISE_MIN_MS
        verdict = ("yes" if abs(ratio - 1) <= target else "NO") if judged else "(< 50 us, not judged)"
        rows.append([candidate.key, ours[candidate.key], theirs[candidate.key], ratio,
                     f"{verdict}; {note}" if note else verdict])
    report.data["phases"]["agreement"] = {"triton_median_ms": theirs, "rows": rows}
    print(f"\nMedian time, kernelsmith (strict) vs triton.testing.do_bench ({how})")
    print(table(["kernel", "ours ms", "do_bench ms", "ours/do_bench", f"within {percent}"], rows))
    judged = [r for r in rows if isinstance(r[3], float) and r[1] >= NOISE_MIN_MS]
    if judged:
        worst = max(abs(r[3] - 1) for r in judged)
        report.target(target_name, worst <= target,
                      f"worst |ours/do_bench - 1| = {worst:.2%} over {len(judged)} kernels >= 50 us")
    else:
        report.target(target_name, None, "no kernel of 50 us or more could be compared")
    return ours


def phase_noise(report: Report, candidates, ours: Dict[str, float], count: int, repeats: int,
                cache_root: Path) -> None:
    """Run-to-run spread of the strict median over repeated evaluations of the same candidate: up to
    ``count`` kernels of 50 us or more (target 0.5%) and up to ``count`` of 10 to 50 us, which the CUDA
    backend times over graph replays (target 1%; docs/evaluation.md, "Tiny kernels")."""
    evaluator = make_evaluator("strict", str(cache_root / "noise"))
    groups = [
        ("noise_le_0.5pct", ">= 50 us", TARGET_NOISE,
         [c for c in candidates if ours.get(c.key, 0.0) >= NOISE_MIN_MS][:count]),
        ("noise_le_1pct_10_to_50us", "10 to 50 us", TARGET_TINY_NOISE,
         [c for c in candidates if TINY_NOISE_MIN_MS <= ours.get(c.key, 0.0) < NOISE_MIN_MS][:count]),
    ]
    data = {"repeats": repeats, "groups": {}}
    for target_name, label, target, eligible in groups:
        rows = []
        for candidate in eligible:
            medians, within, sampling = [], [], set()
            for _ in range(repeats):
                evaluation = evaluator.evaluate(candidate.task.handle, candidate.handle)
                if status_name(evaluation) != "ok" or evaluation.timing is None:
                    break
                medians.append(float(evaluation.timing.median_ms))
                within.append(float(evaluation.timing.noise))
                fallback = evaluation.timing.sampling_fallback
                sampling.add(evaluation.timing.sampling + (f" (fallback: {fallback})" if fallback else ""))
            if len(medians) < 2:
                rows.append([candidate.key, None, None, None, None, ", ".join(sorted(sampling)), "evaluation failed"])
                continue
            spread = statistics.stdev(medians) / statistics.mean(medians)
            identical = len(set(medians)) == 1
            rows.append([candidate.key, statistics.median(medians), spread,
                         (max(medians) - min(medians)) / statistics.mean(medians), statistics.median(within),
                         ", ".join(sorted(sampling)),
                         "suspicious: identical medians (cached?)" if identical else ("yes" if spread <= target else "NO")])
        data["groups"][label] = {"target": target, "rows": rows}
        print(f"\nRun-to-run noise of kernelsmith's strict median ({repeats} evaluations each, kernels {label})")
        print(table(["kernel", "median ms", "rel. stdev", "(max-min)/mean", "within-run noise", "sampling",
                     f"<= {target:.1%}"], rows))
        judged = [r for r in rows if isinstance(r[2], float)]
        if judged:
            worst = max(r[2] for r in judged)
            report.target(target_name, worst <= target,
                          f"worst run-to-run relative stdev = {worst:.3%} over {len(judged)} kernels {label}")
        else:
            report.target(target_name, None, f"no kernel of {label} was timed")
    report.data["phases"]["noise"] = data


# ------------------------------------------------------------------------------------------ main


def parse_args(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", default="", help="comma-separated task names (default: every built-in task)")
    parser.add_argument("--variants-per-task", type=int, default=4,
                        help="seed variants with other tunable values per task (default 4)")
    parser.add_argument("--kernelbench-kernels", type=int, default=3,
                        help="kernels evaluated the KernelBench way, ~47 s each (default 3; 0 skips)")
    parser.add_argument("--agreement-kernels", type=int, default=12,
                        help="kernels timed by both kernelsmith (strict) and do_bench (default 12: seeds first)")
    parser.add_argument("--noise-kernels", type=int, default=5,
                        help="kernels measured for noise in each group: >= 50 us, and 10 to 50 us")
    parser.add_argument("--noise-repeats", type=int, default=5, help="strict evaluations per kernel for noise")
    parser.add_argument("--skip", default="", help="phases to skip: throughput,kernelbench,agreement,noise")
    parser.add_argument("--out", default="", help="write the results as JSON here")
    parser.add_argument("--dry-run", action="store_true",
                        help="no GPU: read the tasks, bind every plan to an H100-like device and write the "
                             "load_inline sources, then stop")
    return parser.parse_args(argv)


class _DryRunDevice:
    compute_units, warp_size, max_threads_per_block = 132, 32, 1024
    shared_per_block, shared_per_block_optin, l2_bytes = 49152, 232448, 52428800
    architecture = "sm_90"


def dry_run(candidates: Sequence[BenchCandidate], out_dir: Path) -> int:
    out_dir.mkdir(parents=True, exist_ok=True)
    problems = 0
    for candidate in candidates:
        try:
            plan = bind_plan(candidate, _DryRunDevice())
            cuda_source, cpp_source, names = inline_module_sources(candidate, plan)
            stem = re.sub(r"\W", "_", candidate.key)
            (out_dir / f"{stem}.cu").write_text(cuda_source)
            (out_dir / f"{stem}.cpp").write_text(cpp_source)
            print(f"{candidate.key}: {len(plan.launches)} launch(es), defines {plan.defines}, "
                  f"grid {[l.grid for l in plan.launches]}")
        except Exception as error:  # noqa: BLE001
            problems += 1
            print(f"{candidate.key}: {error}")
    return 1 if problems else 0


def installed_versions() -> Dict[str, str]:
    """The versions that the figures depend on; a module that is missing says so (its phases then fail)."""
    found = {"python": sys.version.split()[0]}
    for module in ("kernelsmith", "torch", "cupy", "triton"):
        try:
            found[module] = str(__import__(module).__version__)
        except Exception as error:  # noqa: BLE001 - any import failure means "not usable here"
            found[module] = f"not importable ({type(error).__name__})"
    try:
        import torch

        found["cuda (torch)"] = str(torch.version.cuda)
    except Exception:  # noqa: BLE001
        pass
    return found


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    command = shlex.join(["python3", *(sys.argv if argv is None else [sys.argv[0], *argv])])
    names = [n for n in args.tasks.split(",") if n]
    skip = {s for s in args.skip.split(",") if s}
    tasks = load_tasks(names)
    candidates = build_candidates(tasks, args.variants_per_task)
    print(f"{len(tasks)} tasks, {len(candidates)} candidates")
    if args.dry_run:
        return dry_run(candidates, Path(args.out or tempfile.mkdtemp(prefix="ks_bench_dry_")))

    report = Report(args.out)
    report.data["command"] = command
    report.data["versions"] = installed_versions()
    print(f"command: {command}\nversions: " + ", ".join(f"{k} {v}" for k, v in report.data["versions"].items()),
          flush=True)
    try:
        device = cuda_device()
        import kernelsmith

        report.data["device"] = {"name": device.name, "architecture": device.architecture,
                                 "sms": device.compute_units, "kernelsmith": kernelsmith.__version__}
        print(f"device: {device.name} ({device.architecture}, {device.compute_units} SMs), "
              f"kernelsmith {kernelsmith.__version__}")
        make_ks_objects(tasks, candidates)
    except Exception as error:  # noqa: BLE001
        report.error("setup", error)
        report.save()
        return 1

    cache_root = Path(tempfile.mkdtemp(prefix="ks_bench_cache_"))
    ours_rate = theirs_rate = None
    ours_strict: Dict[str, float] = {}
    if "throughput" not in skip:
        ours_rate = report.phase("throughput", lambda: phase_throughput(report, tasks, candidates, cache_root))
    if "kernelbench" not in skip and args.kernelbench_kernels > 0:
        theirs_rate = report.phase("kernelbench", lambda: phase_kernelbench(
            report, candidates, device, args.kernelbench_kernels, cache_root / "load_inline"))
    if "agreement" not in skip:
        ours_strict = report.phase("agreement", lambda: phase_agreement(
            report, candidates, device, args.agreement_kernels, cache_root), failed={})
    if "noise" not in skip and ours_strict:
        report.phase("noise", lambda: phase_noise(
            report, candidates, ours_strict, args.noise_kernels, args.noise_repeats, cache_root))

    throughput = report.data["phases"].get("throughput", {})
    kernelbench = report.data["phases"].get("kernelbench", {})
    ratio = ours_rate / theirs_rate if ours_rate and theirs_rate else None
    warm_rate = throughput.get("warm", {}).get("per_minute")
    warm_ratio = warm_rate / theirs_rate if warm_rate and theirs_rate else None
    print("\nEnd-to-end evaluations per minute")
    print(table(["", "kernelsmith", "KernelBench way", "ratio"], [
        ["evaluations/min, cold", ours_rate, theirs_rate, ratio],
        ["evaluations/min, warm", warm_rate, theirs_rate, warm_ratio],
        ["  with start-up", throughput.get("per_minute_with_startup"), theirs_rate,
         (throughput.get("per_minute_with_startup") / theirs_rate) if theirs_rate and throughput else None],
        ["kernels measured", throughput.get("evaluations"), kernelbench.get("measured"), None],
    ]))
    if theirs_rate:
        print(f"(KernelBench-way rate extrapolated from {kernelbench.get('measured')} kernel(s): mean "
              f"{kernelbench.get('mean_seconds', 0):.1f} s per evaluation, dominated by the load_inline build, "
              "which does not depend on the kernel; kernelsmith's rate is measured on every candidate)")
    if kernelbench.get("kernels") and ours_strict:
        rows = [[r["kernel"], ours_strict.get(r["kernel"]), r.get("median_ms"),
                 (ours_strict[r["kernel"]] / r["median_ms"]) if r.get("median_ms") and r["kernel"] in ours_strict else None,
                 r.get("correct"), r.get("compile_s")] for r in kernelbench["kernels"]]
        print("\nThe KernelBench-way kernels: median times side by side")
        print(table(["kernel", "ours ms", "KernelBench ms", "ratio", "correct", "load_inline s"], rows))
    report.target("throughput_cold_ge_50x", None if ratio is None else ratio >= TARGET_THROUGHPUT_RATIO,
                  "n/a" if ratio is None else f"{ratio:.1f}x")
    report.target("throughput_warm_ge_100x", None if warm_ratio is None else warm_ratio >= TARGET_WARM_THROUGHPUT_RATIO,
                  "n/a" if warm_ratio is None else f"{warm_ratio:.1f}x")

    print("\nTargets")
    print(table(["target", "met", "detail"],
                [[name, t["met"], t["detail"]] for name, t in report.data["targets"].items()]))
    report.save()
    shutil.rmtree(cache_root, ignore_errors=True)
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
