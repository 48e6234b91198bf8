#!/usr/bin/env python3
"""The built-in task suite on a CUDA GPU: a short evolution per task, the best kernel measured side by
side with the task's reference, PyTorch eager and torch.compile.

For each task (tasks/*/task.json with a CUDA reference):

1. An evolution through the Python API (``kernelsmith.Evolution``) with the parameter mutator, which
   varies the seed's ``// @tune`` parameters: a fixed evaluation budget, screen-mode timing, and a wall
   time share of the whole run's limit.
2. The best candidate evaluated again in strict mode (the final numbers): its median time, its speedup
   over the task's reference (timed by the same protocol in the same evaluation) and its speed of light
   (the fraction of the device's measured peak bandwidth or fp32 throughput, from ``Evaluation.sol``).
3. The task's ``pytorch`` expression on inputs drawn from the task's distributions at the timing sizes,
   timed eager and under ``torch.compile`` (``triton.testing.do_bench``, median, the L2 evicted by a read
   before each run, as the evaluator evicts it: triton_timing.py).

   Where the inputs are float32, eager is also timed with TF32 off (``x eager fp32``): PyTorch's defaults
   let cuDNN convolutions run in TF32, whose rounding the tasks' tolerances reject. Both outputs are
   checked against the expression in float64 with the task's tolerance, and the eager time the targets
   use is the one whose output passes ("eager at the task's accuracy").

Prints one table, and with ``--json`` writes every number. A task that fails is reported with its error
and the run goes on. Targets checked in the last column: memory-bound tasks at >= 80% of the measured
peak bandwidth, half-precision matrix products at >= 90% of cuBLAS (torch.matmul), the other
compute-bound tasks at >= 1.0x eager at the task's accuracy (attention >= 1.5x).

    python3 bench/bench_suite.py                   # every task, about 8 minutes on an H100
    python3 bench/bench_suite.py --tasks relu,softmax --budget 12 --json suite.json
    python3 bench/bench_suite.py --backend opencl --no-pytorch --tasks relu --budget 4   # smoke test, no GPU
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

REPO = Path(__file__).resolve().parents[1]

TORCH_DTYPES = {"float16": "float16", "bfloat16": "bfloat16", "float32": "float32", "float64": "float64",
                "int8": "int8", "uint8": "uint8", "int32": "int32", "int64": "int64"}

# Tasks whose targets are relative to cuBLAS rather than to the device's bandwidth, and the plain
# cuBLAS call each is compared with (matmul_fp16 writes float32, which `A @ B` does not: its pytorch
# expression adds a cast that would flatter the comparison).
CUBLAS_TASKS = {"matmul_fp16": "A @ B", "matmul_bf16": "A @ B"}
MEMORY_BOUND_TARGET = 0.80
CUBLAS_TARGET = 0.90
# Compute-bound tasks (the rest): the speedup over eager at the task's accuracy they must reach.
EAGER_TARGETS = {"attention": 1.5}
EAGER_TARGET = 1.0
# Below this many flops per byte at the timing sizes a task is memory-bound on an H100.
MEMORY_BOUND_INTENSITY = 10.0


@dataclass
class TaskResult:
    task: str
    status: str = "ok"  # "ok", or "failed: <what>"
    evaluations: int = 0
    evolution_seconds: float = 0.0
    stop_reason: str = ""
    best_id: str = ""
    best_params: Dict[str, int] = field(default_factory=dict)
    best_ms: float = math.nan
    best_noise: float = math.nan
    reference_ms: float = math.nan
    speedup_vs_reference: float = math.nan
    eager_ms: float = math.nan
    compiled_ms: float = math.nan
    compiled_max_autotune_ms: float = math.nan
    speedup_vs_eager: float = math.nan
    eager_fp32_ms: float = math.nan      # eager with TF32 off (float32 tasks)
    speedup_vs_eager_fp32: float = math.nan
    # PyTorch's outputs against the expression in float64 by the evaluator's rule (accuracy_against):
    # the fraction of elements outside the tolerance and the relative L2 error, with PyTorch's defaults
    # and with TF32 off (NaN where not checked).
    eager_outside_tolerance: float = math.nan
    eager_relative_l2: float = math.nan
    eager_fp32_outside_tolerance: float = math.nan
    eager_fp32_relative_l2: float = math.nan
    speedup_vs_compiled: float = math.nan
    speedup_vs_max_autotune: float = math.nan
    cublas_ms: float = math.nan
    fraction_of_cublas: float = math.nan
    bandwidth_fraction: float = math.nan
    compute_fraction: float = math.nan
    achieved_gbps: float = math.nan
    achieved_gflops: float = math.nan
    memory_bound: bool = False
    target: str = ""
    target_met: Optional[bool] = None
    notes: List[str] = field(default_factory=list)


# ------------------------------------------------------------------------------------------ the tasks


def task_manifests(names: Optional[List[str]]) -> Dict[str, Dict[str, Any]]:
    manifests = {}
    for path in sorted((REPO / "tasks").glob("*/task.json")):
        manifest = json.loads(path.read_text())
        if names and manifest["name"] not in names:
            continue
        if "cuda" not in manifest.get("references", {}):
            continue
        manifest["_folder"] = str(path.parent)
        manifests[manifest["name"]] = manifest
    if names:
        missing = sorted(set(names) - set(manifests))
        if missing:
            raise SystemExit(f"unknown or non-CUDA tasks: {', '.join(missing)}")
    return manifests


def evaluate_expression(expression: Any, sizes: Dict[str, int]) -> int:
    """A manifest's shape entry or work expression (a number or kernelsmith's expression language)."""
    import kernelsmith

    return int(kernelsmith.evaluate_expression(str(expression), dict(sizes)))


# ------------------------------------------------------------------------------------------ PyTorch side


def make_inputs(manifest: Dict[str, Any], seed: int) -> Dict[str, Any]:
    import torch
    from task_inputs import draw_input

    generator = torch.Generator(device="cuda")
    generator.manual_seed(seed)
    sizes = manifest["sizes"]
    tensors = {}
    for spec in manifest["tensors"]:
        if spec.get("role", "input") != "input":
            continue
        shape = [evaluate_expression(e, sizes) for e in spec["shape"]]
        dtype = getattr(torch, TORCH_DTYPES[spec.get("dtype", "float32")])
        dist = spec.get("distribution", {"kind": "normal", "a": 0.0, "b": 1.0})
        tensors[spec["name"]] = draw_input(torch, dist, shape, dtype, generator, "cuda")
    return tensors


#: The torch.compile modes timed beside eager: the key of their time in the results, and the mode.
COMPILE_MODES = (("compiled_ms", "default"), ("compiled_max_autotune_ms", "max-autotune-no-cudagraphs"))


def pytorch_function(manifest: Dict[str, Any], names: List[str], expression: str = "") -> Any:
    """The task's PyTorch expression (or `expression`) as a function of its inputs `names`, the sizes as
    constants. A function of its own per task, which torch.compile traces whole: an eval inside one shared
    closure is a graph break (Inductor then runs nothing but eager) and, shared by every task, hits Dynamo's
    recompile limit."""
    import torch

    source = f"lambda {', '.join(names)}: {expression or manifest['pytorch']}"
    scope = {"torch": torch, "math": math, **manifest["sizes"]}
    return eval(compile(source, f"<{manifest['name']}.pytorch>", "eval"), scope)  # the manifest's own code  # noqa: S307


def compiled_function(function: Any, mode: str) -> Any:
    """A fresh torch.compile of `function` in `mode` (Dynamo's caches reset, so nothing carries from another
    task or mode)."""
    import torch

    torch._dynamo.reset()
    return torch.compile(function, mode=None if mode == "default" else mode, dynamic=False)


def float32_tolerance(manifest: Dict[str, Any]) -> Tuple[float, float]:
    """The task's (atol, rtol) for float32 outputs (task_accuracy.tolerance)."""
    from task_accuracy import tolerance

    return tolerance(manifest, "float32")


