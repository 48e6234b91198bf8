#!/usr/bin/env python3
"""kernelsmith's evaluator on Triton candidates, measured side by side with the usual ways of evaluating them.

The candidates are the built-in tasks' Triton seeds (tasks/<task>/seed.py, or the manifest's
``seeds.triton``) and copies of each with one ``# @tune`` parameter set to another allowed value. Three
phases, in one run:

1. Agreement: each seed at its default @tune values and the task's main sizes, kernelsmith's strict
   median (``Evaluation.timing.median_ms``) against ``triton.testing.do_bench``'s median of the same
   kernel launched through triton's own JIT from Python (``kernel[grid](*args, **constexprs,
   num_warps=W, num_stages=S)`` for each ``# @launch`` line, bound from the plan). Both sides evict the
   L2 before each sample by a read (kernelsmith's built-in read kernel; do_bench's cache clearing made a
   read by triton_timing.py). Target: within 2% for kernels of 50 us or more.
2. Throughput: evaluations per minute through kernelsmith's evaluator (screen mode, a fresh compile
   cache, no disk cache) over the seeds and their variants, against the KernelGYM / KernelBench way of
   evaluating Triton: per kernel a fresh Python process that imports torch and triton, loads a generated
   ``ModelNew(torch.nn.Module)`` whose forward launches the kernel(s) (JIT-compiled on the first call,
   with a fresh triton cache), runs 5 correctness trials against the task's PyTorch expression, then 3
   warm-ups and 100 trials timed with CUDA events. That way is measured on ``--baseline-kernels`` seeds
   and its rate extrapolated from their mean wall time (process start included). Target: >= 20x.

Output: tables on stdout and, with --out, a JSON report written after every phase. Exit status 1 when a
phase failed or a target was missed, 2 when the machine lacks what the benchmark needs (a CUDA GPU,
kernelsmith with its CUDA backend, torch, triton). See bench/README.md.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import bench_evaluator as be  # noqa: E402  (after the bench folder is on the path)
from bench_evaluator import BenchCandidate, BenchTask, Report, table  # noqa: E402

TARGET_AGREEMENT = 0.02
TARGET_THROUGHPUT_RATIO = 20.0
PHASES = ("agreement", "throughput", "kernelgym")
SPECIALIZATIONS = ("kernelsmith", "triton")
KERNELGYM_TIMEOUT_S = 600

# ------------------------------------------------------------------------------------------ candidates


def triton_seed_path(task: BenchTask) -> Optional[Path]:
    """The task's Triton seed: the manifest's seeds.triton, else seed.py in its folder; None without one."""
    declared = task.manifest.get("seeds", {}).get("triton")
    path = task.folder / (declared or "seed.py")
    return path if path.is_file() else None


def build_triton_candidates(tasks: Sequence[BenchTask], variants_per_task: int,
                            device_env: Dict[str, int]) -> Tuple[List[BenchCandidate], List[str]]:
    """Each task's Triton seed and up to `variants_per_task` variants of it (one @tune value changed, spread
    over the tunables) whose plan binds on the device at the task's main sizes; variants whose @require
    fails are passed over, the next allowed value taken instead. Returns the candidates and what was
    passed over, as lines to print."""
    candidates: List[BenchCandidate] = []
    passed_over: List[str] = []
    for task in tasks:
        path = triton_seed_path(task)
        if path is None:
            continue
        seed = BenchCandidate(task, "seed", path.read_text(), language="triton")
        candidates.append(seed)
        kept = 0
        for label, source in be.seed_variants(seed.source, 10 ** 6, marker="#"):
            if kept >= variants_per_task:
                break
            variant = BenchCandidate(task, label, source, language="triton")
            try:
                bind_triton_plan(variant, device_env)
            except ValueError as error:
                passed_over.append(f"{variant.key}: {error}")
                continue
            candidates.append(variant)
            kept += 1
    return candidates, passed_over


# ------------------------------------------------------------------------------------------ launch plans
# The plan is read by kernelsmith's own parser (LaunchPlan.parse(source, "triton")) and its expressions by
# kernelsmith.evaluate_expression, so the benchmark binds exactly what the evaluator binds.


@dataclass
class TritonLaunch:
    kernel: str
    line: int
    grid: Tuple[int, int, int]
    args: List[Tuple[str, Any]]  # ("tensor", name) for task tensors and workspaces, ("int", value)
    constexprs: Dict[str, int]
    num_warps: int
    num_stages: int

    def keywords(self) -> Dict[str, int]:
        """The launch's keyword arguments: the constexprs, then num_warps and num_stages."""
        return {**self.constexprs, "num_warps": self.num_warps, "num_stages": self.num_stages}


