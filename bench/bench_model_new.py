#!/usr/bin/env python3
"""kernelsmith's evaluator on ModelNew candidates (KernelBench's own format), measured side by side with the
way KernelBench (CUDA and C++ extensions) and KernelGYM (Triton) evaluate them.

One small level-2 problem (a Linear layer, a scale and a LeakyReLU) and N ModelNew candidates that keep the
GEMM in PyTorch and fuse the epilogue in their own kernel, of one kind:

- ``cpp``: a C++ extension through ``load_inline(cpp_sources=...)`` (runs on the CPU: the testable kind);
- ``cuda``: a CUDA kernel through ``load_inline(cuda_sources=...)``;
- ``triton``: a ``@triton.jit`` kernel.

Candidate i uses extension variant ``i % --distinct`` (a different kernel body: a different build) and its
own Python glue, as an evolution's children do: some change the kernel, others only the code around it.

Two sides, in one run:

1. **kernelsmith**: one evaluator (screen mode, a fresh disk cache, so the shared build cache starts cold: the
   first build also makes the precompiled header of torch/extension.h) evaluates every candidate end to end,
   in one ``evaluate_batch`` as the engine hands a batch over (the extensions are built in the compile stage,
   in parallel and ahead of the device); the batch's wall time over N, and what the builder and the runner did
   for each (docs/kernelbench-modelnew.md, "Builds").
   With ``--warm`` a second evaluator on the same cache evaluates fresh glue variants again (the header and
   libraries present).
2. **the KernelBench way** (``cuda``, ``cpp``) / **the KernelGYM way** (``triton``): per candidate a fresh Python
   process that imports torch, executes the problem and the candidate file with a fresh
   TORCH_EXTENSIONS_DIR (and a fresh Triton cache), so ``load_inline`` builds from scratch, builds Model and
   ModelNew with the same seed, checks 5 trials of fresh inputs with ``torch.allclose`` (atol = rtol = 1e-2), then
   times 3 warm-ups and 100 trials (CUDA events on a GPU, the host clock on the CPU). Measured on
   ``--baseline`` candidates; its rate is extrapolated from their mean wall time (process start included).

Ratio = the other way's mean wall time per candidate / kernelsmith's. Target: >= 10x (``cuda`` against the
KernelBench way, ``triton`` against the KernelGYM way). Exit status 1 when a candidate is not ok or the target
is missed (``--no-target`` reports only), 2 when the machine lacks what the kind needs. See bench/README.md.
"""

from __future__ import annotations

import argparse
import ast
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

TARGET_RATIO = 10.0
KINDS = ("cpp", "cuda", "triton")

def _example_problem() -> str:
    """The problem of examples/model_new.py (a Linear layer, a scale and a LeakyReLU in KernelBench's format),
    read from its syntax tree: the KernelBench-way processes must not import kernelsmith."""
    path = Path(__file__).resolve().parents[1] / "examples" / "model_new.py"
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == ["PROBLEM"]:
            return ast.literal_eval(node.value)
    raise RuntimeError(f"{path} defines no PROBLEM")


PROBLEM = _example_problem()

# The epilogue's body, one per extension variant: each computes the same values another way.
BODIES = [
    "const float v = x * m; y = v > 0.0f ? v : v * s;",
    "const float v = x * m; y = v >= 0.0f ? v : s * v;",
    "const float v = m * x; y = v < 0.0f ? v * s : v;",
    "const float v = x * m; y = (v > 0.0f) * v + (v <= 0.0f) * v * s;",
    "float v = x; v *= m; y = v > 0.0f ? v : v * s;",
    "const float v = x * m; const float n = v * s; y = v > 0.0f ? v : n;",
    "const float v = m * x; y = v > 0.0f ? v : s * v;",
    "const float v = x * m; y = v <= 0.0f ? s * v : v;",
]

MODEL_NEW = '''

class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, multiplier, negative_slope):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.multiplier = multiplier
        self.negative_slope = negative_slope

    def forward(self, x):
        y = self.gemm(x){glue}
        return {call}
'''

