"""Training data from evolution trajectories (docs/training.md).

The run stores here are real: a short evolution of the relu task on the OpenCL backend (PoCL runs it
on the CPU), its LLM mutator talking HTTP to a loopback OpenAI-compatible server that answers with
scripted kernels; and stores written step by step through kernelsmith.RunStore with evaluations from
the real evaluator, for the filters that need a precise situation (a copied inspiration, a twin step).
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import sqlite3

import pytest

import kernelsmith
from kernelsmith import training
from kernelsmith.training import RewardShaping, grpo_advantages, rloo_advantages
from kernelsmith.training.rewards import Outcome
from backends import fast_opencl_evaluator

# --------------------------------------------------------------------------- pure parts, no device


def test_grpo_advantages_match_the_formula():
    rewards = [1.0, 0.0, 0.0, 1.0, 0.5]
    mean = sum(rewards) / 5
    std = math.sqrt(sum((r - mean) ** 2 for r in rewards) / 4)
    assert grpo_advantages(rewards, eps=0.0) == pytest.approx([(r - mean) / std for r in rewards])
    assert grpo_advantages([1.0, 0.0]) == pytest.approx([1 / math.sqrt(2), -1 / math.sqrt(2)], rel=1e-5)
    assert grpo_advantages([0.3, 0.3, 0.3]) == [0.0, 0.0, 0.0]
    assert grpo_advantages([2.0]) == [0.0]
    assert grpo_advantages([]) == []
    assert grpo_advantages([1.0, 3.0], normalize_std=False) == [-1.0, 1.0]


def test_rloo_advantages_leave_one_out():
    assert rloo_advantages([1.0, 2.0, 3.0]) == pytest.approx([-1.5, 0.0, 1.5])
    rewards = [0.2, -0.5, 1.3, 0.0]
    n = len(rewards)
    expected = [r - (sum(rewards) - r) / (n - 1) for r in rewards]
    assert rloo_advantages(rewards) == pytest.approx(expected)
    # RLOO is the centred reward scaled by n / (n - 1).
    mean = sum(rewards) / n
    assert rloo_advantages(rewards) == pytest.approx([n / (n - 1) * (r - mean) for r in rewards])
    assert rloo_advantages([5.0]) == [0.0]


def correct(speedup, parent_speedup=1.0, flags=()):
    return Outcome(parsed=True, status="ok", compiled=True, correct=True, speedup=speedup,
                   parent_speedup=parent_speedup, flags=tuple(flags))


def failed(status, compiled=True):
    return Outcome(parsed=True, status=status, compiled=compiled, parent_speedup=1.0)


def test_the_kernelgym_presets_mirror_its_reward_client():
    weighted = RewardShaping.preset("kernelgym")
    # 0.5 * correct + 0.5 * [speedup >= 1.01]; every failure scores penalty_score 0.0.
    assert weighted.reward(correct(1.005)) == pytest.approx(0.5)
    assert weighted.reward(correct(1.02)) == pytest.approx(1.0)
    assert weighted.reward(correct(0.5)) == pytest.approx(0.5)
    for outcome in (failed("compile_error", compiled=False), failed("incorrect"), failed("timeout"),
                    Outcome(parsed=False)):
        assert weighted.reward(outcome) == 0.0

    tiered = RewardShaping.preset("kernelgym_tiered")
    assert [tiered.reward(correct(s)) for s in (3.5, 2.0, 1.7, 1.25, 1.0, 0.9)] == pytest.approx(
        [1.0, 0.8, 0.6, 0.4, 0.2, -0.1])
    assert tiered.reward(failed("compile_error", compiled=False)) == -0.5
    assert tiered.reward(failed("incorrect")) == -0.3
    assert tiered.reward(failed("crashed")) == -1.0


def test_the_default_shaping_rewards_speed_over_the_parent():
    shaping = RewardShaping()
    # Speedup 3.0 over a parent at 1.5 is 2x: 0.3 + log2(2).
    assert shaping.reward(correct(3.0, parent_speedup=1.5)) == pytest.approx(1.3)
    assert shaping.reward(correct(0.75, parent_speedup=1.5)) == pytest.approx(0.3 - 0.5)  # clipped
    assert shaping.reward(correct(1.2, parent_speedup=1.5)) == pytest.approx(0.3 + math.log2(0.8))
    assert shaping.reward(correct(100.0, parent_speedup=1.0)) == pytest.approx(0.3 + 2.0)  # clipped
    assert shaping.reward(correct(2.0, flags=["nondeterministic"])) == shaping.hacked
    assert shaping.reward(correct(2.0, flags=["remeasured"])) == pytest.approx(1.3)
    order = [Outcome(parsed=False), failed("compile_error", compiled=False), failed("runtime_error"),
             failed("incorrect"), correct(0.5), correct(1.0), correct(2.0)]
    rewards = [shaping.reward(o) for o in order]
    assert rewards == sorted(rewards) and len(set(rewards)) == len(rewards)

    baseline = RewardShaping.from_spec({"speedup_basis": "baseline"})
    assert baseline.reward(correct(2.0, parent_speedup=2.0)) == pytest.approx(1.3)
    with pytest.raises(ValueError, match="speedup_mode"):
        RewardShaping(speedup_mode="exp")
    with pytest.raises(ValueError, match="unknown RewardShaping fields"):
        RewardShaping.from_spec({"bonus": 1})
    with pytest.raises(ValueError, match="unknown reward preset"):
        RewardShaping.preset("nope")


INSPIRATION = """// @launch relu_vec4<<<ceil_div(N, 1024), 256>>>(x, y, N)
__kernel void relu_vec4(__global const float* x, __global float* y, int N) {
  const int base = get_global_id(0) * 4;
  for (int k = 0; k < 4; ++k) {
    const int i = base + k;
    if (i < N) y[i] = fmax(x[i], 0.0f);
  }
}
"""

PARENT = """// @launch relu<<<ceil_div(N, 256), 256>>>(x, y, N)
__kernel void relu(__global const float* x, __global float* y, int N) {
  const int i = get_global_id(0);
  if (i < N) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
"""


def prompt_with(*sources):
    return "".join(f"## Program {i}\n```opencl\n{s}```\n\n" for i, s in enumerate(sources))


def test_leakage_measures_the_new_code_that_came_from_a_shown_program():
    copied = INSPIRATION.replace("relu_vec4", "relu")
    report = training.leakage(copied, [PARENT], [prompt_with(PARENT, INSPIRATION)])
    assert report.parent_blocks == 1 and report.other_blocks == 1
    assert report.score > 0.9 and report.leaks(0.6, 4)

    independent = """// @launch relu<<<ceil_div(N, 512), 256>>>(x, y, N)
__kernel void relu(__global const float* x, __global float* y, int N) {
  const int i = get_global_id(0) * 2;
  if (i < N) y[i] = max(x[i], 0.0f);
  if (i + 1 < N) y[i + 1] = max(x[i + 1], 0.0f);
}
"""
    report = training.leakage(independent, [PARENT], [prompt_with(PARENT, INSPIRATION)])
    assert report.novel_ngrams > 10 and report.score < 0.3 and not report.leaks(0.6, 4)
    # The parent's own code is never a leak, even when it is all the child holds.
    assert training.leakage(PARENT, [PARENT], [prompt_with(PARENT)]).score == 0.0
    assert training.code_blocks("a\n```c\nint x;\n```\nb\n~~~\ny") == ["int x;", "y"]  # unclosed: to the end


# ------------------------------------------------------------------- stores from real runs on PoCL


def opencl_available() -> bool:
    try:
        return any(b.name == "opencl" and b.available for b in kernelsmith.devices())
    except Exception:
        return False


needs_opencl = pytest.mark.skipif(not opencl_available(), reason="no OpenCL device (install pocl-opencl-icd)")


def small_relu():
    """The built-in relu task, timed on 2^18 elements so that PoCL times it quickly."""
    data = json.loads(kernelsmith.Task.load("relu").to_json())
    data["sizes"] = {"N": 1 << 18}
    return kernelsmith.Task.from_json(json.dumps(data), "<relu, 2^18 elements>")


def relu_variant(k: int) -> str:
    """A correct relu kernel, different for each k < 12 (items per work-item and work-group size)."""
    items = (1, 2, 4, 8)[k % 4]
    block = (64, 128, 256)[(k // 4) % 3]
    return f"""// @launch relu<<<ceil_div(N, {block * items}), {block}>>>(x, y, N)
__kernel void relu(__global const float* restrict x, __global float* restrict y, int N) {{
  const int base = get_group_id(0) * {block * items} + get_local_id(0);
  for (int item = 0; item < {items}; ++item) {{
    const int i = base + item * {block};
    if (i < N) y[i] = fmax(x[i], 0.0f);
  }}
}}
"""


BROKEN = """// @launch relu<<<ceil_div(N, 256), 256>>>(x, y, N)
__kernel void relu(__global const float* x, __global float* y, int N) {
  const int i = get_global_id(0)
  if (i < N) y[i] = fmax(x[i], 0.0f);
}
"""

WRONG = """// @launch relu<<<ceil_div(N, 256), 256>>>(x, y, N)
__kernel void relu(__global const float* x, __global float* y, int N) {
  const int i = get_global_id(0);
  if (i < N) y[i] = x[i];
}
"""

PROSE = "I would unroll the loop and use vector loads, but I am not sure it helps here."


def answer(code: str, idea: str = "Process several elements per work-item.") -> str:
    return f"{idea}\n\n```opencl\n{code}```\n"


def prompt_programs(user: str):
    """(parent source, [inspiration sources]) shown in a prompt built by the default templates."""
    parent, inspirations = None, []
    for match in re.finditer(r"^## Current program[^\n]*\n```\w*\n(.*?)\n```", user, re.S | re.M):
        parent = match.group(1)
    for match in re.finditer(r"^### Program \d+[^\n]*\n```\w*\n(.*?)\n```", user, re.S | re.M):
        inspirations.append(match.group(1))
    return parent, inspirations


class ScriptedCoder:
    """Answers the LLM mutator's requests like a model of mixed skill: correct rewrites, targeted diffs,
    a compile error, prose without code, a wrong kernel, and a copy of an inspiration."""

    def __init__(self):
        self.count = 0
        self.kinds = []

    def __call__(self, body, index):
        from loopback_llm import chat_reply

        user = body["messages"][-1]["content"]
        parent, inspirations = prompt_programs(user)
        diff_mode = "<<<<<<< SEARCH" in user
        kind = ("good", "broken", "good", "prose", "wrong", "copy")[self.count % 6]
        self.count += 1
        if kind == "copy" and not inspirations:
            kind = "good"
        if kind == "good" and diff_mode and parent and "y[i] =" in parent:
            line = next(l for l in parent.split("\n") if "y[i] =" in l)
            indent = line[: len(line) - len(line.lstrip())]
            new = "y[i] = fmax(0.0f, x[i]);" if "fmax(x[i], 0.0f)" in line else "y[i] = fmax(x[i], 0.0f);"
            replacement = line[: line.index("y[i] =")] + new if line.lstrip().startswith("if") else indent + new
            text = f"Use fmax.\n\n<<<<<<< SEARCH\n{line}\n=======\n{replacement}\n>>>>>>> REPLACE\n"
            kind = "diff"
        elif kind == "good":
            text = answer(relu_variant(self.count))
        elif kind == "broken":
            text = answer(BROKEN)
        elif kind == "prose":
            text = PROSE
        elif kind == "wrong":
            text = answer(WRONG)
        else:
            text = answer(inspirations[0].replace("fmax(x[i], 0.0f)", "fmax(0.0f, x[i])") + "\n",
                          "Take the best program shown.")
        self.kinds.append(kind)
        return chat_reply(text, prompt_tokens=1000 + index, completion_tokens=100)


@pytest.fixture(scope="module")
def evaluator(tmp_path_factory):
    if not opencl_available():
        pytest.skip("no OpenCL device (install pocl-opencl-icd)")
    return fast_opencl_evaluator(tmp_path_factory.mktemp("compile-cache"))


@pytest.fixture(scope="module")
def evolved(tmp_path_factory, evaluator):
    """A real evolution of relu on PoCL, its LLM mutator answered over HTTP by a ScriptedCoder."""
    from loopback_llm import LoopbackLlmServer
    from kernelsmith.llm import make_llm_mutator

    path = str(tmp_path_factory.mktemp("evolved") / "run.db")
    coder = ScriptedCoder()
    with LoopbackLlmServer(responder=coder) as server:
        mutator = make_llm_mutator(server.url, "scripted-coder", api_key_env=None, full_weight=0.5,
                                   diff_weight=0.5, crossover_weight=0.0, seed=11, timeout=30, max_retries=0)
        config = kernelsmith.EvolutionConfig()
        config.islands = 1
        config.budget = 12
        config.inspirations = 2
        config.mutations_in_flight = 1
        config.seed = 5
        config.db_path = path
        result = kernelsmith.Evolution(small_relu(), evaluator, mutator, config).run()
    assert result.evaluations == 12
    return path, coder


def store_truth(path):
    """What the store says, through kernelsmith.RunStore (not through the exporter's own reader)."""
    store = kernelsmith.RunStore(path, True)
    (run,) = store.runs()
    programs = {p.id: p for p in store.programs(run.id)}
    evaluations = {e.program_id: e.evaluation for e in store.evaluations(run.id)}
    steps = [s for s in store.steps(run.id) if s.selection != "seed"]
    return store, run, programs, evaluations, steps


def copy_store(path, destination) -> str:
    """A byte copy of a store (with its write-ahead log, if any): the same runs in another file."""
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(str(path) + suffix):
            shutil.copyfile(str(path) + suffix, str(destination) + suffix)
    return str(destination)


def status_name(evaluation) -> str:
    return str(evaluation.status).split(".")[-1]


def gain_of(step, programs, evaluations):
    parent = evaluations.get(step.parent_ids[0])
    child = evaluations.get(step.child_id)
    if parent is None or child is None or status_name(parent) != "ok" or status_name(child) != "ok":
        return None
    return child.speedup / parent.speedup


@needs_opencl
def test_sft_export_of_a_real_evolution_accounts_for_every_step(evolved, tmp_path):
    path, coder = evolved
    _, run, programs, evaluations, steps = store_truth(path)
    assert {"broken", "prose", "wrong"} <= set(coder.kinds)

    out = tmp_path / "sft.jsonl"
    export = training.export_sft([path], str(out))
    report = export.report
    assert report.considered == len(steps)
    assert report.kept + sum(report.dropped.values()) == len(steps)
    assert set(report.dropped) <= set(training.SFT_DROP_REASONS)
    assert report.dropped["no_child"] == sum(1 for s in steps if not s.child_id)
    assert report.dropped["child_incorrect"] == sum(
        1 for s in steps if s.child_id in evaluations and status_name(evaluations[s.child_id]) != "ok")
    assert report.dropped["child_incorrect"] >= 2  # the compile error and the wrong kernel

    records = training.read_jsonl(str(out))
    assert len(records) == report.kept > 0
    by_id = {s.id: s for s in steps}
    for record in records:
        meta = record["metadata"]
        step = by_id[meta["step"]]
        # The exact messages the mutator sent, then the answer that produced the child.
        assert record["messages"][:-1] == json.loads(step.prompt)
        assert record["messages"][-1] == {"role": "assistant", "content": step.response}
        assert meta["child_id"] == step.child_id and meta["parent_id"] == step.parent_ids[0]
        assert status_name(evaluations[step.child_id]) == "ok"
        assert meta["child_speedup"] == pytest.approx(evaluations[step.child_id].speedup)
        assert meta["device"] == evaluations[step.child_id].device and meta["device"]
        assert meta["run"] == run.id and meta["task"] == "relu" and meta["model"] == "scripted-coder"
        parent_origin = programs[step.parent_ids[0]].candidate.lineage.origin
        assert meta["first_step"] == (parent_origin in ("reference", "seed"))
        gain = gain_of(step, programs, evaluations)
        assert meta["first_step"] or gain > 1.0


@needs_opencl
def test_the_threshold_and_the_first_step_rule_select_exactly_the_expected_steps(evolved):
    path, _ = evolved
    _, _, programs, evaluations, steps = store_truth(path)

    def kept(**options):
        options.setdefault("leakage_threshold", None)
        options.setdefault("dedup", False)
        export = training.build_sft(training.load_runs([path]), training.SftOptions(**options))
        return {r["metadata"]["step"] for r in export.records}, export.report

    def expected(threshold, first_steps):
        ids = set()
        for step in steps:
            gain = gain_of(step, programs, evaluations)
            if gain is None:
                continue
            if "nondeterministic" in evaluations[step.child_id].integrity.flags:
                continue
            first = programs[step.parent_ids[0]].candidate.lineage.origin in ("reference", "seed")
            if first and first_steps == "drop":
                continue
            if (first and first_steps == "keep") or gain > threshold:
                ids.add(step.id)
        return ids

    gains = sorted(g for g in (gain_of(s, programs, evaluations) for s in steps) if g is not None)
    assert len(gains) >= 3
    thresholds = sorted([0.0001, 1.0, 1e9] + [g * f for g in gains for f in (0.999, 1.001)])
    previous = None
    for threshold in thresholds:
        for rule in ("keep", "require_gain", "drop"):
            ids, _ = kept(threshold=threshold, first_steps=rule)
            assert ids == expected(threshold, rule), (threshold, rule)
        ids, _ = kept(threshold=threshold)
        assert previous is None or ids <= previous  # a higher threshold never keeps more
        previous = ids
    # At a huge threshold only first steps stay, and they stay because of the rule.
    only_first, report = kept(threshold=1e9)
    assert only_first == expected(1e9, "keep") and report.dropped["below_threshold"] > 0
    assert kept(threshold=1e9, first_steps="drop")[0] == set()


@needs_opencl
def test_rl_export_groups_sibling_attempts_with_consistent_rewards_and_advantages(evolved, tmp_path):
    path, _ = evolved
    _, _, programs, evaluations, steps = store_truth(path)
    shaping = RewardShaping.preset("kernelsmith")
    out = tmp_path / "rl.jsonl"
    export = training.export_rl([path], str(out), training.RlOptions(min_headroom=0.0))
    report = export.report
    parents = {s.parent_ids[0] for s in steps}
    assert report.considered == len(parents)
    assert report.kept + sum(report.dropped.values()) == len(parents)
    records = training.read_jsonl(str(out))
    assert len(records) == report.kept > 0
    assert sum(len(r["attempts"]) for r in records) == report.completions
    by_id = {s.id: s for s in steps}
    for record in records:
        state = record["extra_info"]
        parent_eval = evaluations[state["parent_id"]]
        assert status_name(parent_eval) == "ok"
        assert state["parent_source"] == programs[state["parent_id"]].candidate.source
        assert state["parent_speedup"] == pytest.approx(parent_eval.speedup)
        assert kernelsmith.Task.from_json(state["task_json"]).timing_sizes.sizes["N"] == 1 << 18
        rewards = []
        for attempt in record["attempts"]:
            step = by_id[attempt["step"]]
            assert step.parent_ids[0] == state["parent_id"]
            assert attempt["completion"] == step.response
            child = evaluations.get(step.child_id or attempt["duplicate_of"] or "")
            if child is None:  # an answer that gave no program
                assert not attempt["parsed"] and attempt["reward"] == shaping.format_fail
            else:
                assert attempt["status"] == status_name(child)
                if attempt["correct"]:
                    assert attempt["speedup_over_parent"] == pytest.approx(child.speedup / parent_eval.speedup)
            rewards.append(attempt["reward"])
        assert [a["advantage_grpo"] for a in record["attempts"]] == pytest.approx(grpo_advantages(rewards))
        assert [a["advantage_rloo"] for a in record["attempts"]] == pytest.approx(rloo_advantages(rewards))
        assert record["reward_mean"] == pytest.approx(sum(rewards) / len(rewards))
        # The state's prompt is the prompt of its best attempt.
        best = max(record["attempts"], key=lambda a: (a["reward"], a["step"]))
        assert record["prompt"] == json.loads(by_id[best["step"]].prompt)
        assert record["reward_model"]["ground_truth"] == state["parent_id"]

    flat = training.build_rl(training.load_runs([path]), training.RlOptions(min_headroom=0.0, layout="completions"))
    assert len(flat.records) == report.completions
    assert {r["step"] for r in flat.records} == {a["step"] for r in records for a in r["attempts"]}
    # A parent at the best known speedup and near nothing left to gain is not a state worth improving.
    strict = training.build_rl(training.load_runs([path]), training.RlOptions(min_headroom=1e6))
    assert strict.report.kept == 0 and strict.report.dropped["no_headroom"] > 0


@needs_opencl
def test_exports_load_with_datasets(evolved, tmp_path):
    datasets = pytest.importorskip("datasets")
    path, _ = evolved
    sft_out, pc_out, rl_out = (str(tmp_path / n) for n in ("sft.jsonl", "pc.jsonl", "rl.jsonl"))
    sft = training.export_sft([path], sft_out)
    training.export_sft([path], pc_out, training.SftOptions(style="prompt_completion"))
    rl = training.export_rl([path], rl_out, training.RlOptions(min_headroom=0.0))
    cache = str(tmp_path / "hf-cache")
    messages = datasets.load_dataset("json", data_files=sft_out, split="train", cache_dir=cache)
    assert messages.num_rows == sft.report.kept
    assert {"messages", "metadata"} <= set(messages.column_names)
    assert messages[0]["messages"][-1]["role"] == "assistant"
    assert messages[0]["metadata"]["task"] == "relu"
    prompt_completion = datasets.load_dataset("json", data_files=pc_out, split="train", cache_dir=cache)
    assert {"prompt", "completion"} <= set(prompt_completion.column_names)
    assert prompt_completion[0]["prompt"][0]["role"] == "system"
    groups = datasets.load_dataset("json", data_files=rl_out, split="train", cache_dir=cache)
    assert groups.num_rows == rl.report.kept
    assert {"prompt", "extra_info", "attempts", "data_source", "reward_model"} <= set(groups.column_names)
    assert groups[0]["extra_info"]["parent_source"]


@needs_opencl
def test_the_export_command_prints_kept_and_dropped_per_reason(evolved, tmp_path, capsys):
    from kernelsmith.cli import main

    path, _ = evolved
    out = tmp_path / "sft.jsonl"
    assert main(["export", "--db", path, "--format", "sft", "--out", str(out), "--threshold", "1.0"]) == 0
    printed = capsys.readouterr().out
    export = training.export_sft([path])
    assert f"kept: {export.report.kept}" in printed
    for reason, count in export.report.dropped.items():
        assert f"  {reason}: {count}" in printed
    assert len(training.read_jsonl(str(out))) == export.report.kept

    twin = copy_store(path, tmp_path / "twin.db")
    assert main(["export", "--db", path, "--db", twin, "--db", path, "--format", "rl", "--out",
                 str(tmp_path / "rl.jsonl"), "--shaping", "kernelgym", "--min-headroom", "0", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["format"] == "rl" and report["runs"] == 2
    assert report["dropped"].get("duplicate_state", 0) == report["kept"]  # the second copy of each state

    not_a_store = tmp_path / "plain.db"
    sqlite3.connect(str(not_a_store)).execute("CREATE TABLE t (x)").connection.commit()
    assert main(["export", "--db", str(not_a_store), "--format", "sft", "--out", str(out)]) == 1
    assert "not a kernelsmith run store" in capsys.readouterr().err
    assert main(["export", "--db", path, "--format", "sft", "--out", str(out), "--threshold", "-1"]) == 2
    assert "threshold" in capsys.readouterr().err


@needs_opencl
def test_a_parameter_mutator_run_gives_no_sft_records_and_says_why(evaluator, tmp_path):
    config = kernelsmith.EvolutionConfig()
    config.islands = 1
    config.budget = 5
    config.seed = 3
    config.db_path = str(tmp_path / "param.db")
    kernelsmith.Evolution(small_relu(), evaluator, kernelsmith.ParamMutator(), config).run()
    _, _, _, _, steps = store_truth(config.db_path)
    assert steps and all(s.mutation == "param" for s in steps)
    sft = training.export_sft([config.db_path])
    # Parameter changes have no prompt: nothing to imitate, every step accounted for.
    assert sft.report.kept == 0 and sft.report.dropped["no_prompt"] == len(steps)
    rl = training.export_rl([config.db_path], options=training.RlOptions(min_headroom=0.0))
    assert rl.report.kept == 0 and rl.report.dropped_completions["no_prompt"] == len(steps)


# -------------------------------------------------- a store written step by step (precise situations)


def add_program(store, run, source, origin, parents=(), generation=0):
    candidate = kernelsmith.Candidate()
    candidate.language = "opencl"
    candidate.source = source
    candidate.lineage.origin = origin
    candidate.lineage.parent_ids = list(parents)
    candidate.lineage.generation = generation
    program_id = candidate.id()
    store.add_program(run, program_id, candidate, kernelsmith.normalized_source_hash("opencl", source))
    return program_id, candidate


def build_prompt(task, parent, parent_evaluation, inspirations=()):
    request = kernelsmith.MutationRequest()
    request.task = task
    request.parent = parent
    request.parent_evaluation = parent_evaluation
    shown = []
    for candidate, evaluation in inspirations:
        inspiration = kernelsmith.Inspiration()
        inspiration.candidate = candidate
        inspiration.evaluation = evaluation
        inspiration.reason = "top"
        shown.append(inspiration)
    request.inspirations = shown
    request.generation = parent.lineage.generation + 1
    return kernelsmith.PromptBuilder().build(request, kernelsmith.EditMode.full).messages_json()


def add_step(store, run, parent_id, child_id, prompt, response, inspiration_ids=()):
    step = kernelsmith.StepRecord()
    step.run = run
    step.parent_ids = [parent_id]
    step.selection = "policy"
    step.mutation = "llm_full"
    step.inspiration_ids = list(inspiration_ids)
    step.prompt = prompt
    step.response = response
    step.model = "scripted-coder"
    step.child_id = child_id
    return store.add_step(step)


VEC_INSPIRATION = relu_variant(6)  # 4 items per work-item, work-groups of 128
COPIED = VEC_INSPIRATION.replace("fmax(x[i], 0.0f)", "fmax(0.0f, x[i])")
OWN_IDEA = """// @launch relu<<<ceil_div(N, 512), 256>>>(x, y, N)
__kernel void relu(__global const float* x, __global float* y, int N) {
  const int i = 2 * get_global_id(0);
  if (i < N) y[i] = x[i] < 0.0f ? 0.0f : x[i];
  if (i + 1 < N) y[i + 1] = x[i + 1] < 0.0f ? 0.0f : x[i + 1];
}
"""


@pytest.fixture(scope="module")
def handmade(tmp_path_factory, evaluator):
    """reference -> A (first step); A -> COPIED (copies an inspiration its prompt shows);
    A -> OWN_IDEA (its own idea, with the same inspiration shown). Evaluations are real."""
    task = small_relu()
    path = str(tmp_path_factory.mktemp("handmade") / "run.db")
    store = kernelsmith.RunStore(path)
    info = kernelsmith.RunInfo()
    info.task_name = task.name
    info.task_json = task.to_json()
    info.config_json = kernelsmith.EvolutionConfig().to_json()
    info.language = "opencl"
    info.backend = evaluator.backend_name()
    info.device = evaluator.device_name()
    info.mutator = "llm"
    run = store.create_run(info)

    reference_source = task.references["opencl"].source
    ref_id, reference = add_program(store, run, reference_source, "reference")
    a_id, a = add_program(store, run, relu_variant(1), "llm_full", [ref_id], 1)
    i_id, inspiration = add_program(store, run, VEC_INSPIRATION, "llm_full", [ref_id], 1)
    copy_id, copied = add_program(store, run, COPIED, "llm_full", [a_id], 2)
    own_id, own = add_program(store, run, OWN_IDEA, "llm_full", [a_id], 2)
    programs = [reference, a, inspiration, copied, own]
    evaluations = evaluator.evaluate_batch(task, programs)
    assert [status_name(e) for e in evaluations] == ["ok"] * 5, [e.message for e in evaluations]
    ref_eval, a_eval, i_eval, _, _ = evaluations

    seed_step = kernelsmith.StepRecord()
    seed_step.run, seed_step.selection, seed_step.mutation, seed_step.child_id = run, "seed", "reference", ref_id
    steps = [store.add_step(seed_step)]
    steps.append(add_step(store, run, ref_id, a_id, build_prompt(task, reference, ref_eval), answer(relu_variant(1))))
    steps.append(add_step(store, run, ref_id, i_id, build_prompt(task, reference, ref_eval), answer(VEC_INSPIRATION)))
    shown = build_prompt(task, a, a_eval, [(inspiration, i_eval)])
    steps.append(add_step(store, run, a_id, copy_id, shown, answer(COPIED, "Take program 1."), [i_id]))
    steps.append(add_step(store, run, a_id, own_id, shown, answer(OWN_IDEA, "Two elements each."), [i_id]))
    for sequence, (program_id, step_id, evaluation) in enumerate(
            zip([ref_id, a_id, i_id, copy_id, own_id], steps, evaluations)):
        store.add_evaluation(run, program_id, sequence, evaluation, step_id)
    store.set_run_status(run, "finished", "budget")
    del store
    return path, {"copied": steps[3], "own": steps[4], "first": steps[1:3]}


@needs_opencl
def test_the_leakage_guard_drops_a_copied_inspiration_and_keeps_an_own_idea(handmade):
    path, step_ids = handmade
    options = training.SftOptions(threshold=1e-9)  # every correct revision passes the gain filter
    export = training.build_sft(training.load_runs([path]), options)
    kept = {r["metadata"]["step"] for r in export.records}
    assert step_ids["copied"] not in kept and export.report.dropped["leakage"] == 1
    assert step_ids["own"] in kept and set(step_ids["first"]) <= kept
    own = next(r for r in export.records if r["metadata"]["step"] == step_ids["own"])
    assert own["metadata"]["leakage"] < 0.6

    unguarded = training.build_sft(training.load_runs([path]), training.SftOptions(threshold=1e-9,
                                                                                   leakage_threshold=None))
    assert {r["metadata"]["step"] for r in unguarded.records} == kept | {step_ids["copied"]}
    # A looser guard lets the copy through, a stricter one keeps dropping it.
    assert training.build_sft(training.load_runs([path]),
                              training.SftOptions(threshold=1e-9, leakage_threshold=1.0)).report.dropped["leakage"] == 0


@needs_opencl
def test_dedup_drops_the_same_pair_and_the_same_child_from_other_stores(handmade, tmp_path):
    path, _ = handmade
    twin = copy_store(path, tmp_path / "twin.db")
    options = training.SftOptions(threshold=1e-9, leakage_threshold=None)
    single = training.build_sft(training.load_runs([path]), options)
    both = training.build_sft(training.load_runs([path, twin]), options)
    assert both.report.considered == 2 * single.report.considered
    assert both.report.kept == single.report.kept
    assert both.report.dropped["duplicate_pair"] == single.report.kept
    # Naming a file twice reads it once.
    assert training.build_sft(training.load_runs([path, path]), options).report.considered == single.report.considered

    # The same child reached by another answer is a duplicate child: rewrite one answer in a copy.
    rewritten = copy_store(path, tmp_path / "rewritten.db")
    connection = sqlite3.connect(rewritten)
    (own_step,) = connection.execute(
        "SELECT s.id FROM steps s JOIN programs p ON p.run = s.run AND p.id = s.child_id WHERE p.source = ?",
        (OWN_IDEA,)).fetchone()
    connection.execute("UPDATE steps SET response = ? WHERE id = ?",
                       (answer(OWN_IDEA, "Another explanation of the same kernel."), own_step))
    connection.commit()
    connection.close()
    mixed = training.build_sft(training.load_runs([path, rewritten]), options)
    assert mixed.report.dropped["duplicate_child"] == 1
    assert mixed.report.dropped["duplicate_pair"] == single.report.kept - 1
    without_dedup = training.build_sft(training.load_runs([path, rewritten]),
                                       training.SftOptions(threshold=1e-9, leakage_threshold=None, dedup=False))
    assert without_dedup.report.kept == 2 * single.report.kept


@needs_opencl
def test_balancing_caps_records_per_task_keeping_the_highest_gains(handmade):
    path, _ = handmade
    runs = training.load_runs([path])
    everything = training.build_sft(runs, training.SftOptions(threshold=1e-9, leakage_threshold=None))
    capped = training.build_sft(runs, training.SftOptions(threshold=1e-9, leakage_threshold=None, max_per_task=2))
    assert capped.report.kept == 2 and capped.report.dropped["task_cap"] == everything.report.kept - 2
    gains = sorted((r["metadata"]["gain"] for r in everything.records), reverse=True)
    assert sorted((r["metadata"]["gain"] for r in capped.records), reverse=True) == gains[:2]
    labels = {r["metadata"]["difficulty"] for r in everything.records}
    assert labels <= {"easy", "medium", "hard"}
    assert training.build_sft(runs, training.SftOptions(threshold=1e-9, leakage_threshold=None,
                                                        max_per_difficulty=1)).report.kept == 1


# --------------------------------------------------------------- online reward functions on PoCL


@needs_opencl
def test_reward_functions_score_completions_with_the_real_evaluator(evaluator):
    from kernelsmith.rl import KernelReward

    task = small_relu()
    parent = relu_variant(1)
    state = {"task": "relu", "task_json": task.to_json(), "language": "opencl", "parent_source": parent,
             "parent_speedup": 1.0, "mode": "full"}
    diff_state = dict(state, mode="diff")
    good_diff = ("Use fmax.\n\n<<<<<<< SEARCH\n    if (i < N) y[i] = fmax(x[i], 0.0f);\n=======\n"
                 "    if (i < N) y[i] = fmax(0.0f, x[i]);\n>>>>>>> REPLACE\n")
    stale_diff = "<<<<<<< SEARCH\n  y[j] = 0;\n=======\n  y[j] = 1;\n>>>>>>> REPLACE\n"
    completions = [answer(OWN_IDEA), answer(BROKEN), answer(WRONG), PROSE, good_diff, stale_diff]
    states = [state, state, state, state, diff_state, diff_state]

    reward = KernelReward(evaluator, "kernelsmith")
    results = reward.score(completions, states)
    shaping = reward.shaping
    own, broken, wrong, prose, diff, stale = results
    assert own.outcome.correct and diff.outcome.correct
    assert own.reward == pytest.approx(shaping.reward(own.outcome)) and own.reward > shaping.incorrect
    assert own.outcome.parent_speedup > 0  # the parent was measured on this evaluator
    assert own.outcome.speedup_over_parent == pytest.approx(own.outcome.speedup / own.outcome.parent_speedup)
    assert broken.outcome.status == "compile_error" and broken.reward == shaping.compile_fail
    assert wrong.outcome.status == "incorrect" and wrong.reward == shaping.incorrect
    assert prose.failure == "no code in the response" and prose.reward == shaping.format_fail
    assert "fmax(0.0f, x[i])" in diff.source
    assert not stale.outcome.parsed and stale.reward == shaping.format_fail

    # TRL: reward_func(prompts, completions, **columns) with conversational completions.
    conversational = [[{"role": "assistant", "content": c}] for c in completions]
    trl_rewards = reward(prompts=[[{"role": "user", "content": "..."}]] * 6, completions=conversational,
                         extra_info=states)
    assert trl_rewards[1:4] == [r.reward for r in results[1:4]] and trl_rewards[5] == results[5].reward
    assert all(isinstance(r, float) for r in trl_rewards)
    flat_columns = {name: [s[name] for s in states] for name in ("task_json", "language", "parent_source", "mode")}
    assert reward([""] * 6, completions, **flat_columns)[1:4] == trl_rewards[1:4]

    # verl: compute_score(data_source, solution_str, ground_truth, extra_info) and its batched form.
    assert reward.compute_score("kernelsmith/relu", answer(WRONG), "parent", state) == shaping.incorrect
    batch = reward.compute_score(data_sources=["kernelsmith/relu"] * 2, solution_strs=[PROSE, answer(BROKEN)],
                                 ground_truths=["p", "p"], extra_infos=[state, state])
    assert batch == [shaping.format_fail, shaping.compile_fail]
    with pytest.raises(ValueError, match="extra_info"):
        reward.compute_score("kernelsmith/relu", PROSE, "parent")

    gym = KernelReward(evaluator, "kernelgym")
    scores = gym.score([answer(OWN_IDEA), answer(BROKEN)], [state, state])
    assert scores[0].reward in (0.5, 1.0) and scores[1].reward == 0.0
    assert scores[0].reward == (1.0 if scores[0].outcome.speedup_over_parent >= 1.01 else 0.5)


@needs_opencl
def test_the_reward_function_scores_states_of_the_rl_export(evolved, evaluator):
    from kernelsmith.rl import KernelReward

    path, _ = evolved
    export = training.build_rl(training.load_runs([path]), training.RlOptions(min_headroom=0.0))
    record = export.records[0]
    reward = KernelReward(evaluator)
    # Replaying the stored attempts gives the stored outcomes (timing differs; the status does not).
    attempts = record["attempts"][:4]
    states = [dict(record["extra_info"], mode=a["mode"]) for a in attempts]
    results = reward.score([a["completion"] for a in attempts], states)
    for attempt, result in zip(attempts, results):
        assert result.outcome.parsed == attempt["parsed"]
        if attempt["parsed"]:
            assert result.outcome.status == attempt["status"]


# ----------------------------------------------------------------------------- docs/training.md


def documented_examples():
    """The ```python blocks of docs/training.md, except those marked as not run."""
    path = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "training.md")
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    blocks = []
    for match in re.finditer(r"(<!--[^\n]*-->\n)?^```python\n(.*?)^```$", text, re.S | re.M):
        if match.group(1) and "not run" in match.group(1):
            continue
        blocks.append(match.group(2))
    return blocks


@needs_opencl
def test_the_documented_examples_run(evolved, tmp_path, monkeypatch, capsys):
    pytest.importorskip("datasets")
    path, _ = evolved
    copy_store(path, tmp_path / "runs.db")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf-cache"))
    blocks = documented_examples()
    assert len(blocks) >= 5
    for block in blocks:
        exec(compile(block, "docs/training.md", "exec"), {})
    printed = capsys.readouterr().out
    assert "kept:" in printed and "['system', 'user', 'assistant']" in printed
    assert "True" in printed  # the leakage example flags the copy
    assert printed.rstrip().endswith("-1.0")  # the format failure of the reward example