def accuracy_against(manifest: Dict[str, Any], output: Any, exact: Any) -> Tuple[float, float]:
    """`output` against `exact` (float64) by the evaluator's rule (docs/evaluation.md, "Comparison"): the
    fraction of elements with |output - exact| > atol * RMS(exact) + rtol * |exact|, and the relative L2
    error, which the evaluator holds to (atol + rtol) / 2."""
    atol, rtol = float32_tolerance(manifest)
    exact = exact.double()
    error = output.double() - exact
    rms = float(exact.square().mean().sqrt().item()) or 1.0
    outside = float((error.abs() > atol * rms + rtol * exact.abs()).double().mean().item())
    norm = float(exact.norm().item())
    return outside, (float(error.norm().item()) / norm if norm else 0.0)


def passes_task_check(manifest: Dict[str, Any], outside: float, relative_l2: float) -> bool:
    """Whether accuracy_against's figures pass the evaluator's element and relative L2 checks."""
    return outside == 0.0 and relative_l2 <= sum(float32_tolerance(manifest)) / 2


def time_pytorch(manifest: Dict[str, Any], compile_too: bool, cublas: str = "") -> Dict[str, float]:
    """Median times of the task's PyTorch expression, eager (and, for float32 inputs, eager with TF32 off)
    and under each torch.compile mode, and of `cublas` when given; each warmed, each sample after the L2 is
    evicted by a read (triton_timing.py). For float32 inputs also the fractions of the eager outputs
    outside the task's tolerance against the expression in float64."""
    import torch
    from task_accuracy import float32_exactly
    from triton_timing import do_bench_median

    inputs = make_inputs(manifest, seed=1)
    names = list(inputs)
    eager = pytorch_function(manifest, names)
    arguments = [inputs[n] for n in names]
    times = {}
    with torch.no_grad():
        default_output = eager(*arguments)
        torch.cuda.synchronize()
        times["eager_ms"] = do_bench_median(lambda: eager(*arguments), warmup=25, rep=200)
        if all(a.dtype == torch.float32 for a in arguments):
            with float32_exactly():
                fp32_output = eager(*arguments)
                torch.cuda.synchronize()
                times["eager_fp32_ms"] = do_bench_median(lambda: eager(*arguments), warmup=25, rep=200)
                exact = eager(*[a.double() for a in arguments])
            if isinstance(exact, torch.Tensor) and exact.is_floating_point():
                times["eager_outside_tolerance"], times["eager_relative_l2"] = accuracy_against(
                    manifest, default_output, exact)
                times["eager_fp32_outside_tolerance"], times["eager_fp32_relative_l2"] = accuracy_against(
                    manifest, fp32_output, exact)
            del exact
        if cublas:
            plain = pytorch_function(manifest, names, cublas)
            times["cublas_ms"] = do_bench_median(lambda: plain(*arguments), warmup=25, rep=200)
        if compile_too:
            for key, mode in COMPILE_MODES:
                compiled = compiled_function(eager, mode)
                for _ in range(3):
                    compiled(*arguments)  # the compile and its warm-up, outside the timing
                torch.cuda.synchronize()
                times[key] = do_bench_median(lambda: compiled(*arguments), warmup=25, rep=200)
    return times