CPP = '''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = r"""
torch::Tensor epilogue(torch::Tensor in, double multiplier, double slope) {{
  auto out = torch::empty_like(in);
  const float* p = in.data_ptr<float>();
  float* q = out.data_ptr<float>();
  const float m = static_cast<float>(multiplier), s = static_cast<float>(slope);
  for (int64_t i = 0; i < in.numel(); ++i) {{
    const float x = p[i];
    float y;
    {body}
    q[i] = y;
  }}
  return out;
}}
"""
fused = load_inline(name="epilogue_{variant}", cpp_sources=source, functions=["epilogue"])
'''

CUDA = '''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
__global__ void epilogue_kernel(const float* __restrict__ p, float* __restrict__ q, float m, float s, int64_t n) {{
  const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) {{
    const float x = p[i];
    float y;
    {body}
    q[i] = y;
  }}
}}

torch::Tensor epilogue(torch::Tensor in, double multiplier, double slope) {{
  auto out = torch::empty_like(in);
  const int64_t n = in.numel();
  const int threads = 256;
  epilogue_kernel<<<(n + threads - 1) / threads, threads>>>(in.data_ptr<float>(), out.data_ptr<float>(),
                                                            (float)multiplier, (float)slope, n);
  return out;
}}
"""
cpp_source = "torch::Tensor epilogue(torch::Tensor in, double multiplier, double slope);"
fused = load_inline(name="epilogue_{variant}", cpp_sources=cpp_source, cuda_sources=cuda_source,
                    functions=["epilogue"])
'''

TRITON = '''import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def epilogue_kernel(p, q, m, s, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(p + offsets, mask=mask)
    v = x * m
    tl.store(q + offsets, tl.where(v > 0, v, v * s), mask=mask)


class _Fused:
    @staticmethod
    def epilogue(y, m, s):
        out = torch.empty_like(y)
        n = y.numel()
        epilogue_kernel[(triton.cdiv(n, {block}),)](y, out, m, s, n, BLOCK={block})
        return out


fused = _Fused()
'''

GLUES = ["", ".contiguous()", ".clone()", " + 0.0", ".reshape(x.shape[0], -1)", "[:, :]", " * 1.0", ".detach()"]


def candidate_source(kind: str, index: int, distinct: int, glue_offset: int = 0) -> str:
    variant = index % distinct
    call = "fused.epilogue(y.contiguous(), self.multiplier, self.negative_slope)"
    glue = GLUES[(index // distinct + glue_offset) % len(GLUES)]
    if kind == "triton":
        head = TRITON.format(block=(128, 256, 512, 1024, 2048, 4096, 64, 32)[variant % 8])
    else:
        head = (CPP if kind == "cpp" else CUDA).format(body=BODIES[variant % len(BODIES)], variant=variant)
    return head + MODEL_NEW.format(glue=glue, call=call)


# ------------------------------------------------------------------------------ the KernelBench / KernelGYM way

def child(spec_path: str) -> int:
    """One candidate the KernelBench way, in this fresh process (``--child``)."""
    spec = json.loads(Path(spec_path).read_text())
    import torch  # noqa: PLC0415 - timed: part of the way's cost

    device = torch.device(spec["device"])
    problem: Dict[str, Any] = {}
    exec(compile(spec["problem"], "problem.py", "exec"), problem)  # noqa: S102 - the benchmark's own files
    candidate: Dict[str, Any] = {}
    started = time.perf_counter()
    exec(compile(spec["candidate"], "candidate.py", "exec"), candidate)  # noqa: S102
    build_s = time.perf_counter() - started
    init = problem["get_init_inputs"]()
    torch.manual_seed(42)
    model = problem["Model"](*init).to(device)
    torch.manual_seed(42)
    model_new = candidate["ModelNew"](*init).to(device)
    correct = True
    with torch.no_grad():
        for trial in range(5):
            torch.manual_seed(1000 + trial)
            inputs = [x.to(device) for x in problem["get_inputs"]()]
            correct &= bool(torch.allclose(model(*inputs), model_new(*inputs), atol=1e-2, rtol=1e-2))
        inputs = [x.to(device) for x in problem["get_inputs"]()]
        samples = []
        for trial in range(103):
            if device.type == "cuda":
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                model_new(*inputs)
                end.record()
                torch.cuda.synchronize()
                ms = start.elapsed_time(end)
            else:
                t0 = time.perf_counter()
                model_new(*inputs)
                ms = (time.perf_counter() - t0) * 1e3
            if trial >= 3:
                samples.append(ms)
    Path(spec["out"]).write_text(json.dumps({"correct": correct, "build_s": build_s,
                                             "median_ms": statistics.median(samples)}))
    return 0


def other_way(kind: str, source: str, device: str, work: Path, index: int, timeout: float) -> Dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix=f"way-{index}-", dir=work))
    spec = folder / "spec.json"
    out = folder / "result.json"
    spec.write_text(json.dumps({"problem": PROBLEM, "candidate": source, "device": device, "out": str(out)}))
    env = dict(os.environ, TORCH_EXTENSIONS_DIR=str(folder / "torch_extensions"), TRITON_CACHE_DIR=str(folder / "triton"))
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    started = time.perf_counter()
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", str(spec)], env=env,
                          capture_output=True, text=True, timeout=timeout)
    wall = time.perf_counter() - started
    result = json.loads(out.read_text()) if out.is_file() else {}
    result.update(wall_s=wall, returncode=done.returncode)
    if done.returncode != 0:
        result["error"] = (done.stderr or "")[-1500:]
    return result