@dataclass
class TritonPlan:
    launches: List[TritonLaunch]
    workspaces: List[Tuple[str, str, int]]  # name, dtype, count: what bench_evaluator.make_tensors allocates
    tunables: Dict[str, int]


def expression_evaluator() -> Callable[[str, Dict[str, int]], int]:
    """kernelsmith's own evaluator of plan expressions (comparisons and && for @require included), else the
    benchmark's arithmetic subset."""
    module = be.ks()
    if hasattr(module, "evaluate_expression"):
        return lambda expression, bindings: int(module.evaluate_expression(str(expression), bindings))
    return be.evaluate_expression


def _dtype_name(dtype: Any) -> str:
    return getattr(dtype, "name", str(dtype).split(".")[-1])


def bind_triton_plan(candidate: BenchCandidate, device_env: Dict[str, int],
                     sizes: Optional[Dict[str, int]] = None) -> TritonPlan:
    """The candidate's plan bound to numbers at `sizes` (default: the task's main sizes) on a device with
    the attributes `device_env` (bench_evaluator.device_bindings). Raises ValueError for a plan that does
    not parse or bind, or a @require that does not hold."""
    module = be.ks()
    try:
        plan = module.LaunchPlan.parse(candidate.source, "triton")
    except Exception as error:  # PlanError, with the line in its message
        raise ValueError(f"the plan does not parse: {error}") from None
    evaluate = expression_evaluator()
    sizes = dict(candidate.task.sizes if sizes is None else sizes)
    tunables = {t.name: int(t.value) for t in plan.tunables}
    bindings = {**sizes, **tunables, **device_env}

    def value(expression: str, what: str) -> int:
        try:
            return evaluate(expression, bindings)
        except Exception as error:  # PlanError: unknown name, division by zero, overflow
            raise ValueError(f"{what} `{expression}`: {error}") from None

    lines = list(plan.requirement_lines)
    for index, requirement in enumerate(plan.requirements):
        if not value(requirement, "@require"):
            line = lines[index] if index < len(lines) else 0
            raise ValueError(f"line {line}: @require {requirement} does not hold "
                             f"({', '.join(f'{k}={v}' for k, v in {**sizes, **tunables}.items())})")
    workspaces = [(w.name, _dtype_name(w.dtype), value(w.count, f"@workspace {w.name}")) for w in plan.workspaces]
    buffers = {t.name for t in candidate.task.tensors} | {name for name, _, _ in workspaces}
    launches = []
    for decl in plan.launches:
        where = f"line {decl.line}: {decl.kernel}"
        args: List[Tuple[str, Any]] = []
        for arg in decl.args:
            arg = arg.strip()
            args.append(("tensor", arg) if arg in buffers else ("int", value(arg, f"{where}: argument")))
        grid = [value(e or "1", f"{where}: grid") for e in decl.grid]
        grid = (grid + [1, 1, 1])[:3]
        constexprs = {name: value(expression, f"{where}: {name}") for name, expression in decl.constexprs}
        launches.append(TritonLaunch(decl.kernel, int(decl.line), (grid[0], grid[1], grid[2]), args, constexprs,
                                     value(decl.num_warps or "4", f"{where}: num_warps"),
                                     value(decl.num_stages or "3", f"{where}: num_stages")))
    return TritonPlan(launches, workspaces, tunables)


# ------------------------------------------------------------------------------------------ triton's JIT


