"""An evaluator written in Python, driven by the C++ evolution engine.

`StableSpeedupEvaluator` wraps the built-in evaluator and adds a metric: it discounts the fitness of
a candidate by its timing noise, so the search prefers speedups that were measured cleanly over lucky
samples, and it records each candidate's achieved bandwidth. The status, the correctness checks and
the timing still come from the built-in evaluator, unchanged.

    python examples/custom_evaluator.py --task relu --budget 20
    python examples/custom_evaluator.py --small        # relu at CPU-friendly sizes (PoCL)
"""

from __future__ import annotations

import argparse
import json
import threading

import kernelsmith as ks


class StableSpeedupEvaluator(ks.Evaluator):
    """The built-in evaluator, with fitness = speedup / (1 + noise) and bandwidth recorded."""

    def __init__(self, backend: str = "auto") -> None:
        super().__init__()  # required: the C++ side of the object is made here
        # Strict mode: a run's best is a confirmed evaluation (docs/search.md), which screen-mode figures are not.
        self.inner = ks.create_evaluator(ks.EvaluatorOptions(backend=backend, mode="strict"))
        self.bandwidth_gbps = {}  # candidate id -> achieved GB/s
        self.lock = threading.Lock()  # the engine evaluates from several threads

    def evaluate(self, task, candidate):
        evaluation = self.inner.evaluate(task, candidate)
        if evaluation.ok and evaluation.timing is not None:
            # Only correct candidates have a positive fitness; failures keep theirs (below zero).
            evaluation.fitness = evaluation.speedup / (1.0 + evaluation.timing.noise)
            if evaluation.sol is not None:
                with self.lock:
                    self.bandwidth_gbps[candidate.id()] = evaluation.sol.achieved_gbps
        return evaluation

    def backend_name(self):
        return self.inner.backend_name()

    def device_name(self):
        return self.inner.device_name()


def small_task(name: str) -> "ks.Task":
    """The task with its timed size cut to 65536 elements, so a CPU OpenCL device times it quickly."""
    document = json.loads(ks.Task.load(name).to_json())
    document["name"] = f"{name}_small"
    document["sizes"] = {size: min(value, 65536) for size, value in document["sizes"].items()}
    return ks.Task.from_json(json.dumps(document))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="relu")
    parser.add_argument("--budget", type=int, default=20, help="evaluations, reference and seeds included")
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--db", default=None, help="run store (SQLite); default: a new temporary file")
    parser.add_argument("--small", action="store_true", help="time the task at small sizes")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)

    task = small_task(args.task) if args.small else ks.Task.load(args.task)
    evaluator = StableSpeedupEvaluator(args.backend)
    run = ks.evolve(task, budget=args.budget, db=args.db, evaluator=evaluator, progress=not args.no_progress,
                    seed=1)
    best = run.best()
    timing = best.evaluation.timing
    print(f"{run.result.evaluations} evaluations on {evaluator.backend_name()} '{evaluator.device_name()}'")
    print(f"best speedup: {best.evaluation.speedup:.3f}x, noise {timing.noise * 100:.1f}%, "
          f"fitness {best.evaluation.fitness:.3f} ({best.id})")
    if best.id in evaluator.bandwidth_gbps:
        print(f"achieved bandwidth: {evaluator.bandwidth_gbps[best.id]:.3g} GB/s")
    print(f"run store: {run.db_path}")
    return run, evaluator


if __name__ == "__main__":
    main()
