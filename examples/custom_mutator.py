"""A mutator written in Python, driven by the C++ evolution engine.

`SweepMutator` reads the parent's launch plan, picks one `// @tune` parameter and moves it to a
neighbouring allowed value (a local search over the tuning space). The engine calls `propose()` from
its worker threads, evaluates what comes back, and keeps the fittest programs in its archive. An LLM
mutator plugs in the same way (docs/llm.md).

    python examples/custom_mutator.py --task relu --budget 20
    python examples/custom_mutator.py --small        # relu at CPU-friendly sizes (PoCL)
"""

from __future__ import annotations

import argparse
import json
import random

import kernelsmith as ks


class SweepMutator(ks.Mutator):
    """Moves one @tune value of the parent one step up or down among its allowed values."""

    def __init__(self) -> None:
        super().__init__()  # required: the C++ side of the object is made here

    def name(self) -> str:
        return "sweep"

    def propose(self, request: "ks.MutationRequest"):
        parent = request.parent
        plan = ks.LaunchPlan.parse(parent.source)
        movable = [t for t in plan.tunables if len(t.values) > 1]
        if not movable:
            # A failure is an answer, not an exception: the engine records it and moves on.
            return [ks.Proposal(mutation="sweep", failure="the parent has no @tune parameter to move")]
        rng = random.Random(request.seed)
        values = {t.name: t.value for t in plan.tunables}
        for _ in range(4 * len(movable)):
            tunable = rng.choice(movable)
            index = tunable.values.index(tunable.value) + rng.choice([-1, 1])
            if not 0 <= index < len(tunable.values):
                continue
            moved = dict(values, **{tunable.name: tunable.values[index]})
            child = ks.Candidate(parent.language, ks.ParamMutator.rewrite(parent.source, moved))
            if not request.is_known(child):  # skip code the run has already seen
                return [ks.Proposal(candidate=child, mutation="sweep")]
        return [ks.Proposal(mutation="sweep", failure="every neighbour of the parent was already tried")]


def small_task(name: str) -> "ks.Task":
    """The task with its timed size cut to 65536 elements, so a CPU OpenCL device times it quickly."""
    document = json.loads(ks.Task.load(name).to_json())
    document["name"] = f"{name}_small"
    document["sizes"] = {size: min(value, 65536) for size, value in document["sizes"].items()}
    return ks.Task.from_json(json.dumps(document))


def main(argv=None) -> "ks.Run":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="relu")
    parser.add_argument("--budget", type=int, default=20, help="evaluations, reference and seeds included")
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--db", default=None, help="run store (SQLite); default: a new temporary file")
    parser.add_argument("--small", action="store_true", help="time the task at small sizes")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)

    task = small_task(args.task) if args.small else ks.Task.load(args.task)
    mutator = SweepMutator()
    run = ks.evolve(task, backend=args.backend, budget=args.budget, db=args.db, mutator=mutator,
                    progress=not args.no_progress, seed=1)
    best = run.best()
    origins = [row["origin"] for row in run.records()]
    print(f"{run.result.evaluations} evaluations ({origins.count('sweep')} from SweepMutator), "
          f"stopped: {run.result.stop_reason}")
    print(f"best speedup: {best.evaluation.speedup:.3f}x ({best.id}, {best.candidate.lineage.origin})")
    print(f"run store: {run.db_path}")
    return run


if __name__ == "__main__":
    main()
