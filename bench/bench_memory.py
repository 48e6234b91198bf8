"""The experience memory in a simulation, without an LLM: do its value estimates converge, and does choosing
by retrieval beat choosing at random?

A scripted improver works on lineages of kernels of the built-in tasks. Each step it picks a skill of the
built-in skill bank; the step succeeds with a hidden probability that depends on the skill and on the
situation: a skill whose predicate holds for the measured features (the situation it is written for) has a
hidden quality between 0.35 and 0.85, any other skill 0.08. In draft (the parent is incorrect) a success makes
the child correct; in refine (the parent is correct) a success makes it 1.25x faster, a failure leaves it
0.95x as fast, or breaks it one time in five. Every step is recorded into an ExperienceMemory exactly as the
engine records it (ExperienceMemory.record, with the items retrieved into the step and into its ancestors'
steps of the same stage credited).

Four policies choose the skill, on the same sequence of tasks and situations (the same seed):

- uniform: any skill of the stage, uniformly;
- gated: uniformly among the skills whose predicates hold (the skill bank alone);
- memory: the skill of the first item the memory retrieves (value and similarity, epsilon-greedy), uniform
  among the stage's skills while the memory has nothing to say;
- oracle: the skill with the best hidden expectation (an upper bound no policy can know).

Printed side by side: the draft success rate and the mean refine reward of each policy; the memory's value
estimates against the hidden expectations after 200, 1000 and all steps (their mean absolute error); and
cross-task transfer: a memory trained on some tasks, then used on held-out tasks, against a fresh memory.

  python3 bench/bench_memory.py                  # the full simulation (about a minute)
  python3 bench/bench_memory.py --quick --json   # what the test runs: fewer steps, a JSON document

The exit status is 1 when a claim does not hold: memory beats uniform in both stages, gated+memory beats
gated in refine, the estimates' error shrinks as steps accumulate, and a trained memory beats a fresh one on
held-out tasks in refine. (In draft, the skill bank's gating already finds the one skill written for each kind
of failure; the memory has little to add there, and the figures say so.)
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections import defaultdict
from typing import Dict, List, Optional, Tuple

import kernelsmith as ks

TRAIN_TASKS = ["relu", "softmax", "matmul", "conv2d_3x3", "cross_entropy", "transpose"]
HELD_OUT_TASKS = ["gelu", "layernorm", "matmul_fp16"]
FAILURES = ["compile_error", "mismatch", "unwritten", "non_finite", "crashed", "timeout"]
STATUS_OF_FAILURE = {"mismatch": "incorrect", "unwritten": "incorrect", "non_finite": "incorrect"}
LOW_QUALITY = 0.08
SUCCESS_SPEEDUP, FAILED_SPEEDUP, BREAK_SHARE = 1.25, 0.95, 0.2
STEPS_PER_LINEAGE = 8
# How often the improver ignores the experience and tries another skill the prompt shows.
MODEL_EXPLORATION = 0.2


class World:
    """The hidden truth: skill qualities, and the situations a lineage meets."""

    def __init__(self, seed: int) -> None:
        self.bank = ks.SkillBank.builtin()
        rng = random.Random(seed)
        self.quality = {skill.name: rng.uniform(0.35, 0.85) for skill in self.bank.skills}
        self.skills = {"draft": [], "refine": []}
        for skill in self.bank.skills:
            stage = "refine" if "stage == \"refine\"" in skill.when else "draft"
            self.skills[stage].append(skill.name)
        self.task_features = {name: ks.task_features(ks.Task.load(name)) for name in TRAIN_TASKS + HELD_OUT_TASKS}

    def success_probability(self, skill: str, features: dict) -> float:
        found = self.bank.find(skill)
        return self.quality[skill] if found is not None and found.applies(features) else LOW_QUALITY

    def expected_reward(self, skill: str, features: dict, stage: str) -> float:
        p = self.success_probability(skill, features)
        if stage == "draft":
            return p
        fail = (1 - BREAK_SHARE) * math.log2(FAILED_SPEEDUP) + BREAK_SHARE * -1.0
        return p * math.log2(SUCCESS_SPEEDUP) + (1 - p) * fail

    def draft_feedback(self, rng: random.Random) -> dict:
        failure = rng.choice(FAILURES)
        status = STATUS_OF_FAILURE.get(failure, failure)
        feedback = {"stage": "draft", "status": status, "failure": failure, "correct": 0.0,
                    "compiled": 0.0 if failure == "compile_error" else 1.0, "language": "cuda", "device": "gpu"}
        if failure == "mismatch" and rng.random() < 0.5:
            feedback["shared_bytes"] = 4096.0  # a kernel with shared memory: a race is possible
        return feedback

    def refine_feedback(self, task: str, speedup: float, rng: random.Random) -> dict:
        features = self.task_features[task]
        memory_bound = features.get("task_intensity", 0.0) < 8
        bandwidth = rng.uniform(0.15, 0.55) if memory_bound else rng.uniform(0.02, 0.15)
        compute = rng.uniform(0.0, 0.05) if memory_bound else rng.uniform(0.1, 0.45)
        feedback = {"stage": "refine", "status": "ok", "failure": "none", "correct": 1.0, "compiled": 1.0,
                    "speedup": speedup, "bandwidth_fraction": bandwidth, "compute_fraction": compute,
                    "sol_fraction": max(bandwidth, compute), "kernels": float(rng.choice([1, 1, 2])),
                    "registers": float(rng.choice([32, 64, 96, 168])), "spill_bytes": float(rng.choice([0, 0, 0, 64])),
                    "language": "cuda", "device": "gpu"}
        feedback["occupancy"] = min(64.0, math.floor(65536 / (math.ceil(feedback["registers"] / 8) * 8 * 32))) / 64
        feedback["shared_bytes"] = 0.0 if memory_bound or rng.random() < 0.5 else 8192.0
        if feedback["kernels"] > 1:
            feedback["dominant_kernel_share"] = rng.uniform(0.5, 0.95)
        return feedback


class Policy:
    """How the scripted improver picks a skill, as a model reading the prompt would: the skills the prompt shows
    (all of the stage's, or those whose predicates hold: the skill bank's gating) and, with a memory, the
    experience retrieved for the step."""

    def __init__(self, name: str, world: World, memory: Optional[ks.ExperienceMemory]) -> None:
        self.name = name
        self.world = world
        self.memory = memory
        self.gated = name in ("gated", "gated+memory")
        self.uses_memory = name in ("memory", "gated+memory")

    def choose(self, stage: str, features: dict, query: ks.ExperienceQuery,
               rng: random.Random) -> Tuple[str, List[int]]:
        """The skill to apply and the ids of the items retrieved for the step."""
        candidates = self.world.skills[stage]
        if self.name == "oracle":
            return max(candidates, key=lambda s: self.world.expected_reward(s, features, stage)), []
        if self.gated:
            candidates = [s for s in candidates if self.world.bank.find(s).applies(features)] or candidates
        if not self.uses_memory:
            return rng.choice(candidates), []
        found = self.memory.retrieve(query)
        # The best-ranked experience of a skill the prompt shows is followed, but now and then the improver tries
        # another such skill (a model does not only repeat what it read). The step credits the items it
        # followed: those of the skill it applies (the engine's rule).
        shown = [entry.item.skill for entry in found if entry.item.skill in candidates]
        if shown and rng.random() >= MODEL_EXPLORATION:
            skill = shown[0]
        else:
            skill = rng.choice(candidates)
        return skill, [entry.item.id for entry in found if entry.item.skill == skill]


def simulate(world: World, policy: Policy, tasks: List[str], lineages: int, seed: int,
             record_into: ks.ExperienceMemory, checkpoints=(), on_checkpoint=None) -> Dict[str, float]:
    """Runs `lineages` lineages of STEPS_PER_LINEAGE steps; returns the draft success rate and the mean refine
    reward. The situations depend on `seed` alone, not on the policy (a separate stream)."""
    situations = random.Random(seed)
    choices = random.Random(seed + 1)
    outcomes = random.Random(seed + 2)
    draft_steps = draft_successes = refine_steps = 0
    refine_reward = 0.0
    step_number = 0
    for _ in range(lineages):
        task = situations.choice(tasks)
        task_features = world.task_features[task]
        feedback = world.draft_feedback(situations)
        speedup = 0.0
        # The retrieved items of the steps that made the current parent, nearest first, with their stages.
        lineage: List[Tuple[str, List[int]]] = []
        for _ in range(STEPS_PER_LINEAGE):
            stage = feedback["stage"]
            features = dict(task_features, **feedback)
            query = ks.ExperienceQuery(task, task_features, feedback, ks.parse_stage(stage), 3, step_number)
            skill, retrieved = policy.choose(stage, features, query, choices)
            success = outcomes.random() < world.success_probability(skill, features)
            item = ks.ExperienceItem()
            item.task, item.task_features, item.feedback = task, task_features, feedback
            item.stage, item.skill, item.edit = ks.parse_stage(stage), skill, "simulated"
            if stage == "draft":
                item.status = ks.Status.ok if success else ks.Status.incorrect
                item.speedup = 1.0 if success else 0.0
                draft_steps += 1
                draft_successes += success
            else:
                broken = not success and outcomes.random() < BREAK_SHARE
                item.status = ks.Status.incorrect if broken else ks.Status.ok
                item.speedup = 0.0 if broken else speedup * (SUCCESS_SPEEDUP if success else FAILED_SPEEDUP)
                item.parent_speedup = speedup
                refine_steps += 1
                refine_reward += ks.experience_reward(item.stage, item.status, item.speedup, item.parent_speedup)
            item.correct = item.status == ks.Status.ok
            item.compiled = True
            # Credited as the engine credits: this step's items, then those of the steps that made the parent.
            credited = [retrieved] + [ids for s, ids in lineage if s == stage][:2]
            record_into.record(item, credited)
            step_number += 1
            if on_checkpoint and step_number in checkpoints:
                on_checkpoint(step_number)
            # The child becomes the parent when it is better: correct in draft, faster in refine.
            if stage == "draft" and success:
                speedup = 1.0
                feedback = world.refine_feedback(task, speedup, situations)
                lineage.insert(0, (stage, retrieved))
            elif stage == "refine" and success:
                speedup = item.speedup
                feedback = world.refine_feedback(task, speedup, situations)
                lineage.insert(0, (stage, retrieved))
    return {
        "draft_success_rate": draft_successes / max(draft_steps, 1),
        "refine_mean_reward": refine_reward / max(refine_steps, 1),
        "draft_steps": draft_steps,
        "refine_steps": refine_steps,
    }


def clone(memory: ks.ExperienceMemory) -> ks.ExperienceMemory:
    """A copy in the process, values included (items get new ids)."""
    copy = ks.ExperienceMemory()
    for item in memory.items():
        copy.add(item)
    return copy


def estimate_error(world: World, memory: ks.ExperienceMemory, min_weight: float) -> Tuple[float, int, list]:
    """The memory's value estimate of each (task, situation kind, skill) it learned with enough weight, against
    the hidden expectation: (mean absolute error, pairs compared, rows)."""
    learned: Dict[tuple, List[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for item in memory.items():
        stage = "draft" if item.stage == ks.Stage.draft else "refine"
        value = item.value(item.stage)
        features = dict(item.task_features, **item.feedback)
        holds = world.bank.find(item.skill).applies(features)
        hidden = world.expected_reward(item.skill, features, stage)
        key = (item.task, stage, item.skill, holds)
        entry = learned[key]
        entry[0] += value.value * value.weight
        entry[1] += value.weight
        entry[2] += hidden * value.weight
    rows = []
    for (task, stage, skill, holds), (weighted, weight, hidden_weighted) in learned.items():
        if weight >= min_weight:
            rows.append((task, stage, skill, holds, hidden_weighted / weight, weighted / weight, weight))
    if not rows:
        return float("nan"), 0, rows
    error = sum(abs(row[4] - row[5]) for row in rows) / len(rows)
    return error, len(rows), rows


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lineages", type=int, default=600, help="lineages of 8 steps per policy (default 600)")
    parser.add_argument("--held-out-lineages", type=int, default=12, help="lineages per run on the held-out tasks")
    parser.add_argument("--repeats", type=int, default=20, help="runs on the held-out tasks per memory (default 20)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="250 lineages, 10 held-out runs (for the test)")
    parser.add_argument("--json", action="store_true", help="print the numbers as one JSON document")
    args = parser.parse_args(argv)
    if args.quick:
        args.lineages, args.repeats = 250, 10
    world = World(args.seed)
    steps = args.lineages * STEPS_PER_LINEAGE

    # Policies side by side on the same situations.
    results: Dict[str, Dict[str, float]] = {}
    convergence: List[Tuple[int, float, int]] = []
    trained: Optional[ks.ExperienceMemory] = None
    for name in ["uniform", "gated", "memory", "gated+memory", "oracle"]:
        memory = ks.ExperienceMemory()
        policy = Policy(name, world, memory)
        checkpoints = sorted({200, 1000, steps} & set(range(1, steps + 1)))

        def checkpoint(step: int, memory: ks.ExperienceMemory = memory) -> None:
            error, pairs, _ = estimate_error(world, memory, min_weight=5.0)
            convergence.append((step, error, pairs))

        learning = name == "gated+memory"  # the system: the skill bank's gating and the memory
        results[name] = simulate(world, policy, TRAIN_TASKS, args.lineages, args.seed, memory,
                                 checkpoints if learning else (), checkpoint if learning else None)
        if learning:
            trained = memory
    _, _, rows = estimate_error(world, trained, min_weight=20.0)
    rows.sort(key=lambda row: -row[6])

    # Transfer: short runs on held-out tasks with (a copy of) the trained memory, with a fresh one, and with the
    # skill bank alone; averaged over repeats with different situations.
    transfer: Dict[str, Dict[str, float]] = {}
    for name in ["trained memory", "fresh memory", "gated"]:
        totals: Dict[str, float] = defaultdict(float)
        for repeat in range(args.repeats):
            memory = clone(trained) if name == "trained memory" else ks.ExperienceMemory()
            policy = Policy("gated" if name == "gated" else "gated+memory", world, memory)
            result = simulate(world, policy, HELD_OUT_TASKS, args.held_out_lineages, args.seed + 100 + repeat, memory)
            for key, value in result.items():
                totals[key] += value / args.repeats
        transfer[name] = dict(totals)

    def beats(a: str, b: str, key: str) -> bool:
        return results[a][key] > results[b][key]

    claims = {
        "memory beats uniform in draft": beats("memory", "uniform", "draft_success_rate"),
        "memory beats uniform in refine": beats("memory", "uniform", "refine_mean_reward"),
        "gated+memory beats gated in refine": beats("gated+memory", "gated", "refine_mean_reward"),
        "the estimates' error shrinks": len(convergence) >= 2 and convergence[-1][1] < convergence[0][1],
        "a trained memory beats a fresh one on held-out tasks in refine":
            transfer["trained memory"]["refine_mean_reward"] > transfer["fresh memory"]["refine_mean_reward"],
    }
    document = {
        "steps_per_policy": steps,
        "policies": results,
        "convergence": [{"steps": s, "mean_absolute_error": e, "pairs": p} for s, e, p in convergence],
        "estimates": [{"task": r[0], "stage": r[1], "skill": r[2], "predicate_holds": r[3], "hidden": r[4],
                       "learned": r[5], "weight": r[6]} for r in rows[:12]],
        "transfer": transfer,
        "claims": claims,
    }
    if args.json:
        print(json.dumps(document, indent=2))
    else:
        print(f"{steps} steps per policy ({args.lineages} lineages of {STEPS_PER_LINEAGE} steps over "
              f"{', '.join(TRAIN_TASKS)}), seed {args.seed}\n")
        print(f"{'policy':<13} {'draft success':>14} {'refine reward':>14}")
        for name, result in results.items():
            print(f"{name:<13} {result['draft_success_rate']:>14.3f} {result['refine_mean_reward']:>14.3f}")
        print("\nthe memory's value estimates against the hidden expectations (pairs with weight >= 5)")
        print(f"{'steps':>6} {'mean abs error':>15} {'pairs':>6}")
        for step, error, pairs in convergence:
            print(f"{step:>6} {error:>15.3f} {pairs:>6}")
        print("\nthe most used (task, stage, skill) pairs: hidden expectation and learned value")
        print(f"{'task':<14} {'stage':<7} {'skill':<32} {'fits':<5} {'hidden':>7} {'learned':>8} {'weight':>7}")
        for task, stage, skill, holds, hidden, learned, weight in rows[:12]:
            print(f"{task:<14} {stage:<7} {skill:<32} {'yes' if holds else 'no':<5} {hidden:>7.3f} {learned:>8.3f} "
                  f"{weight:>7.1f}")
        print(f"\nheld-out tasks ({', '.join(HELD_OUT_TASKS)}): {args.repeats} runs of {args.held_out_lineages} "
              f"lineages each, averaged")
        print(f"{'memory':<15} {'draft success':>14} {'refine reward':>14}")
        for name, result in transfer.items():
            print(f"{name:<15} {result['draft_success_rate']:>14.3f} {result['refine_mean_reward']:>14.3f}")
        print()
        for claim, holds in claims.items():
            print(f"{'holds ' if holds else 'FAILS '} {claim}")
    return 0 if all(claims.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
