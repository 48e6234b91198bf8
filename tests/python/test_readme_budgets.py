"""The README's evolve examples (and docs/search.md's) reach the budgets they show on a CPU (issue 40): there the
runs are OpenCL, and the parameter mutator only varies the seed's @tune values, so the seed must offer at least a
budget's worth of programs. A real 32-evaluation run takes about ten minutes on a 2-core machine; here the same search (the
built-in ParamMutator on the task's OpenCL seed, the engine's duplicate and exhaustion rules) runs with an
evaluator that scores without a device, and a few of the new combinations are evaluated for real on PoCL."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

import kernelsmith as ks
from backends import fast_opencl_evaluator, needs_opencl

ROOT = Path(__file__).resolve().parents[2]


#: The CPU examples of the README and docs/search.md: (file, the example's pattern, whose group 1 is the budget,
#: the task). On a machine without a GPU each runs OpenCL with the parameter mutator.
EXAMPLES = [
    ("README.md", r"^kernelsmith evolve --task softmax --mutator param --budget (\d+)", "softmax"),
    ("README.md", r"ks\.evolve\(\"relu\", budget=(\d+)", "relu"),
    ("docs/search.md", r"kernelsmith evolve --task relu --backend opencl --budget (\d+)", "relu"),
]


def shown_budget(path: str, pattern: str) -> int:
    found = re.search(pattern, (ROOT / path).read_text(), re.M)
    assert found, f"{path} no longer shows the example {pattern!r}: update EXAMPLES"
    return int(found.group(1))


class HashScoringEvaluator(ks.Evaluator):
    """Every candidate correct, its speedup from a hash of its source: no device, the search's rules unchanged."""

    def evaluate(self, task, candidate):
        evaluation = ks.Evaluation()
        evaluation.task = task.name
        evaluation.status = ks.Status.ok
        evaluation.message = "ok"
        evaluation.speedup = 0.5 + hashlib.sha256(candidate.source.encode()).digest()[0] / 256.0
        evaluation.fitness = evaluation.speedup
        return evaluation

    def backend_name(self):
        return "opencl"


@pytest.mark.parametrize("path, pattern, task_name", EXAMPLES)
def test_the_example_run_reaches_its_budget_with_the_parameter_mutator(path, pattern, task_name, tmp_path):
    budget = shown_budget(path, pattern)
    task = ks.Task.load(task_name)
    config = ks.EvolutionConfig()
    config.db_path = str(tmp_path / "run.db")
    config.budget = budget
    config.language = "opencl"
    config.seed = 1
    result = ks.Evolution(task, HashScoringEvaluator(), ks.ParamMutator(), config).run()
    assert result.evaluations == budget, (result.stop_reason, result.evaluations)


@needs_opencl
@pytest.mark.parametrize("task_name, values", [("softmax", {"BLOCK": 16, "ITEMS": 16}),
                                               ("softmax", {"BLOCK": 1024, "ITEMS": 8}),
                                               ("relu", {"BLOCK": 16, "ITEMS": 32})])
def test_new_seed_combinations_are_correct_on_opencl(task_name, values, tmp_path):
    task = ks.Task.load(task_name)
    seed = task.seeds["opencl"].source
    candidate = ks.Candidate("opencl", ks.ParamMutator.rewrite(seed, values, "opencl"))
    evaluation = fast_opencl_evaluator(tmp_path / "cache").evaluate(task, candidate)
    assert evaluation.status == ks.Status.ok, evaluation.message