# ------------------------------------------------------------------------------------------ kernelsmith side


def kernelsmith_module():
    import kernelsmith

    needed = ["Task", "EvaluatorOptions", "create_evaluator", "ParamMutator", "EvolutionConfig", "Evolution"]
    missing = [name for name in needed if not hasattr(kernelsmith, name)]
    if missing:
        raise SystemExit(f"this kernelsmith build lacks the Python bindings {', '.join(missing)}; "
                         "build the _core target with the search and evaluator bindings")
    return kernelsmith


def make_evaluator(ks, backend: str, mode: str, cache_dir: str):
    options = ks.EvaluatorOptions()
    options.backend = backend
    options.mode = mode
    options.cache_dir = cache_dir
    return ks.create_evaluator(options)


def run_task(ks, manifest: Dict[str, Any], screen, strict, args, wall_seconds: float) -> TaskResult:
    result = TaskResult(task=manifest["name"])
    sizes = manifest["sizes"]
    flops = evaluate_expression(manifest["work"]["flops"], sizes)
    min_bytes = evaluate_expression(manifest["work"]["bytes"], sizes)
    result.memory_bound = manifest["name"] not in CUBLAS_TASKS and flops / max(min_bytes, 1) < MEMORY_BOUND_INTENSITY

    task = ks.Task.load(manifest["_folder"])
    config = ks.EvolutionConfig()
    config.budget = args.budget
    config.wall_seconds = wall_seconds
    config.islands = 1
    config.mutations_in_flight = 2
    config.seed = args.seed
    config.language = args.backend
    config.db_path = ":memory:"
    evolution = ks.Evolution(task, screen, ks.ParamMutator(), config)
    started = time.perf_counter()
    outcome = evolution.run()
    result.evolution_seconds = time.perf_counter() - started
    result.evaluations = int(outcome.evaluations)
    result.stop_reason = str(outcome.stop_reason)
    if outcome.best is None:
        raise RuntimeError(f"no correct candidate after {outcome.evaluations} evaluations ({outcome.stop_reason})")
    best = outcome.best.candidate
    result.best_id = best.id()
    result.best_params = dict(ks.ParamMutator.values_of(best.source))

    # The final numbers: strict mode, the reference timed by the same protocol in the same evaluation.
    final = strict.evaluate(task, best)
    if not final.ok:
        raise RuntimeError(f"the best candidate failed its strict evaluation: {final.message}")
    result.best_ms = final.timing.median_ms
    result.best_noise = final.timing.noise
    result.reference_ms = final.baseline_timing.median_ms
    result.speedup_vs_reference = final.speedup
    if final.sol is not None:
        result.bandwidth_fraction = final.sol.bandwidth_fraction
        result.compute_fraction = final.sol.compute_fraction
        result.achieved_gbps = final.sol.achieved_gbps
        result.achieved_gflops = final.sol.achieved_gflops
    for flag in final.integrity.flags:
        result.notes.append(f"integrity: {flag}")

    if manifest.get("pytorch") and not args.no_pytorch:
        try:
            times = time_pytorch(manifest, compile_too=not args.no_compile,
                                 cublas=CUBLAS_TASKS.get(manifest["name"], ""))
            result.eager_ms = times["eager_ms"]
            result.speedup_vs_eager = result.eager_ms / result.best_ms
            if "eager_fp32_ms" in times:
                result.eager_fp32_ms = times["eager_fp32_ms"]
                result.speedup_vs_eager_fp32 = result.eager_fp32_ms / result.best_ms
            for key in ("eager_outside_tolerance", "eager_relative_l2", "eager_fp32_outside_tolerance",
                        "eager_fp32_relative_l2"):
                setattr(result, key, times.get(key, math.nan))
            if "cublas_ms" in times:
                result.cublas_ms = times["cublas_ms"]
                result.fraction_of_cublas = result.cublas_ms / result.best_ms
            if "compiled_ms" in times:
                result.compiled_ms = times["compiled_ms"]
                result.speedup_vs_compiled = result.compiled_ms / result.best_ms
            if "compiled_max_autotune_ms" in times:
                result.compiled_max_autotune_ms = times["compiled_max_autotune_ms"]
                result.speedup_vs_max_autotune = result.compiled_max_autotune_ms / result.best_ms
        except Exception as error:  # noqa: BLE001 - PyTorch trouble costs the comparison, not the task
            result.notes.append(f"pytorch: {type(error).__name__}: {error}")

    if manifest["name"] in CUBLAS_TASKS:
        result.target = f">= {CUBLAS_TARGET:.0%} of cuBLAS"
        if not math.isnan(result.fraction_of_cublas):
            result.target_met = result.fraction_of_cublas >= CUBLAS_TARGET
    elif result.memory_bound:
        result.target = f">= {MEMORY_BOUND_TARGET:.0%} of peak bandwidth"
        if not math.isnan(result.bandwidth_fraction):
            result.target_met = result.bandwidth_fraction >= MEMORY_BOUND_TARGET
    else:
        wanted = EAGER_TARGETS.get(manifest["name"], EAGER_TARGET)
        speedup, against = eager_at_task_accuracy(manifest, result)
        result.target = f">= {wanted:.1f}x eager{against}"
        if not math.isnan(speedup):
            result.target_met = speedup >= wanted
    return result