def load_module(path: Path, name: str) -> Any:
    """Executes a Python file as a module of its own (triton's JIT reads the kernels' source from it)."""
    spec = importlib.util.spec_from_file_location(name, str(path))
    if spec is None or spec.loader is None:
        raise ValueError(f"cannot load {path} as a module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def module_name(candidate: BenchCandidate, prefix: str) -> str:
    return prefix + re.sub(r"\W", "_", candidate.key)


def write_source(directory: Path, candidate: BenchCandidate, text: str, prefix: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{module_name(candidate, prefix)}.py"
    path.write_text(text)
    return path


def jit_kernels(module: Any, plan: TritonPlan, specialization: str) -> List[Any]:
    """The @triton.jit function of each launch, in order. With specialization "kernelsmith" the integer
    arguments are not specialized (kernelsmith compiles them as plain i32/i64, with only the pointers
    marked 16-byte aligned), so that triton's JIT builds the code kernelsmith times; with "triton" the
    functions are used as written (triton also specializes integers divisible by 16 and equal to 1)."""
    from triton.runtime.jit import JITFunction

    if specialization not in SPECIALIZATIONS:
        raise ValueError(f"specialization {specialization!r}: expected one of {', '.join(SPECIALIZATIONS)}")
    kernels: List[Any] = []
    rebuilt: Dict[Tuple[str, Tuple[str, ...]], Any] = {}
    for launch in plan.launches:
        fn = getattr(module, launch.kernel, None)
        if not isinstance(fn, JITFunction):
            raise ValueError(f"line {launch.line}: the launch names {launch.kernel}, which is not a @triton.jit "
                             "function of the file")
        runtime = [p for p in fn.params if not p.is_constexpr]
        if len(runtime) != len(launch.args):
            raise ValueError(f"line {launch.line}: {launch.kernel} takes {len(runtime)} non-constexpr argument(s), "
                             f"the launch passes {len(launch.args)}")
        if specialization == "kernelsmith":
            integers = tuple(p.name for p, (kind, _) in zip(runtime, launch.args) if kind == "int")
            key = (launch.kernel, integers)
            if key not in rebuilt:
                rebuilt[key] = JITFunction(
                    fn.fn, version=getattr(fn, "version", None),
                    do_not_specialize=list(getattr(fn, "do_not_specialize", None) or []) + list(integers),
                    do_not_specialize_on_alignment=getattr(fn, "do_not_specialize_on_alignment", None),
                    debug=getattr(fn, "debug", None), noinline=getattr(fn, "noinline", None))
            fn = rebuilt[key]
        kernels.append(fn)
    return kernels


def jit_runner(kernels: Sequence[Any], plan: TritonPlan, tensors: Dict[str, Any]) -> Callable[[], None]:
    """One call launches the plan's kernels in order through triton's JIT, with the tensors given."""
    calls = []
    for fn, launch in zip(kernels, plan.launches):
        args = [tensors[value] if kind == "tensor" else int(value) for kind, value in launch.args]
        calls.append((fn[launch.grid], args, launch.keywords()))

    def run() -> None:
        for launcher, args, keywords in calls:
            launcher(*args, **keywords)

    return run


def jit_median_ms(candidate: BenchCandidate, device: Any, specialization: str, work_dir: Path,
                  rep_ms: int) -> Tuple[float, str]:
    """do_bench's median of the candidate launched through triton's JIT, the L2 evicted by a read before
    each sample (triton_timing.do_bench_median). The launch is first checked once against the task's
    PyTorch expression; a mismatch is returned as a note (the timing is still taken)."""
    import torch
    from triton_timing import do_bench_median

    plan = bind_triton_plan(candidate, be.device_bindings(device))
    path = write_source(work_dir, candidate, candidate.source, "ks_jit_")
    kernels = jit_kernels(load_module(path, module_name(candidate, "ks_jit_")), plan, specialization)
    outputs = [t.name for t in candidate.task.tensors if t.role == "output"]

    def produce(tensors: Dict[str, Any]) -> List[Any]:
        jit_runner(kernels, plan, tensors)()
        return [tensors[name] for name in outputs]

    correct = be.kernelbench_correct(candidate.task, plan, produce, trials=1)
    tensors = be.make_tensors(candidate.task, plan, seed=7)
    run = jit_runner(kernels, plan, tensors)
    run()
    torch.cuda.synchronize()
    median = do_bench_median(run, warmup=25, rep=rep_ms)
    return median, ("" if correct or not candidate.task.pytorch else "the JIT launch's outputs differ from PyTorch")


# ------------------------------------------------------------------------------------------ the KernelGYM way


def _var(name: str) -> str:
    return f"t_{name}"


def model_source(candidate: BenchCandidate, plan: TritonPlan) -> str:
    """A KernelBench-style module: the candidate's kernels unchanged, then `ModelNew(torch.nn.Module)` whose
    forward takes the task's inputs (in manifest order), allocates the outputs and workspaces, launches
    the plan's kernels through triton's JIT (sizes bound at the task's main sizes) and returns the outputs."""
    task = candidate.task
    inputs = [t for t in task.tensors if t.role == "input"]
    outputs = [t for t in task.tensors if t.role == "output"]
    device = f"{_var(inputs[0].name)}.device" if inputs else "'cuda'"
    lines = [
        candidate.source.rstrip("\n"), "", "",
        "# The model a KernelGYM / KernelBench harness evaluates (written by bench/bench_triton.py).",
        "import torch as _ks_torch", "", "",
        "class ModelNew(_ks_torch.nn.Module):",
        f'    """{task.name}: {", ".join(t.name for t in outputs)} from {", ".join(t.name for t in inputs)}."""',
        "",
        f"    def forward(self{''.join(', ' + _var(t.name) for t in inputs)}):",
    ]
    for spec in outputs:
        shape = tuple(be.evaluate_expression(e, task.sizes) for e in spec.shape)
        lines.append(f"        {_var(spec.name)} = _ks_torch.empty({shape!r}, dtype=_ks_torch.{be.TORCH_DTYPES[spec.dtype]}, "
                     f"device={device})")
    for name, dtype, count in plan.workspaces:
        lines.append(f"        {_var(name)} = _ks_torch.empty(({max(count, 1)},), dtype=_ks_torch.{be.TORCH_DTYPES[dtype]}, "
                     f"device={device})")
    for launch in plan.launches:
        arguments = [_var(value) if kind == "tensor" else repr(int(value)) for kind, value in launch.args]
        arguments += [f"{name}={value!r}" for name, value in launch.keywords().items()]
        lines.append(f"        {launch.kernel}[{launch.grid!r}]({', '.join(arguments)})")
    if len(outputs) == 1:
        lines.append(f"        return {_var(outputs[0].name)}")
    else:
        lines.append(f"        return ({''.join(_var(t.name) + ', ' for t in outputs)})")
    return "\n".join(lines) + "\n"


def kernelgym_child(spec_path: str) -> int:
    """Runs in the fresh process: imports torch and triton, loads ModelNew, compiles on the first call,
    checks 5 trials against PyTorch, times 3 warm-ups + 100 trials with CUDA events (bench_evaluator's
    KernelBench helpers). Writes its figures as JSON to the spec's "result" path."""
    spec = json.loads(Path(spec_path).read_text())
    result: Dict[str, Any] = {}
    started = time.perf_counter()
    try:
        import torch
        import triton  # noqa: F401  (imported before the model, as such harnesses do)

        result["import_s"] = time.perf_counter() - started
        task = be.load_task(Path(spec["task_folder"]))
        model = load_module(Path(spec["module"]), "ks_kernelgym_model").ModelNew().cuda()
        inputs = [t.name for t in task.tensors if t.role == "input"]
        no_workspaces = SimpleNamespace(workspaces=[])  # ModelNew allocates its own

        def produce(tensors: Dict[str, Any]) -> List[Any]:
            with torch.no_grad():
                produced = model(*[tensors[name] for name in inputs])
            return list(produced) if isinstance(produced, (tuple, list)) else [produced]

        first = time.perf_counter()
        produce(be.make_tensors(task, no_workspaces, seed=999))  # JIT compile
        torch.cuda.synchronize()
        result["compile_s"] = time.perf_counter() - first
        checked = time.perf_counter()
        result["correct"] = be.kernelbench_correct(task, no_workspaces, produce)
        result["correctness_s"] = time.perf_counter() - checked
        timed = time.perf_counter()
        tensors = be.make_tensors(task, no_workspaces, seed=7)
        arguments = [tensors[name] for name in inputs]
        with torch.no_grad():
            times = be.kernelbench_times(lambda: model(*arguments))
        result["timing_s"] = time.perf_counter() - timed
        result["median_ms"] = statistics.median(times)
        status = 0
    except Exception as error:  # noqa: BLE001 - reported to the parent
        result["error"] = "".join(traceback.format_exception(type(error), error, error.__traceback__))
        status = 1
    result["child_s"] = time.perf_counter() - started
    Path(spec["result"]).write_text(json.dumps(result))
    return status


def kernelgym_evaluate(candidate: BenchCandidate, device_env: Dict[str, int], work_dir: Path,
                       timeout_s: int) -> Dict[str, Any]:
    """One candidate evaluated the KernelGYM way; `wall_s` is the whole subprocess, start to exit."""
    plan = bind_triton_plan(candidate, device_env)
    folder = work_dir / module_name(candidate, "")
    module = write_source(folder, candidate, model_source(candidate, plan), "ks_model_")
    spec_path, result_path = folder / "spec.json", folder / "result.json"
    spec_path.write_text(json.dumps({"task_folder": str(candidate.task.folder), "module": str(module),
                                     "result": str(result_path)}))
    env = dict(os.environ, TRITON_CACHE_DIR=str(folder / "triton_cache"))  # nothing reused from earlier builds
    command = [sys.executable, str(Path(__file__).resolve()), "--kernelgym-child", str(spec_path)]
    started = time.perf_counter()
    try:
        completed = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return {"kernel": candidate.key, "error": f"the process did not finish within {timeout_s} s"}
    wall_s = time.perf_counter() - started
    result: Dict[str, Any] = {"kernel": candidate.key}
    if result_path.is_file():
        result.update(json.loads(result_path.read_text()))
    if completed.returncode != 0 or "error" in result:
        tail = (completed.stdout + completed.stderr)[-2000:]
        result["error"] = (result.get("error") or f"exit status {completed.returncode}") + (
            f"\n{tail}" if tail.strip() else "")
        return result
    result["wall_s"] = wall_s
    return result


# ------------------------------------------------------------------------------------------ phases


def phase_agreement(report: Report, candidates: Sequence[BenchCandidate], device: Any, cache_root: Path,
                    specialization: str, rep_ms: int) -> Dict[str, float]:
    seeds = [c for c in candidates if c.label == "seed"]

    def measure(candidate: BenchCandidate, dev: Any) -> Tuple[float, str]:
        return jit_median_ms(candidate, dev, specialization, cache_root / "jit_modules", rep_ms)

    report.data["phases"]["agreement_setup"] = {"jit_specialization": specialization, "do_bench_rep_ms": rep_ms,
                                                "l2_eviction": "a read on both sides"}
    return be.phase_agreement(
        report, seeds, device, len(seeds), cache_root, measure=measure, needs=("torch", "triton"),
        labels=("seed",), target=TARGET_AGREEMENT,
        how=f"Triton seeds, main sizes; do_bench launches through triton's JIT, {specialization} specialization; "
            "L2 evicted by a read on both sides")


def phase_throughput(report: Report, tasks: Sequence[BenchTask], candidates: Sequence[BenchCandidate],
                     cache_root: Path) -> Optional[float]:
    rate = be.phase_throughput(report, tasks, candidates, cache_root)
    statuses = report.data["phases"].get("throughput", {}).get("statuses", {})
    if not statuses.get("ok"):
        raise RuntimeError(f"no Triton candidate was evaluated ok by kernelsmith (statuses {statuses}); "
                           "is the evaluator wired for Triton candidates?")
    failed = [k for k in report.data["phases"]["throughput"].get("kernels", []) if k.get("status") != "ok"]
    for kernel in failed:
        print(f"  not ok: {kernel['kernel']}: {kernel['status']} {kernel.get('message', '')[:200]}", flush=True)
    return rate


def phase_kernelgym(report: Report, candidates: Sequence[BenchCandidate], device: Any, count: int,
                    work_dir: Path, timeout_s: int) -> Optional[float]:
    """The KernelGYM way on `count` seeds of different tasks; its rate is 60 s over their mean wall time."""
    picked = [c for c in candidates if c.label == "seed" and c.task.pytorch][:count]
    device_env = be.device_bindings(device)
    results = []
    for candidate in picked:
        print(f"KernelGYM way: {candidate.key} (fresh process: import torch + triton, JIT compile, 5 checks, "
              "103 timed runs) ...", flush=True)
        try:
            results.append(kernelgym_evaluate(candidate, device_env, work_dir, timeout_s))
        except Exception as error:  # noqa: BLE001 - one kernel's failure must not end the phase
            results.append({"kernel": candidate.key, "error": str(error)})
        row = results[-1]
        if "wall_s" in row:
            print(f"  {row['wall_s']:.2f} s (imports {row['import_s']:.2f} s, JIT compile {row['compile_s']:.2f} s, "
                  f"checks {row['correctness_s']:.2f} s, timing {row['timing_s']:.2f} s), correct={row['correct']}, "
                  f"median {row['median_ms']:.4f} ms", flush=True)
        else:
            print(f"  failed: {row['error']}", flush=True)
    measured = [r for r in results if "wall_s" in r]
    report.data["phases"]["kernelgym"] = {"kernels": results, "candidates": len(picked)}
    if not measured:
        raise RuntimeError("no kernel could be evaluated the KernelGYM way")
    mean_s = statistics.mean(r["wall_s"] for r in measured)
    rate = 60.0 / mean_s
    report.data["phases"]["kernelgym"].update({"mean_seconds": mean_s, "per_minute": rate, "measured": len(measured)})
    return rate


# ------------------------------------------------------------------------------------------ environment


class DryRunDevice(be._DryRunDevice):
    """H100-like attributes for binding plans without a GPU."""

    name = "H100-like (dry run)"


def missing_requirements() -> List[str]:
    """What this machine lacks for the benchmark, each as a sentence; empty when it can run."""
    missing = []
    try:
        import kernelsmith
    except Exception as error:  # noqa: BLE001
        missing.append(f"kernelsmith's Python package is not importable ({error}); install it with "
                       "`tools/gpu-check.sh install` or `pip install --no-build-isolation .`")
        kernelsmith = None
    if kernelsmith is not None:
        lacking = [n for n in ("LaunchPlan", "create_evaluator", "EvaluatorOptions", "Candidate", "Task")
                   if not hasattr(kernelsmith, n)]
        if lacking:
            missing.append(f"this kernelsmith lacks {', '.join(lacking)} (its bindings are older than the benchmark)")
        else:
            try:
                be.cuda_device()
            except Exception as error:  # noqa: BLE001
                missing.append(f"a CUDA GPU for kernelsmith: {error}")
    try:
        import torch

        if not torch.cuda.is_available():
            missing.append("a CUDA GPU visible to torch (torch.cuda.is_available() is False)")
    except Exception as error:  # noqa: BLE001
        missing.append(f"torch is not importable ({error}); install torch with CUDA")
    try:
        import triton  # noqa: F401
    except Exception as error:  # noqa: BLE001
        missing.append(f"triton is not importable ({error}); install it with `pip install kernelsmith[triton]`")
    return missing


def versions() -> Dict[str, Any]:
    import kernelsmith
    import torch
    import triton

    return {"kernelsmith": kernelsmith.__version__, "torch": torch.__version__, "triton": triton.__version__,
            "cuda": torch.version.cuda, "python": sys.version.split()[0]}


# ------------------------------------------------------------------------------------------ main


def parse_args(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", default="", help="comma-separated task names (default: every task with a Triton seed)")
    parser.add_argument("--variants-per-task", type=int, default=4,
                        help="seed variants with another @tune value per task, for the throughput phase (default 4)")
    parser.add_argument("--baseline-kernels", type=int, default=6,
                        help="seeds (of different tasks) evaluated the KernelGYM way; its rate is extrapolated from "
                             "their mean cost (default 6; 0 skips that phase)")
    parser.add_argument("--jit-specialization", choices=SPECIALIZATIONS, default="triton",
                        help="agreement phase: 'triton' (default) keeps triton's own specialization of integer "
                             "arguments (divisible by 16, equal to 1); kernelsmith specializes the first the same way "
                             "(docs/triton.md); 'kernelsmith' compiles integer arguments unspecialized in the JIT")
    parser.add_argument("--rep-ms", type=int, default=100, help="do_bench's rep (ms of timed runs per kernel; default 100)")
    parser.add_argument("--child-timeout", type=int, default=KERNELGYM_TIMEOUT_S,
                        help=f"seconds one KernelGYM-way process may take (default {KERNELGYM_TIMEOUT_S})")
    parser.add_argument("--skip", default="", help="phases to skip: " + ",".join(PHASES))
    parser.add_argument("--out", default="", help="write the results as JSON here (with --dry-run: a folder for the "
                                                  "generated ModelNew modules)")
    parser.add_argument("--dry-run", action="store_true",
                        help="no GPU: bind every candidate's plan to an H100-like device, write and compile() the "
                             "KernelGYM-way modules, then stop")
    parser.add_argument("--kernelgym-child", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    unknown = sorted({s for s in args.skip.split(",") if s} - set(PHASES))
    if unknown:
        parser.error(f"--skip: unknown phase(s) {', '.join(unknown)}; the phases are {', '.join(PHASES)}")
    return args


def dry_run(tasks: Sequence[BenchTask], variants_per_task: int, out_dir: Path) -> int:
    device_env = be.device_bindings(DryRunDevice())
    candidates, passed_over = build_triton_candidates(tasks, variants_per_task, device_env)
    print(f"{len(candidates)} Triton candidates over {len({c.task.name for c in candidates})} tasks "
          f"(an H100-like device; modules in {out_dir})")
    for line in passed_over:
        print(f"passed over: {line}")
    problems = 0
    for candidate in candidates:
        try:
            plan = bind_triton_plan(candidate, device_env)
            source = model_source(candidate, plan)
            compile(source, f"{candidate.key}.py", "exec")
            write_source(out_dir, candidate, source, "ks_model_")
            print(f"{candidate.key}: " + "; ".join(
                f"{l.kernel}[{', '.join(map(str, l.grid))}]({', '.join(str(v) for _, v in l.args)}, "
                + ", ".join(f"{k}={v}" for k, v in l.keywords().items()) + ")" for l in plan.launches))
        except Exception as error:  # noqa: BLE001
            problems += 1
            print(f"{candidate.key}: {error}")
    if not candidates:
        print("no task has a Triton seed (tasks/<task>/seed.py)")
    return 1 if problems or not candidates else 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    if args.kernelgym_child:
        return kernelgym_child(args.kernelgym_child)
    command = shlex.join(["python3", *(sys.argv if argv is None else [sys.argv[0], *argv])])
    names = [n for n in args.tasks.split(",") if n]
    skip = {s for s in args.skip.split(",") if s}
    cache_root = Path(tempfile.mkdtemp(prefix="ks_bench_triton_"))
    # Everything triton builds in this run goes to a folder of its own: nothing from earlier runs is reused.
    os.environ.setdefault("TRITON_CACHE_DIR", str(cache_root / "triton_cache"))

    if args.dry_run:
        try:
            tasks = be.load_tasks(names)
            return dry_run(tasks, args.variants_per_task, Path(args.out) if args.out else cache_root / "modules")
        except Exception as error:  # noqa: BLE001
            print(f"bench_triton.py --dry-run: {error}", file=sys.stderr)
            return 2
    missing = missing_requirements()
    if missing:
        print("bench_triton.py cannot run on this machine; it needs:\n" + "\n".join(f"  - {m}" for m in missing) +
              "\n(`python3 bench/bench_triton.py --dry-run` checks the plans and generated modules without a GPU)",
              file=sys.stderr)
        return 2

    report = Report(args.out)
    report.data.update({"benchmark": "bench_triton", "command": command, "python": sys.executable,
                        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                        "targets_set": {"agreement": TARGET_AGREEMENT, "throughput_ratio": TARGET_THROUGHPUT_RATIO,
                                        "judged_from_ms": be.NOISE_MIN_MS}})
    try:
        device = be.cuda_device()
        report.data["versions"] = versions()
        report.data["device"] = {"name": device.name, "architecture": device.architecture,
                                 "sms": device.compute_units, "l2_bytes": device.l2_bytes}
        print(f"device: {device.name} ({device.architecture}, {device.compute_units} SMs); "
              + ", ".join(f"{k} {v}" for k, v in report.data["versions"].items()))
        tasks = be.load_tasks(names)
        candidates, passed_over = build_triton_candidates(tasks, args.variants_per_task, be.device_bindings(device))
        for line in passed_over:
            print(f"passed over: {line}")
        if not candidates:
            raise RuntimeError("no task has a Triton seed (tasks/<task>/seed.py)" +
                               (f" among {', '.join(names)}" if names else ""))
        seeds = [c for c in candidates if c.label == "seed"]
        print(f"{len(seeds)} Triton seeds, {len(candidates)} candidates with their variants")
        report.data["candidates"] = [c.key for c in candidates]
        report.data["passed_over"] = passed_over
        tasks = [t for t in tasks if any(c.task is t for c in candidates)]
        be.make_ks_objects(tasks, candidates)
    except Exception as error:  # noqa: BLE001
        report.error("setup", error)
        report.save()
        return 1

    if "agreement" not in skip:
        report.phase("agreement", lambda: phase_agreement(
            report, candidates, device, cache_root, args.jit_specialization, args.rep_ms))
    ours_rate = theirs_rate = None
    if "throughput" not in skip:
        ours_rate = report.phase("throughput", lambda: phase_throughput(report, tasks, candidates, cache_root))
    if "kernelgym" not in skip and args.baseline_kernels > 0:
        theirs_rate = report.phase("kernelgym", lambda: phase_kernelgym(
            report, candidates, device, args.baseline_kernels, cache_root / "kernelgym", args.child_timeout))

    throughput = report.data["phases"].get("throughput", {})
    kernelgym = report.data["phases"].get("kernelgym", {})
    ratio = ours_rate / theirs_rate if ours_rate and theirs_rate else None
    with_startup = throughput.get("per_minute_with_startup")
    print("\nEnd-to-end evaluations per minute, Triton candidates")
    print(table(["", "kernelsmith", "KernelGYM way", "ratio"], [
        ["evaluations/min", ours_rate, theirs_rate, ratio],
        ["  with start-up", with_startup, theirs_rate, with_startup / theirs_rate if with_startup and theirs_rate else None],
        ["kernels measured", throughput.get("evaluations"), kernelgym.get("measured"), None],
    ]))
    if theirs_rate:
        print(f"(KernelGYM-way rate extrapolated from {kernelgym.get('measured')} kernel(s): mean "
              f"{kernelgym.get('mean_seconds', 0):.2f} s per evaluation, a fresh process each; kernelsmith's "
              "rate is measured on every candidate)")
    ours_strict = report.data["phases"].get("ours_strict", {}).get("median_ms", {})
    if kernelgym.get("kernels"):
        rows = [[r["kernel"], r.get("wall_s"), r.get("import_s"), r.get("compile_s"), r.get("correct"),
                 r.get("median_ms"), ours_strict.get(r["kernel"])] for r in kernelgym["kernels"]]
        print("\nThe KernelGYM-way kernels")
        print(table(["kernel", "wall s", "imports s", "JIT compile s", "correct", "median ms (zeroing flush)",
                     "ours strict ms"], rows))
    report.target("throughput_ge_20x", None if ratio is None else ratio >= TARGET_THROUGHPUT_RATIO,
                  "n/a" if ratio is None else f"{ratio:.1f}x")

    print("\nTargets")
    print(table(["target", "met", "detail"],
                [[name, t["met"], t["detail"]] for name, t in report.data["targets"].items()]))
    if report.data["errors"]:
        print("failed phases: " + ", ".join(report.data["errors"]))
    report.save()
    shutil.rmtree(cache_root, ignore_errors=True)
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
