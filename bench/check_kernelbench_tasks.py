#!/usr/bin/env python3
"""The evaluator's task checks over every imported KernelBench problem.

`kernelsmith kernelbench import` applies the evaluator's rules to each problem's oracle (deterministic under
its seed, finite, outputs not near-constant) with its own probe. This script asks the evaluator itself: for
each task folder it evaluates a kernel that does nothing (so no candidate can pass), which makes the
evaluator compute the oracle's expected outputs for every checked case and apply its task checks. An oracle
that fails them raises a TaskError naming the rule (as does a reference that cannot be prepared: the message
says which); one that passes leaves the do-nothing kernel `incorrect`.

    python3 bench/check_kernelbench_tasks.py --tasks build/kb-tasks/level1 build/kb-tasks/level2 --jobs 4 \\
        --json kb-task-checks.json [--resume kb-task-checks.json] [--memory-gib 90]

Problems run several at once within a memory budget: KernelBench's level 1 has problems whose every tensor holds
gigabytes, and the evaluator keeps a few cases of the timing sizes (inputs and expected outputs) on the host and
the device while it prepares them, so each problem is admitted only while the estimates of those running fit both
the host's budget and the GPU's (smallest first, so that most problems are checked early; one over a budget runs
alone). Each worker process's evaluator keeps finished problems' cases in a
small case cache ($KERNELSMITH_CASE_CACHE_GB, set here), not the default eighth of the machine. `--resume`
skips the problems a previous run's JSON already holds (except those whose check could not finish), so the pass can be spread over several sessions.

Prints one line per problem (with its peak resident memory) and a summary; the exit status is 1 when an oracle
failed the evaluator's checks or a problem could not be checked. Needs kernelsmith with a backend that runs
the tasks (CUDA for problems imported with --device cuda) and torch (the oracle).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Dict, List, Optional, Tuple

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


def ran_out_of_device_memory(message: str) -> bool:
    """Whether an evaluation or a task error says the device's memory ran out (torch's error in the oracle, or
    the evaluator's own allocation)."""
    return any(words in message for words in ("OutOfMemoryError", "out of memory", "out of device memory"))


def check_one(folder: str, backend: str, mode: str) -> Dict[str, object]:
    import kernelsmith as ks

    started = time.perf_counter()
    result: Dict[str, object] = {"task": Path(folder).name}
    try:
        task = ks.Task.load(folder)
        if task.oracle is not None:
            # The checks concern the oracle's outputs; a task is prepared with its baselines timed, and torch.compile's
            # (minutes with max-autotune) tell nothing here. Eager, which speedups are against, is always timed.
            oracle = task.oracle
            oracle.baselines = ["eager"]
            task.oracle = oracle
        evaluator = evaluator_for(backend, mode)
        evaluation = evaluator.evaluate(task, ks.Candidate(backend, DO_NOTHING[backend]))
        status = str(evaluation.status).split(".")[-1]
        # `incorrect` is the one outcome that says the oracle passed its checks and was compared against. Device
        # memory taken by the problems checked beside it is no verdict on the task either: retried on --resume.
        if status == "incorrect":
            result["verdict"] = "passed"
        elif ran_out_of_device_memory(str(evaluation.message)):
            result["verdict"] = "error"
        else:
            result["verdict"] = "unexpected"
        result["status"] = status
        result["message"] = str(evaluation.message)[:300]
        # Where the time went (the oracle's helper, the reference's cases, the candidate's checks).
        result["stage_seconds"] = {stage: round(seconds, 2) for stage, seconds in evaluation.stage_seconds.items()}
    except ks.TaskError as error:
        # A task check failed, or the reference could not be prepared, except where the device ran out of memory:
        # problems checked at once share the GPU, so that is no verdict on the task, and a resumed run retries it.
        result["verdict"] = "error" if ran_out_of_device_memory(str(error)) else "task error"
        result["message"] = str(error)[:500]
    except Exception as error:  # noqa: BLE001 - one problem's trouble is reported, the others go on
        result["verdict"] = "error"
        result["message"] = f"{type(error).__name__}: {error}"[:500]
    result["seconds"] = round(time.perf_counter() - started, 2)
    result["peak_rss_gib"] = round(peak_resident_bytes() / 2**30, 2)
    return result


def peak_resident_bytes() -> int:
    """The high-water marks of resident memory of this process and its descendants (the evaluator's worker, the
    oracle's helper), summed: an upper bound of what checking took at once. Marks count since each process
    started, so a process that checked other problems before reports the largest so far."""
    def high_water(pid: int) -> int:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
        except (OSError, ValueError):
            pass  # gone meanwhile, or no /proc (then only the finished children below count)
        return 0

    def children(pid: int) -> List[int]:
        found: List[int] = []
        for task in Path(f"/proc/{pid}/task").glob("*"):
            try:
                found += [int(child) for child in (task / "children").read_text().split()]
            except (OSError, ValueError):
                continue
        return found

    total, stack = 0, [os.getpid()]
    while stack:
        pid = stack.pop()
        total += high_water(pid)
        stack += children(pid)
    # Children already waited for (an oracle helper that exited) no longer appear under /proc.
    return total + resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024