# ------------------------------------------------------------------------------------------------ kernelsmith

def make_task(ks: Any, folder: Path) -> Any:
    problem = folder / "level2" / "gemm_multiply_leakyrelu.py"
    problem.parent.mkdir(parents=True, exist_ok=True)
    problem.write_text(PROBLEM)
    return ks.Task.from_kernelbench(str(problem), out_dir=str(folder / "tasks"))


def kernelsmith_pass(ks: Any, task: Any, sources: Sequence[str], backend: str, cache: Path) -> Dict[str, Any]:
    """One ``evaluate_batch`` over every candidate, as the engine hands them over: the builder builds their
    extensions in the compile stage, in parallel and ahead of the device. Returns the batch's wall time and
    each evaluation."""
    evaluator = ks.create_evaluator(ks.EvaluatorOptions(backend=backend, mode="screen", cache_dir=str(cache)))
    started = time.perf_counter()
    evaluations = evaluator.evaluate_batch(task, [ks.Candidate("pytorch", source) for source in sources])
    wall = time.perf_counter() - started
    records = []
    for index, evaluation in enumerate(evaluations):
        log = evaluation.compile.log
        records.append({"index": index, "status": evaluation.status.name, "wall_s": evaluation.wall_seconds,
                        "message": evaluation.message, "speedup": evaluation.speedup,
                        "prebuilt": "loaded prebuilt" in log, "log": log,
                        "stage_seconds": dict(evaluation.stage_seconds)})
        print(f"  kernelsmith #{index}: {evaluation.status.name:13s} {evaluation.wall_seconds:7.1f} s  "
              f"{' | '.join(dict.fromkeys(line for line in log.splitlines() if line))[:160]}", flush=True)
    print(f"  batch of {len(sources)}: {wall:.1f} s", flush=True)
    # Where an evaluation's time went (the worker's stages; "compile" runs ahead, in parallel).
    stages = sorted({name for record in records for name in record["stage_seconds"]})
    mean_stages = {name: statistics.mean(r["stage_seconds"].get(name, 0.0) for r in records) for name in stages}
    print("  mean seconds per stage: " + ", ".join(f"{k} {v:.2f}" for k, v in mean_stages.items()), flush=True)
    return {"wall_s": wall, "mean_s": wall / len(sources), "mean_stage_seconds": mean_stages, "evaluations": records}


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores"