def eager_at_task_accuracy(manifest: Dict[str, Any], result: TaskResult) -> Tuple[float, str]:
    """The speedup over PyTorch eager that the targets use, and how that eager ran: PyTorch's defaults
    unless their output fails the evaluator's check (a TF32 convolution) and the float32 one passes."""
    checked = not math.isnan(result.eager_outside_tolerance) and not math.isnan(result.speedup_vs_eager_fp32)
    if (checked and not passes_task_check(manifest, result.eager_outside_tolerance, result.eager_relative_l2)
            and passes_task_check(manifest, result.eager_fp32_outside_tolerance, result.eager_fp32_relative_l2)):
        return result.speedup_vs_eager_fp32, (
            f" in float32 (PyTorch's default fails the task's check: {result.eager_outside_tolerance:.1%} of the "
            f"outputs outside the tolerance, relative L2 {result.eager_relative_l2:.2g})")
    return result.speedup_vs_eager, ""


# ------------------------------------------------------------------------------------------ report


def fmt(value: float, spec: str, missing: str = "-") -> str:
    return missing if value is None or (isinstance(value, float) and math.isnan(value)) else format(value, spec)


def print_table(results: List[TaskResult], device: str, seconds: float) -> None:
    header = ["task", "evals", "best ms", "noise", "ref ms", "x ref", "eager ms", "x eager", "x eager fp32",
              "compile ms", "x compile", "autotune ms", "x autotune", "% BW", "% fp32", "target"]
    rows = []
    for r in results:
        if r.status != "ok":
            rows.append([r.task, str(r.evaluations)] + ["-"] * 13 + [r.status[:60]])
            continue
        target = "" if r.target_met is None else ("MET " if r.target_met else "MISSED ") + r.target
        if not math.isnan(r.fraction_of_cublas):
            target += f" ({r.fraction_of_cublas:.0%} of cuBLAS)"
        rows.append([
            r.task, str(r.evaluations), fmt(r.best_ms, ".4f"), fmt(r.best_noise * 100, ".1f") + "%",
            fmt(r.reference_ms, ".4f"), fmt(r.speedup_vs_reference, ".2f"), fmt(r.eager_ms, ".4f"),
            fmt(r.speedup_vs_eager, ".2f"), fmt(r.speedup_vs_eager_fp32, ".2f"), fmt(r.compiled_ms, ".4f"),
            fmt(r.speedup_vs_compiled, ".2f"),
            fmt(r.compiled_max_autotune_ms, ".4f"), fmt(r.speedup_vs_max_autotune, ".2f"),
            fmt(r.bandwidth_fraction * 100, ".0f"), fmt(r.compute_fraction * 100, ".0f"), target,
        ])
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(header)]
    print(f"\nkernelsmith task suite on {device}: {len(results)} tasks in {seconds:.0f} s")
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)))
    print("\nx ref / x eager / x compile / x autotune: the best candidate's speedup (time ratio) over the task's "
          "naive reference, PyTorch eager, torch.compile (mode default) and torch.compile "
          "(max-autotune-no-cudagraphs), each compiled afresh per task and warmed; x eager fp32: over eager "
          "with TF32 off (float32 tasks); % BW and % fp32: achieved "
          "over the device's measured "
          "peak copy bandwidth and fp32 FMA throughput.")
    for r in results:
        if not math.isnan(r.eager_outside_tolerance):
            print(f"  {r.task}: PyTorch against float64 by the evaluator's rule: eager {r.eager_outside_tolerance:.2%} "
                  f"of the outputs outside the tolerance, relative L2 {r.eager_relative_l2:.2g}; with TF32 off "
                  f"{r.eager_fp32_outside_tolerance:.2%}, {r.eager_fp32_relative_l2:.2g}")
        for note in r.notes:
            print(f"  {r.task}: {note}")


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", default="", help="comma-separated task names (default: every task)")
    parser.add_argument("--budget", type=int, default=16, help="evaluations per task's evolution")
    parser.add_argument("--time-limit", type=float, default=420.0,
                        help="seconds for the whole run; each task gets an equal share of what is left")
    parser.add_argument("--max-task-seconds", type=float, default=40.0, help="cap on one task's evolution")
    parser.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    parser.add_argument("--no-pytorch", action="store_true", help="skip the PyTorch comparison altogether")
    parser.add_argument("--backend", default="cuda", choices=["cuda", "opencl"],
                        help="opencl runs the kernelsmith side on PoCL, a smoke test of this script without a GPU")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache-dir", default="", help="the evaluator's cache (default: a fresh temporary one)")
    parser.add_argument("--json", metavar="FILE", help="write every number as JSON")
    args = parser.parse_args(argv)

    names = [n for n in args.tasks.split(",") if n]
    manifests = task_manifests(names or None)
    ks = kernelsmith_module()
    import tempfile

    torch_version = ""
    if args.backend == "cuda" or not args.no_pytorch:
        import torch

        if not torch.cuda.is_available():
            raise SystemExit("no CUDA device: this benchmark runs on a GPU machine")
        torch_version = torch.__version__
    cache_dir = args.cache_dir or tempfile.mkdtemp(prefix="kernelsmith-bench-suite-")
    screen = make_evaluator(ks, args.backend, "screen", cache_dir)
    strict = make_evaluator(ks, args.backend, "strict", cache_dir)
    device = strict.device_name() or (torch.cuda.get_device_name(0) if torch_version else args.backend)

    command = " ".join([Path(sys.executable).name] + sys.argv)
    triton_version = ""
    if torch_version:
        import triton

        triton_version = triton.__version__
    print(f"device: {device}; kernelsmith {getattr(ks, '__version__', '?')}, torch {torch_version or '-'}, "
          f"triton {triton_version or '-'}, python {sys.version.split()[0]}\ncommand: {command}", flush=True)
    started = time.perf_counter()
    results: List[TaskResult] = []

    def write_json() -> None:
        # After every task, so that a run cut short keeps what it measured.
        if args.json:
            Path(args.json).write_text(json.dumps(
                {"device": device, "seconds": time.perf_counter() - started,
                 "kernelsmith": getattr(ks, "__version__", ""), "torch": torch_version, "triton": triton_version,
                 "command": command,
                 "results": [asdict(r) for r in results]}, indent=2, default=str))

    for index, (name, manifest) in enumerate(manifests.items()):
        elapsed = time.perf_counter() - started
        left = args.time_limit - elapsed
        share = min(args.max_task_seconds, max(left, 0.0) / (len(manifests) - index) * 0.6)
        if left <= 5.0:
            results.append(TaskResult(task=name, status="failed: skipped, the run's time limit is spent"))
            continue
        print(f"[{elapsed:5.0f} s] {name}: evolving for up to {share:.0f} s ...", flush=True)
        try:
            results.append(run_task(ks, manifest, screen, strict, args, wall_seconds=max(share, 5.0)))
        except Exception as error:  # noqa: BLE001 - a failing task is reported, never fatal
            result = TaskResult(task=name, status=f"failed: {type(error).__name__}: {error}")
            result.notes.append(traceback.format_exc(limit=3).strip().replace("\n", " | "))
            results.append(result)
        write_json()
    seconds = time.perf_counter() - started

    print_table(results, device, seconds)
    write_json()
    if args.json:
        print(f"\nwrote {args.json}")
    return 0 if all(r.status == "ok" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