#: Cases of the timing sizes an evaluation holds at once in host memory while preparing an oracle task: the
#: timing input sets (with their expected outputs) while its baselines are timed, and their inputs in the files
#: the oracle's helper reads. Measured on an H200 (2026-11-25): the resident peaks of the processes checking a
#: problem, summed (shared-memory files count in both), were 3.8 to 4.7 cases above the fixed overhead.
HELD_CASES = 5
#: Besides the cases: the worker, the oracle's helper with torch, a CUDA context in each.
FIXED_OVERHEAD_BYTES = 3 << 30
#: Cases on the device at once: the worker's timing input sets and outputs, or the helper's module run (its
#: inputs, outputs and intermediates), and torch's cached blocks between requests.
DEVICE_HELD_CASES = 4
#: A CUDA context in the worker and in the helper.
DEVICE_OVERHEAD_BYTES = 1 << 30


def case_bytes(task) -> int:
    """Bytes of one case of the timing sizes: every input and output tensor once."""
    import kernelsmith as ks

    sizes = task.timing_sizes.sizes
    return sum(task.element_count(tensor, sizes) * ks.dtype_size(tensor.dtype) for tensor in task.tensors)


def memory_estimate(folder: str) -> Tuple[int, int]:
    """(host bytes, device bytes) checking this problem may take at its peak: estimates. A task that cannot be
    read: the overheads alone, and the check itself reports why."""
    import kernelsmith as ks

    try:
        one_case = case_bytes(ks.Task.load(folder))
    except Exception:  # noqa: BLE001 - check_one reports the task's trouble
        one_case = 0
    return HELD_CASES * one_case + FIXED_OVERHEAD_BYTES, DEVICE_HELD_CASES * one_case + DEVICE_OVERHEAD_BYTES


def device_memory_bytes(backend: str) -> Optional[int]:
    """The first device's memory where it is a GPU (problems checked at once share it); None elsewhere."""
    import kernelsmith as ks

    for info in ks.devices():
        if info.name == backend and info.available:
            gpus = [device for device in info.devices if device.is_gpu and device.global_memory_bytes > 0]
            return gpus[0].global_memory_bytes if gpus else None
    return None


