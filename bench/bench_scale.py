#!/usr/bin/env python3
"""Evaluations per minute on 1, 2, 4 devices of one host and on 1, 2, 4 Ray actors, in one run.

Two paths (docs/distributed.md), each measured at every count of ``--counts``:

- ``devices``: the built-in evaluator over a device set (``EvaluatorOptions.devices``), one worker
  process per device;
- ``ray``: ``kernelsmith.distributed.RayEvaluator`` with that many actors (one GPU each; on a machine
  without GPU, PoCL actors of one CPU each), on the cluster at ``--ray ADDRESS`` or on a local one
  started here (``ray.init``).

The workload is compile-light and device-bound: the candidates are the task's seed, its variants
(one ``@tune`` value changed, what the parameter mutator proposes) and copies that differ in a
comment; all of them are evaluated once before any measurement, so every compile comes from the disk
cache, and each evaluator (each count) evaluates one candidate per worker before its clock starts,
so that every worker has timed its baseline. Then the same batch of candidates is timed at every count.
The target on GPUs is at least 0.9x linear scaling (rate at n over n times the rate at 1).

``--compare`` (one GPU is enough): the direct evaluator and a RayEvaluator with one actor evaluate the
same candidates in strict mode; the statuses must agree and each candidate's median time through Ray
is reported against the direct one (the single-GPU check of issue 20).

Without a GPU the devices are PoCL CPU devices (``POCL_DEVICES`` gives several, each with one thread,
``POCL_MAX_PTHREAD_COUNT=1``) and the actors PoCL actors: the figures then say how the scheduling
scales on this CPU, not how kernels time; the run says so. The exit status is 1 when a path failed or,
on GPUs, a target was missed.

    python3 bench/bench_scale.py --out scale.json
    python3 bench/bench_scale.py --paths ray --ray auto --counts 1,2,4,8
    python3 bench/bench_scale.py --compare --paths devices,ray --counts 1
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import socket
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

TARGET_EFFICIENCY = 0.9


def parse_counts(text: str) -> List[int]:
    counts = sorted({int(item) for item in text.split(",") if item.strip()})
    if not counts or counts[0] < 1:
        raise SystemExit(f"--counts {text!r}: give positive integers such as 1,2,4")
    return counts


def parse_args(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--counts", default="1,2,4", help="devices or actors to measure (default 1,2,4)")
    parser.add_argument("--paths", default="devices,ray", help="devices, ray or both (default both)")
    parser.add_argument("--task", default="relu", help="built-in task or task folder (default relu; on a CPU its "
                                                       "timed size is cut to N = 65536)")
    parser.add_argument("--candidates", type=int, default=0,
                        help="candidates in the timed batch (default 4 per worker at the largest count)")
    parser.add_argument("--mode", default="screen", choices=["screen", "strict"])
    parser.add_argument("--backend", default="auto", choices=["auto", "cuda", "opencl"])
    parser.add_argument("--ray", metavar="ADDRESS", help="a running Ray cluster (default: start a local one)")
    parser.add_argument("--compare", action="store_true",
                        help="also compare the direct evaluator with a single Ray actor, strict mode")
    parser.add_argument("--compare-candidates", type=int, default=6)
    parser.add_argument("--out", help="write the report as JSON here")
    return parser.parse_args(argv)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    counts = parse_counts(args.counts)
    paths = [p.strip() for p in args.paths.split(",") if p.strip()]
    for path in paths:
        if path not in ("devices", "ray"):
            raise SystemExit(f"--paths: unknown path {path!r} (devices, ray)")
    # PoCL reads these when OpenCL loads, which is when kernelsmith first lists the devices: on a machine
    # without GPU they give max(counts) CPU devices of one thread each (the actors set their own thread
    # count). They do nothing to CUDA.
    os.environ.setdefault("POCL_DEVICES", " ".join(["pthread"] * max(counts)))
    os.environ.setdefault("POCL_MAX_PTHREAD_COUNT", "1")
    if not args.ray and "RAY_AUTH_MODE" not in os.environ and "RAY_AUTH_TOKEN" not in os.environ:
        # The local cluster started here authenticates with a token of its own, given in the environment
        # before Ray is imported (which reads it), so that nothing is written to ~/.ray.
        import secrets

        os.environ.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=secrets.token_hex(32))

    import kernelsmith as ks
    from bench_evaluator import Report, seed_variants, table

    report = Report(args.out or "")
    backends = {b.name: b for b in ks.devices()}
    backend = args.backend if args.backend != "auto" else ks.best_backend()
    devices = backends[backend].devices
    gpu = bool(devices) and devices[0].is_gpu
    versions = {"kernelsmith": ks.__version__, "python": platform.python_version()}
    try:
        import ray

        versions["ray"] = ray.__version__
    except ImportError:
        ray = None
        versions["ray"] = None
    report.data.update({
        "schema": "kernelsmith.bench_scale/1",
        "command": " ".join(shlex.quote(part) for part in [sys.executable] + sys.argv),
        "host": socket.gethostname(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "versions": versions,
        "backend": backend,
        "device_kind": devices[0].name if devices else "",
        "device_count": len(devices),
        "cpu_only": not gpu,
        "counts": counts,
    })
    print(f"command: {report.data['command']}")
    print(f"host {report.data['host']}, kernelsmith {versions['kernelsmith']}, ray {versions['ray'] or 'not installed'}, "
          f"python {versions['python']}")
    print(f"backend {backend}: {len(devices)} x {report.data['device_kind']}")
    if not gpu:
        print("NO GPU: the devices are PoCL CPU devices (one thread each) and the Ray actors PoCL actors of one CPU; "
              "timing on a shared CPU says how the scheduling scales here, not how kernels time")

    task = load_task(ks, args.task, gpu)
    candidates = make_candidates(ks, task, backend, max(args.candidates, 0) or 4 * max(counts), seed_variants)
    options = ks.EvaluatorOptions(backend=backend, mode=args.mode)
    report.data.update({"task": task.name, "candidates": len(candidates), "mode": args.mode})
    print(f"task {task.name} {dict(task.timing_sizes.sizes)}, {len(candidates)} candidates, {args.mode} mode")

    # Every compile into the disk cache, so that the measured batches are compile-light.
    report.phase("warm_cache", lambda: warm_cache(ks, task, candidates, options))

    results: Dict[str, List[Dict[str, Any]]] = {}
    if "devices" in paths:
        results["devices"] = report.phase("devices", lambda: measure(
            "devices", counts, len(devices), lambda n: ks.create_evaluator(changed(options, devices=list(range(n)))),
            task, candidates), failed=[])
    if "ray" in paths:
        if ray is None:
            report.error("ray", RuntimeError("Ray is not installed: pip install 'kernelsmith[ray]'"))
        else:
            results["ray"] = report.phase("ray", lambda: measure_ray(ks, ray, args, counts, gpu, len(devices), options,
                                                                      task, candidates), failed=[])
    report.data["results"] = results
    for path, rows in results.items():
        if not rows:
            continue
        print(f"\n{path}: evaluations per minute")
        print(table(["count", "evaluations", "seconds", "per minute", "vs 1", "efficiency"],
                    [[r["count"], r["evaluations"], f"{r['seconds']:.2f}", f"{r['per_minute']:.1f}",
                      f"{r['scaling']:.2f}x", f"{r['efficiency']:.2f}"] for r in rows]))
        if gpu:
            worst = min((r for r in rows if r["count"] > 1), key=lambda r: r["efficiency"], default=None)
            if worst is not None:
                report.target(f"{path}_scaling", worst["efficiency"] >= TARGET_EFFICIENCY,
                              f"efficiency {worst['efficiency']:.2f} at {worst['count']} (target >= "
                              f"{TARGET_EFFICIENCY})")
    if args.compare:
        if ray is None:
            report.error("compare", RuntimeError("Ray is not installed: pip install 'kernelsmith[ray]'"))
        else:
            report.data["compare"] = report.phase("compare", lambda: compare(ks, ray, args, options, task,
                                                                              candidates[: args.compare_candidates]))
    report.save()
    for name, target in report.data["targets"].items():
        print(f"target {name}: {'met' if target['met'] else 'MISSED'} ({target['detail']})")
    if args.out:
        print(f"report written to {args.out}")
    return 1 if report.failed else 0


def load_task(ks: Any, name: str, gpu: bool) -> Any:
    task = ks.Task.load(name)
    if gpu or task.name != "relu":
        return task
    document = json.loads(task.to_json())
    document["name"] = "relu_65536"
    document["sizes"] = {"N": 65536}
    return ks.Task.from_json(json.dumps(document))


def make_candidates(ks: Any, task: Any, backend: str, count: int, seed_variants: Any) -> List[Any]:
    """The seed, its variants, then copies that differ in a comment, up to `count` distinct sources."""
    language = backend
    seeds = dict(task.seeds)
    base = seeds[language].source if language in seeds else dict(task.references)[language].source
    sources = [base] + [source for _, source in seed_variants(base, count)]
    copy = 0
    while len(sources) < count:
        sources.append(f"// copy {copy}\n{sources[copy % max(1, len(sources))]}")
        copy += 1
    return [ks.Candidate(language, source, ks.Lineage(origin="bench")) for source in sources[:count]]


def warm_cache(ks: Any, task: Any, candidates: Sequence[Any], options: Any) -> Dict[str, Any]:
    started = time.monotonic()
    evaluations = ks.create_evaluator(options).evaluate_batch(task, list(candidates))
    statuses: Dict[str, int] = {}
    for evaluation in evaluations:
        name = str(evaluation.status).split(".")[-1]
        statuses[name] = statuses.get(name, 0) + 1
    print(f"warm-up: {len(evaluations)} evaluations in {time.monotonic() - started:.1f} s, statuses {statuses}")
    return {"statuses": statuses}


def changed(options: Any, **fields: Any) -> Any:
    """A copy of the options with some fields changed."""
    from kernelsmith.distributed import options_from_dict, options_to_dict

    return options_from_dict(dict(options_to_dict(options), **fields))


def timed_batch(evaluator: Any, task: Any, candidates: Sequence[Any], count: int) -> Dict[str, Any]:
    """One candidate per worker first (each times its baseline), then the whole batch on the clock."""
    evaluator.evaluate_batch(task, list(candidates[:count]))
    started = time.monotonic()
    evaluations = evaluator.evaluate_batch(task, list(candidates))
    seconds = time.monotonic() - started
    ok = sum(1 for evaluation in evaluations if evaluation.ok)
    placements = sorted({(e.placement.actor or str(e.placement.device_index)) for e in evaluations})
    return {"count": count, "evaluations": len(evaluations), "ok": ok, "seconds": seconds,
            "per_minute": 60.0 * len(evaluations) / seconds, "workers_used": len(placements)}


def finish_rows(rows: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    base = next((r for r in rows if r["count"] == 1), rows[0] if rows else None)
    for row in rows:
        row["scaling"] = row["per_minute"] / base["per_minute"]
        row["efficiency"] = row["scaling"] / (row["count"] / base["count"])
    return rows


def measure(path: str, counts: Sequence[int], available: int, make: Any, task: Any,
            candidates: Sequence[Any]) -> List[Dict[str, Any]]:
    rows = []
    for count in counts:
        if count > available:
            print(f"{path}: {count} skipped, this host has {available} device(s)")
            continue
        evaluator = make(count)
        try:
            row = timed_batch(evaluator, task, candidates, count)
        finally:
            if hasattr(evaluator, "close"):
                evaluator.close()  # a Ray evaluator gives its actors' resources back for the next count
        print(f"{path} {count}: {row['per_minute']:.1f} evaluations/min ({row['ok']}/{row['evaluations']} ok, "
              f"{row['workers_used']} workers used)")
        rows.append(row)
    return finish_rows(rows)


def ray_connect(ray: Any, args: argparse.Namespace, counts: Sequence[int], gpu: bool) -> None:
    if ray.is_initialized():
        return
    if args.ray:
        ray.init(address=args.ray, log_to_driver=False)
    else:
        # A local cluster: the GPUs Ray finds, or one CPU per PoCL actor.
        ray.init(num_cpus=max(counts) if not gpu else None, include_dashboard=False, log_to_driver=False,
                 _node_ip_address="127.0.0.1")


def measure_ray(ks: Any, ray: Any, args: argparse.Namespace, counts: Sequence[int], gpu: bool, devices: int,
                options: Any, task: Any, candidates: Sequence[Any]) -> List[Dict[str, Any]]:
    from kernelsmith.distributed import RayEvaluator

    ray_connect(ray, args, counts, gpu)
    resources = ray.cluster_resources()
    available = int(resources.get("GPU", 0)) if gpu else int(resources.get("CPU", 0))
    print(f"ray: cluster {ray.get_runtime_context().gcs_address}, resources "
          f"{ {k: v for k, v in resources.items() if k in ('CPU', 'GPU')} }")
    return measure("ray", counts, available,
                   lambda count: RayEvaluator(options=options, kind="gpu" if gpu else "cpu", actors=count), task,
                   candidates)


def compare(ks: Any, ray: Any, args: argparse.Namespace, options: Any, task: Any,
            candidates: Sequence[Any]) -> Dict[str, Any]:
    """Direct evaluator against one Ray actor, strict mode, the same candidates in the same order."""
    from kernelsmith.distributed import RayEvaluator

    strict = changed(options, mode="strict")
    started = time.monotonic()
    direct = ks.create_evaluator(strict).evaluate_batch(task, list(candidates))
    direct_seconds = time.monotonic() - started
    ray_connect(ray, args, [1], any(b.available and b.name == "cuda" for b in ks.devices()))
    with RayEvaluator(options=strict, actors=1) as evaluator:
        started = time.monotonic()
        remote = evaluator.evaluate_batch(task, list(candidates))
        ray_seconds = time.monotonic() - started
    rows = []
    ratios = []
    for index, (a, b) in enumerate(zip(direct, remote)):
        row = {"candidate": index, "direct_status": str(a.status).split(".")[-1],
               "ray_status": str(b.status).split(".")[-1], "direct_ms": None, "ray_ms": None, "ratio": None,
               "direct_speedup": a.speedup, "ray_speedup": b.speedup,
               "direct_noise": a.timing.noise if a.timing else None, "ray_noise": b.timing.noise if b.timing else None}
        if a.timing and b.timing:
            row["direct_ms"], row["ray_ms"] = a.timing.median_ms, b.timing.median_ms
            row["ratio"] = b.timing.median_ms / a.timing.median_ms
            ratios.append(row["ratio"])
        rows.append(row)
    same_statuses = all(r["direct_status"] == r["ray_status"] for r in rows)
    summary = {"same_statuses": same_statuses, "rows": rows, "direct_seconds": direct_seconds,
               "ray_seconds": ray_seconds,
               "median_ratio": statistics.median(ratios) if ratios else None,
               "max_deviation": max(abs(r - 1.0) for r in ratios) if ratios else None}
    print("\ncompare: direct evaluator vs one Ray actor, strict mode")
    from bench_evaluator import table

    print(table(["#", "status", "direct ms", "ray ms", "ray/direct", "noise direct", "noise ray"],
                [[r["candidate"], r["direct_status"] + ("" if r["direct_status"] == r["ray_status"] else
                                                         " vs " + r["ray_status"]),
                  _fmt(r["direct_ms"]), _fmt(r["ray_ms"]), _fmt(r["ratio"]), _fmt(r["direct_noise"]),
                  _fmt(r["ray_noise"])] for r in rows]))
    print(f"statuses agree: {same_statuses}; median ratio {_fmt(summary['median_ratio'])}, largest deviation "
          f"{_fmt(summary['max_deviation'])}; wall {direct_seconds:.1f} s direct, {ray_seconds:.1f} s through Ray")
    if not same_statuses:
        raise RuntimeError("the direct evaluator and the Ray actor disagree on a status: see the table")
    return summary


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{value:.4g}"


if __name__ == "__main__":
    sys.exit(main())
