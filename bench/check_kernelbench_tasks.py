#!/usr/bin/env python3
"""The evaluator's task checks over every imported KernelBench problem.

`kernelsmith kernelbench import` applies the evaluator's rules to each problem's oracle (deterministic under
its seed, finite, outputs not near-constant) with its own probe. This script asks the evaluator itself: for
each task folder it evaluates a kernel that does nothing (so no candidate can pass), which makes the
evaluator compute the oracle's expected outputs for every checked case and apply its task checks. An oracle
that fails them raises a TaskError naming the rule (as does a reference that cannot be prepared: the message
says which); one that passes leaves the do-nothing kernel `incorrect`.

    python3 bench/check_kernelbench_tasks.py --tasks build/kb-tasks/level1 build/kb-tasks/level2 --jobs 4 \\
        --json kb-task-checks.json

Prints one line per problem and a summary; the exit status is 1 when an oracle failed the evaluator's checks
or a problem could not be checked. Needs kernelsmith with a backend that runs the tasks (CUDA for problems
imported with --device cuda) and torch (the oracle).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Dict, List, Tuple

#: A kernel that writes nothing: every output stays as the evaluator's poison fill, so it fails every case.
DO_NOTHING = {
    "cuda": '// @launch does_nothing<<<1, 1>>>()\nextern "C" __global__ void does_nothing() {}\n',
    "opencl": "// @launch does_nothing<<<1, 1>>>()\n__kernel void does_nothing() {}\n",
}


#: This process's evaluator per (backend, mode): starting one (worker, context, the device's peaks) is paid
#: once per process, not once per problem.
_EVALUATORS: Dict[Tuple[str, str], object] = {}


def evaluator_for(backend: str, mode: str):
    import kernelsmith as ks

    if (backend, mode) not in _EVALUATORS:
        options = ks.EvaluatorOptions()
        options.backend = backend
        options.mode = mode
        _EVALUATORS[(backend, mode)] = ks.create_evaluator(options)
    return _EVALUATORS[(backend, mode)]


def check_one(folder: str, backend: str, mode: str) -> Dict[str, object]:
    import kernelsmith as ks

    started = time.perf_counter()
    result: Dict[str, object] = {"task": Path(folder).name}
    try:
        task = ks.Task.load(folder)
        evaluator = evaluator_for(backend, mode)
        evaluation = evaluator.evaluate(task, ks.Candidate(backend, DO_NOTHING[backend]))
        status = str(evaluation.status).split(".")[-1]
        # `incorrect` is the one outcome that says the oracle passed its checks and was compared against.
        result["verdict"] = "passed" if status == "incorrect" else "unexpected"
        result["status"] = status
        result["message"] = str(evaluation.message)[:300]
    except ks.TaskError as error:
        result["verdict"] = "task error"  # a task check failed, or the reference could not be prepared
        result["message"] = str(error)[:500]
    except Exception as error:  # noqa: BLE001 - one problem's trouble is reported, the others go on
        result["verdict"] = "error"
        result["message"] = f"{type(error).__name__}: {error}"[:500]
    result["seconds"] = round(time.perf_counter() - started, 2)
    return result


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", nargs="+", required=True, help="folders of imported task folders")
    parser.add_argument("--backend", default="cuda", choices=sorted(DO_NOTHING))
    parser.add_argument("--mode", default="screen", choices=["screen", "strict"])
    parser.add_argument("--jobs", type=int, default=1, help="problems checked at once (one evaluator each)")
    parser.add_argument("--json", metavar="FILE", help="write every result as JSON (after each problem)")
    args = parser.parse_args(argv)

    folders = sorted(str(p.parent) for root in args.tasks for p in Path(root).glob("*/task.json"))
    if not folders:
        print(f"no task folders (*/task.json) under {', '.join(args.tasks)}", file=sys.stderr)
        return 2
    print(f"{len(folders)} task(s), backend {args.backend}, {args.jobs} at once", flush=True)
    results: List[Dict[str, object]] = []
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(check_one, folder, args.backend, args.mode) for folder in folders]
        for future in as_completed(futures):
            result = future.result()
            results.append(result)
            print(f"{result['task']:<55} {result['verdict']:<15} {result['seconds']:>7.1f}s  "
                  f"{result.get('status', '')} {str(result['message'])[:160]}", flush=True)
            if args.json:
                Path(args.json).write_text(json.dumps(sorted(results, key=lambda r: str(r["task"])), indent=1))
    counts: Dict[str, int] = {}
    for result in results:
        counts[str(result["verdict"])] = counts.get(str(result["verdict"]), 0) + 1
    print(f"\n{len(results)} problem(s): " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    return 0 if counts.get("passed", 0) == len(results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
