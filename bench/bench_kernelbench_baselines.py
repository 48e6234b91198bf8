#!/usr/bin/env python3
"""PyTorch eager on KernelBench's problems, timed as kernelsmith times a baseline, side by side with the
times KernelBench published for the same problems (``results/timing/<GPU>/baseline_time_torch.json``).

Each problem file is loaded as KernelBench loads it (``torch.manual_seed(42)`` before ``Model(*get_init_inputs())``,
training mode, forward under ``torch.no_grad()``, inputs from ``get_inputs()`` moved to the GPU) and its forward
timed with kernelsmith's baseline protocol (``kernelsmith.pytorch_oracle.measure``: CUDA events, the L2
evicted by a read of twice its size before every run, mean of the samples as KernelBench publishes) under
two settings (one model and input set per problem, built on the GPU):

- ``default``: torch's own defaults (cuDNN may use TF32 and nondeterministic algorithms) — what KernelBench's
  published times were taken under, so the ratio to them checks the timing protocol;
- ``exact``: the settings of kernelsmith's expected outputs (``_exact_float32``: no TF32, deterministic cuDNN),
  to show what timing a baseline under them would cost (kernelsmith times its baselines under torch's
  defaults, docs/kernelbench-oracle.md).

Prints per level the geometric mean of (ours / published), the share of problems within 10% and 25%, the
Spearman rank correlation, and the largest outliers; ``--json`` writes every number.

    python3 bench/bench_kernelbench_baselines.py --kernelbench ../shared/kernelbench --levels 1 2 --json kb.json
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib.util
import json
import math
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

from kernelsmith import pytorch_oracle


def load_problem(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(f"kb_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def to_device(value: Any, torch: Any, device: Any) -> Any:
    return value.to(device) if isinstance(value, torch.Tensor) else value


def time_problem(path: Path, torch: Any, device: Any, settings: Dict[str, Any]) -> Dict[str, Any]:
    """The mean forward time (ms) of the problem in `path` under torch's defaults and under the oracle's exact
    settings, on one model and one input set built on the GPU (building them on the host first, as KernelBench
    does, costs seconds for the problems with GiB tensors and changes no timing)."""
    module = load_problem(path)
    torch.manual_seed(42)
    with torch.device(device):
        model = module.Model(*module.get_init_inputs())
        inputs = module.get_inputs()
    model = model.to(device)
    inputs = [to_device(v, torch, device) for v in inputs]
    times: Dict[str, Any] = {}
    for key, exact in (("default_ms", False), ("exact_ms", True)):
        # The oracle's own settings: torch's defaults as its baselines are timed, or its outputs' exact ones.
        pytorch_oracle._exact_float32(torch)
        try:
            with torch.no_grad(), (contextlib.nullcontext() if exact else pytorch_oracle._torch_defaults(torch)):
                times[key] = float(pytorch_oracle.measure(torch, device, model, [inputs], settings, "eager")["mean_ms"])
        except Exception as error:  # a problem that fails under one setting: reported
            times[key] = None
            times.setdefault("errors", []).append(f"{key}: {type(error).__name__}: {str(error)[:200]}")
    return times


def spearman(xs: List[float], ys: List[float]) -> float:
    def ranks(values: List[float]) -> List[float]:
        order = sorted(range(len(values)), key=lambda i: values[i])
        result = [0.0] * len(values)
        for rank, i in enumerate(order):
            result[i] = float(rank)
        return result

    rx, ry = ranks(xs), ranks(ys)
    n = len(xs)
    if n < 2:
        return float("nan")
    mx, my = sum(rx) / n, sum(ry) / n
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    vx = math.sqrt(sum((a - mx) ** 2 for a in rx))
    vy = math.sqrt(sum((b - my) ** 2 for b in ry))
    return cov / (vx * vy) if vx > 0 and vy > 0 else float("nan")


def summarise(rows: List[Dict[str, Any]], key: str) -> Dict[str, Any]:
    pairs = [(r[key], r["published_ms"]) for r in rows if r.get(key) and r.get("published_ms")]
    if not pairs:
        return {"problems": 0}
    ratios = [ours / theirs for ours, theirs in pairs]
    return {
        "problems": len(pairs),
        "geomean_ratio": math.exp(sum(math.log(r) for r in ratios) / len(ratios)),
        "within_10pct": sum(1 for r in ratios if abs(r - 1) <= 0.10) / len(ratios),
        "within_25pct": sum(1 for r in ratios if abs(r - 1) <= 0.25) / len(ratios),
        "spearman": spearman([p[0] for p in pairs], [p[1] for p in pairs]),
    }


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernelbench", required=True,
                        help="the folder holding KernelBench/level1.. and results/timing (KernelBench's checkout)")
    parser.add_argument("--levels", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--gpu", default="H100_Modal", help="the results/timing folder to compare with")
    parser.add_argument("--problems", type=int, default=0, help="at most this many problems per level (0: all)")
    parser.add_argument("--budget", type=float, default=0.3, help="timing budget per problem and setting, seconds")
    parser.add_argument("--json", help="write every number to this file")
    args = parser.parse_args(argv)

    import torch

    if not torch.cuda.is_available():
        print("bench_kernelbench_baselines: no CUDA device (the published times are GPU times); nothing to compare")
        return 0
    root = Path(args.kernelbench)
    published = json.loads((root / "results" / "timing" / args.gpu / "baseline_time_torch.json").read_text())
    device = torch.device("cuda", torch.cuda.current_device())
    props = torch.cuda.get_device_properties(device)
    settings = {"flush": "read", "flush_bytes": 2 * int(getattr(props, "L2_cache_size", 50 << 20)), "warmups": 3,
                "min_samples": 10, "max_samples": 100, "noise_target": 0.01, "budget_seconds": args.budget}
    print(f"device: {torch.cuda.get_device_name(device)}; torch {torch.__version__}; python {platform.python_version()}")
    print(f"command: {' '.join([os.path.basename(sys.executable)] + sys.argv)}")
    print(f"published: {args.gpu} ({published['level1'][next(iter(published['level1']))].get('hardware', '?')})")
    everything: Dict[str, Any] = {"device": torch.cuda.get_device_name(device), "torch": torch.__version__,
                                  "command": sys.argv, "levels": {}}
    started = time.monotonic()
    for level in args.levels:
        files = sorted((root / "KernelBench" / f"level{level}").glob("*.py"), key=lambda p: int(p.name.split("_")[0]))
        if args.problems:
            files = files[:args.problems]
        rows: List[Dict[str, Any]] = []
        for path in files:
            row: Dict[str, Any] = {"problem": path.name,
                                   "published_ms": (published.get(f"level{level}", {}).get(path.name) or {}).get("mean")}
            try:
                row.update(time_problem(path, torch, device, settings))
            except Exception as error:  # a problem too large for this GPU, or one that fails to build
                row.update({"default_ms": None, "exact_ms": None,
                            "errors": [f"build: {type(error).__name__}: {str(error)[:200]}"]})
            gc.collect()
            torch.cuda.empty_cache()
            shown = {k: (f"{v:.4g}" if isinstance(v, float) else v) for k, v in row.items() if k != "problem"}
            print(f"  {path.name}: {shown}", flush=True)
            rows.append(row)
        summary = {"default": summarise(rows, "default_ms"), "exact": summarise(rows, "exact_ms")}
        everything["levels"][str(level)] = {"summary": summary, "problems": rows}
        print(f"\nlevel {level}: {len(rows)} problems", flush=True)
        for name, s in summary.items():
            if s["problems"]:
                print(f"  {name:8s} ours/published over {s['problems']} problems: geomean {s['geomean_ratio']:.3f}, "
                      f"within 10% {100 * s['within_10pct']:.0f}%, within 25% {100 * s['within_25pct']:.0f}%, "
                      f"Spearman {s['spearman']:.3f}", flush=True)
        ranked = sorted((r for r in rows if r.get("default_ms") and r.get("published_ms")),
                        key=lambda r: abs(math.log(r["default_ms"] / r["published_ms"])), reverse=True)
        print("  largest differences (default settings): problem, ours ms, published ms, exact ms")
        for r in ranked[:8]:
            exact = f"{r['exact_ms']:.3f}" if r.get("exact_ms") else "-"
            print(f"    {r['problem']:55s} {r['default_ms']:9.3f} {r['published_ms']:9.3f} {exact:>9s}")
        failed = [r for r in rows if r.get("errors")]
        for r in failed:
            print(f"  not timed: {r['problem']}: {'; '.join(r['errors'])}")
    print(f"\n{time.monotonic() - started:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(everything, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
