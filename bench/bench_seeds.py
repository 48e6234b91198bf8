#!/usr/bin/env python3
"""The compute-bound seeds, at their defaults and with chosen @tune overrides, against PyTorch: each seed
evaluated once in strict mode by kernelsmith's evaluator on CUDA, and the task's PyTorch expression timed
eager (and cuBLAS's plain product for the half-precision tasks) as bench_suite.py times it (do_bench median,
L2 evicted by a read). No evolution: what a new user starts from.

    python3 bench/bench_seeds.py [--tasks matmul,linear_gelu] [--json FILE]

Prints one JSON line per (task, overrides): the median, noise, speedup over the reference, and x_eager
(eager time / seed time; above 1 the seed is faster), x_cublas for the half-precision products. Needs a CUDA
GPU, kernelsmith and torch (with triton for do_bench).
"""
import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

#: Each task's overrides of its seed's @tune defaults ({} = the defaults as shipped).
VARIANTS = {
    "matmul": [{}, {"TMA": 0}, {"STAGES": 6}],
    "linear_gelu": [{}, {"TMA": 0}, {"STAGES": 6}],
    "conv2d_3x3": [{}, {"TMA": 0}, {"STAGES": 6}],
    "matmul_fp16": [{}, {"TMA": 0}],
    "matmul_bf16": [{}, {"TMA": 0}],
    "attention": [{}],
}


def with_overrides(source: str, overrides: dict, task: str) -> str:
    from bench_evaluator import tune_line

    for key, value in overrides.items():
        found = [match for match in tune_line().finditer(source) if match.group(2) == key]
        if len(found) != 1:
            raise SystemExit(f"{task}: the seed has no '@tune {key} = ...' line to override")
        source = source[: found[0].start(4)] + str(value) + source[found[0].end(4):]
    return source


def main(argv) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", default=",".join(VARIANTS), help="comma-separated tasks (default: all six)")
    parser.add_argument("--json", metavar="FILE", help="write every row as JSON")
    args = parser.parse_args(argv)
    import bench_suite
    import kernelsmith as ks

    options = ks.EvaluatorOptions()
    options.backend = "cuda"
    options.mode = "strict"
    evaluator = ks.create_evaluator(options)
    rows = []
    for name in [t for t in args.tasks.split(",") if t]:
        if name not in VARIANTS:
            raise SystemExit(f"unknown task {name!r} (known: {', '.join(VARIANTS)})")
        folder = ROOT / "tasks" / name
        task = ks.Task.load(str(folder))
        manifest = json.loads((folder / "task.json").read_text())
        seed = (folder / "seed.cu").read_text()
        started = time.time()
        torch_times = bench_suite.time_pytorch(manifest, compile_too=False,
                                               cublas=bench_suite.CUBLAS_TASKS.get(name, ""))
        for overrides in VARIANTS[name]:
            evaluation = evaluator.evaluate(task, ks.Candidate("cuda", with_overrides(seed, overrides, name)))
            ms = evaluation.timing.median_ms if evaluation.timing else float("nan")
            row = {"task": name, "overrides": overrides, "status": str(evaluation.status).split(".")[-1],
                   "median_ms": ms, "noise": evaluation.timing.noise if evaluation.timing else None,
                   "speedup_vs_reference": evaluation.speedup, **torch_times,
                   "x_eager": torch_times["eager_ms"] / ms if ms > 0 else None,
                   "message": str(evaluation.message)[:200]}
            if "cublas_ms" in torch_times and ms > 0:
                row["x_cublas"] = torch_times["cublas_ms"] / ms
            rows.append(row)
            print(json.dumps(row), flush=True)
        print(f"# {name}: {time.time() - started:.0f}s", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0 if all(row["status"] == "ok" for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
