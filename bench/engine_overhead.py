"""The evolution engine's own share of a run's wall time (target: under 2%).

Runs a real evolution (built-in evaluator, parameter mutator, one mutation in flight so that the
times add up) and splits its wall time into the evaluator's, the mutator's and the rest: selection,
inspirations, novelty, archive, the run store, progress callbacks. A second run over an evaluator that
answers at once gives the engine's absolute cost per step, the number that matters when evaluations
get fast.

    python bench/engine_overhead.py [--task relu] [--size N] [--backend opencl] [--budget 40]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import kernelsmith as ks


class InstantEvaluator(ks.Evaluator):
    """Scores from the @tune values without running anything: the engine alone is left to time."""

    def evaluate(self, task, candidate):
        evaluation = ks.Evaluation()
        values = ks.ParamMutator.values_of(candidate.source)
        evaluation.status = ks.Status.ok
        evaluation.speedup = 1.0 + sum(values.values()) / 1000.0
        evaluation.fitness = evaluation.speedup
        evaluation.message = "ok"
        return evaluation

    def backend_name(self):
        return "custom"


def resized_task(name: str, size: int, folder: Path) -> "ks.Task":
    document = json.loads(ks.Task.load(name).to_json())
    sizes = document["sizes"]
    document["sizes"] = {key: min(value, size) for key, value in sizes.items()}
    document["name"] = f"{name}_bench"
    (folder / "task.json").write_text(json.dumps(document))
    return ks.Task.load(str(folder))


def run(task, evaluator, budget: int, db: Path):
    config = ks.EvolutionConfig()
    config.budget = budget
    config.db_path = str(db)
    config.mutations_in_flight = 1
    config.islands = 2
    config.max_failed_proposals = 1000
    steps = []
    evolution = ks.Evolution(task, evaluator, ks.ParamMutator(), config)
    evolution.on_progress(lambda progress: steps.append(progress.evaluations))
    started = time.perf_counter()
    result = evolution.run()
    return result, time.perf_counter() - started, len(steps)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="relu")
    parser.add_argument("--size", type=int, default=1 << 20, help="cap on each of the task's sizes")
    parser.add_argument("--backend", default="opencl")
    parser.add_argument("--budget", type=int, default=40)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        task = resized_task(args.task, args.size, folder)
        evaluator = ks.create_evaluator(ks.EvaluatorOptions(backend=args.backend))
        result, wall, steps = run(task, evaluator, args.budget, folder / "real.db")
        engine = wall - result.evaluator_seconds - result.mutator_seconds
        print(f"real run: {task.name} on {evaluator.backend_name()} '{evaluator.device_name()}', "
              f"{result.evaluations} evaluations, {steps} steps, stop: {result.stop_reason}")
        print(f"  wall            {wall:9.3f} s")
        print(f"  evaluator       {result.evaluator_seconds:9.3f} s  {100 * result.evaluator_seconds / wall:6.2f} %")
        print(f"  mutator         {result.mutator_seconds:9.3f} s  {100 * result.mutator_seconds / wall:6.2f} %")
        print(f"  engine (rest)   {engine:9.3f} s  {100 * engine / wall:6.2f} %   (store {result.store_seconds:.3f} s)")
        print(f"  engine share as the engine reports it: {100 * result.engine_share:.2f} % (target < 2 %)")

        budget = 300
        instant, instant_wall, instant_steps = run(task, InstantEvaluator(), budget, folder / "instant.db")
        rest = instant_wall - instant.evaluator_seconds - instant.mutator_seconds
        print(f"instant evaluator: {instant.evaluations} evaluations, {instant_steps} steps in {instant_wall:.3f} s")
        print(f"  engine per step {1000 * rest / max(1, instant_steps):8.3f} ms "
              f"(store {1000 * instant.store_seconds / max(1, instant_steps):.3f} ms of it)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