def parse_args(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kind", choices=KINDS, default="cpp", help="the candidates' kernels (default cpp)")
    parser.add_argument("--candidates", type=int, default=8, help="ModelNew candidates kernelsmith evaluates")
    parser.add_argument("--distinct", type=int, default=2, help="distinct extensions among them (default 2)")
    parser.add_argument("--baseline", type=int, default=2, help="candidates evaluated the other way (default 2)")
    parser.add_argument("--warm", action="store_true", help="also a pass of new glue variants on the warm cache")
    parser.add_argument("--timeout", type=float, default=900, help="seconds one other-way process may take")
    parser.add_argument("--out", default=None, help="write the JSON report here")
    parser.add_argument("--no-target", action="store_true", help="report only: a missed target does not fail")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    if args.child:
        return child(args.child)
    try:
        import torch  # noqa: PLC0415

        import kernelsmith as ks  # noqa: PLC0415
    except ImportError as error:
        print(f"bench_model_new: {error}")
        return 2
    gpu = args.kind in ("cuda", "triton")
    if gpu and not torch.cuda.is_available():
        print(f"bench_model_new: --kind {args.kind} needs a CUDA GPU; torch {torch.__version__} sees none")
        return 2
    device, backend = ("cuda:0", "cuda") if gpu else ("cpu", "opencl")
    way = "KernelGYM way" if args.kind == "triton" else "KernelBench way"
    distinct = max(1, min(args.distinct, args.candidates))
    work = Path(tempfile.mkdtemp(prefix="kernelsmith-bench-model-new-"))
    task = make_task(ks, work)
    sources = [candidate_source(args.kind, i, distinct) for i in range(args.candidates)]
    print(f"{args.candidates} ModelNew candidates ({args.kind}, {distinct} distinct kernels) on {machine()}; "
          f"{ks.sandbox_status().summary()}", flush=True)

    report: Dict[str, Any] = {"kind": args.kind, "candidates": args.candidates, "distinct": distinct,
                              "machine": machine(), "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
                              "torch": torch.__version__, "command": " ".join([sys.argv[0], *(argv or sys.argv[1:])])}
    print("kernelsmith (fresh cache):", flush=True)
    ours = kernelsmith_pass(ks, task, sources, backend, work / "cache")
    report["kernelsmith"] = ours
    if args.warm:
        print("kernelsmith (warm cache, new glue):", flush=True)
        warm_sources = [candidate_source(args.kind, i, distinct, glue_offset=3) for i in range(args.candidates)]
        report["kernelsmith_warm"] = kernelsmith_pass(ks, task, warm_sources, backend, work / "cache")

    print(f"{way}:", flush=True)
    theirs = []
    for index in range(min(args.baseline, args.candidates)):
        result = other_way(args.kind, sources[index], device, work, index, args.timeout)
        theirs.append(result)
        print(f"  {way} #{index}: {result['wall_s']:7.1f} s (build {result.get('build_s', float('nan')):.1f} s, "
              f"correct {result.get('correct')}){' ' + result['error'][-300:] if 'error' in result else ''}",
              flush=True)
    report[way] = theirs

    ours_mean = ours["mean_s"]
    theirs_mean = statistics.mean(r["wall_s"] for r in theirs)
    ratio = theirs_mean / ours_mean
    report["ratio"] = ratio
    print()
    print(f"{'':28s} {'kernelsmith':>12s} {way:>16s} {'ratio':>7s}")
    print(f"{'mean wall s / candidate':28s} {ours_mean:12.1f} {theirs_mean:16.1f} {ratio:6.1f}x")
    print(f"{'candidates per minute':28s} {60 / ours_mean:12.2f} {60 / theirs_mean:16.2f}")
    if args.warm:
        warm_mean = report["kernelsmith_warm"]["mean_s"]
        report["ratio_warm"] = theirs_mean / warm_mean
        print(f"{'warm cache, new glue':28s} {warm_mean:12.1f} {theirs_mean:16.1f} {theirs_mean / warm_mean:6.1f}x")
    prebuilt = sum(r["prebuilt"] for r in ours["evaluations"])
    print(f"kernelsmith: {prebuilt} of {len(sources)} candidates loaded their extension prebuilt (the first batch "
          f"also builds the precompiled header of torch/extension.h)")
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1))
    failed = [r for r in ours["evaluations"] if r["status"] != "ok"] + [r for r in theirs if not r.get("correct")]
    if failed:
        print(f"FAILED: {len(failed)} candidate(s) not ok")
        return 1
    if ratio < TARGET_RATIO and not args.no_target:
        print(f"target missed: {ratio:.1f}x < {TARGET_RATIO:g}x")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