def host_memory_bytes() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def admit(pending: List[Tuple[float, str]], running_share: float, running: int, budget: float) -> Optional[int]:
    """Index in `pending` (smallest estimate first) of the next problem to start: the first that fits beside the
    running ones; with nothing running, the first, even over the budget (it then runs alone). None: wait."""
    for index, (estimate, _) in enumerate(pending):
        if running == 0 or running_share + estimate <= budget:
            return index
    return None


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", nargs="+", required=True, help="folders of imported task folders")
    parser.add_argument("--backend", default="cuda", choices=sorted(DO_NOTHING))
    parser.add_argument("--mode", default="screen", choices=["screen", "strict"])
    parser.add_argument("--jobs", type=int, default=1, help="most problems checked at once (one evaluator each)")
    parser.add_argument("--memory-gib", type=float, default=None,
                        help="host memory the problems running at once may take by their estimates (default: 70%% "
                        "of the machine's)")
    parser.add_argument("--case-cache-gib", type=float, default=2.0,
                        help="each evaluator's case cache ($KERNELSMITH_CASE_CACHE_GB; default 2: every problem is "
                        "evaluated once, so cases of finished problems need not stay)")
    parser.add_argument("--json", metavar="FILE", help="write every result as JSON (after each problem)")
    parser.add_argument("--largest", type=int, metavar="N",
                        help="check only the N problems with the largest memory estimates (problems are checked "
                        "smallest first, so this finishes a pass whose earlier results are known but whose --json "
                        "was lost; take a few more than are missing: problems in flight when a call ended were "
                        "not recorded)")
    parser.add_argument("--admit-for", type=float, metavar="SECONDS",
                        help="start no problem later than SECONDS after the start: a run under a time limit then ends "
                        "with every problem it started finished, and the rest are left for --resume")
    parser.add_argument("--resume", metavar="FILE",
                        help="a previous run's --json: its problems are not checked again (a missing file: none)")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be 1 or more, not {args.jobs}")
    if args.memory_gib is not None and not args.memory_gib > 0:
        parser.error(f"--memory-gib must be a positive number, not {args.memory_gib}")
    if args.largest is not None and args.largest < 1:
        parser.error(f"--largest must be 1 or more, not {args.largest}")
    if args.admit_for is not None and not args.admit_for >= 0:
        parser.error(f"--admit-for must be 0 or more seconds, not {args.admit_for}")
    if not args.case_cache_gib > 0:
        parser.error(f"--case-cache-gib must be a positive number, not {args.case_cache_gib}")
    budget = int(args.memory_gib * 2**30) if args.memory_gib is not None else int(0.7 * host_memory_bytes())
    # Read by the evaluators' workers, which the pool's processes start: set before the pool exists.
    os.environ["KERNELSMITH_CASE_CACHE_GB"] = str(args.case_cache_gib)

    folders = sorted(str(p.parent) for root in args.tasks for p in Path(root).glob("*/task.json"))
    if not folders:
        print(f"no task folders (*/task.json) under {', '.join(args.tasks)}", file=sys.stderr)
        return 2
    device_budget = device_memory_bytes(args.backend)
    device_budget = int(0.85 * device_budget) if device_budget else None

    def share(folder: str) -> float:
        """The larger of the problem's shares of the host budget and of the device budget: problems run at once
        while their shares add up to at most 1."""
        host, device = memory_estimate(folder)
        return max(host / budget, device / device_budget if device_budget else 0.0)

    # Each estimate loads the task: once per folder, for --largest and for the order of the checks.
    shares = {folder: share(folder) for folder in folders}
    if args.largest is not None:
        # By the order they would be checked in: smallest share first, then by name.
        folders = [f for _, f in sorted((shares[f], f) for f in folders)[-args.largest:]]
        print(f"--largest {args.largest}: {', '.join(Path(f).name for f in folders)}", flush=True)
    results: List[Dict[str, object]] = []
    if args.resume and Path(args.resume).exists():
        try:
            earlier = list(json.loads(Path(args.resume).read_text()))
            # A check that could not finish ("error": its process died, the evaluator failed) is done again.
            results = [r for r in earlier if r["verdict"] != "error"]
            done = {str(r["task"]) for r in results}
        except (ValueError, TypeError, KeyError) as error:
            print(f"--resume {args.resume}: not a JSON list of results written by --json ({error})", file=sys.stderr)
            return 2
        skipped = len([f for f in folders if Path(f).name in done])
        folders = [f for f in folders if Path(f).name not in done]
        print(f"resuming {args.resume}: {skipped} problem(s) already checked", flush=True)
    pending = sorted((shares[f], f) for f in folders)
    print(f"{len(folders)} task(s), backend {args.backend}, at most {args.jobs} at once within {budget / 2**30:.0f} GiB "
          f"of host memory" + (f" and {device_budget / 2**30:.0f} GiB of device memory" if device_budget else "") +
          f" (largest share {max((e for e, _ in pending), default=0):.2f})", flush=True)

    def record(result: Dict[str, object]) -> None:
        results.append(result)
        print(f"{result['task']:<55} {result['verdict']:<15} {result['seconds']:>7.1f}s "
              f"{result['peak_rss_gib']:>6.1f} GiB  {result.get('status', '')} {str(result['message'])[:160]}",
              flush=True)
        if args.json:
            Path(args.json).write_text(json.dumps(sorted(results, key=lambda r: str(r["task"])), indent=1))

    running: Dict[object, Tuple[float, str]] = {}  # future -> (its share, its folder)
    admit_until = time.monotonic() + args.admit_for if args.admit_for is not None else None
    pool = ProcessPoolExecutor(max_workers=args.jobs)
    try:
        while pending or running:
            admitting = admit_until is None or time.monotonic() <= admit_until
            if not admitting and not running:
                break
            while admitting and pending and len(running) < args.jobs:
                index = admit(pending, sum(e for e, _ in running.values()), len(running), 1.0)
                if index is None:
                    break
                estimate, folder = pending.pop(index)
                running[pool.submit(check_one, folder, args.backend, args.mode)] = (estimate, folder)
            finished, _ = wait(list(running), return_when=FIRST_COMPLETED)
            broken = False
            for future in finished:
                _, folder = running.pop(future)
                try:
                    record(future.result())
                except BrokenProcessPool as error:
                    # A checking process died (the kernel's OOM killer, a crash in a native library): every
                    # problem in flight is reported, and the rest go on in a fresh pool.
                    broken = True
                    record({"task": Path(folder).name, "verdict": "error", "seconds": 0.0, "peak_rss_gib": 0.0,
                            "message": f"the process checking it died ({error}); killed for memory? try --jobs 1"})
            if broken:
                for future, (_, folder) in running.items():
                    record({"task": Path(folder).name, "verdict": "error", "seconds": 0.0, "peak_rss_gib": 0.0,
                            "message": "in flight when a checking process died; run again with --resume"})
                running.clear()
                pool.shutdown(wait=False, cancel_futures=True)
                pool = ProcessPoolExecutor(max_workers=args.jobs)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    counts: Dict[str, int] = {}
    for result in results:
        counts[str(result["verdict"])] = counts.get(str(result["verdict"]), 0) + 1
    print(f"\n{len(results)} problem(s): " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    if pending:
        print(f"{len(pending)} problem(s) not started within --admit-for {args.admit_for:g} s, left for --resume: "
              + ", ".join(Path(f).name for _, f in pending))
    return 0 if counts.get("passed", 0) == len(results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
