"""Skills and experience from Python (docs/memory.md): features as dicts, predicates, the skill bank, the
experience memory and a retriever written in Python; a real search against the loopback OpenAI-compatible
server on two tasks in sequence sharing a memory file; and the simulation of bench/bench_memory.py."""

from __future__ import annotations

import importlib.util
import json
import re
import threading
from pathlib import Path

import pytest

import kernelsmith as ks
from backends import fast_opencl_evaluator, needs_opencl
from loopback_llm import LoopbackLlmServer, chat_reply

ROOT = Path(__file__).resolve().parents[2]


def correct_parent(bandwidth: float = 0.3) -> "ks.Evaluation":
    evaluation = ks.Evaluation()
    evaluation.status = ks.Status.ok
    evaluation.speedup = 1.0
    evaluation.compile.ok = True
    sol = ks.SpeedOfLight()
    sol.peak_gbps, sol.peak_gflops = 3000.0, 60000.0
    sol.bandwidth_fraction, sol.compute_fraction, sol.fraction = bandwidth, 0.01, bandwidth
    evaluation.sol = sol
    return evaluation


def test_features_are_dicts_and_predicates_fail_at_the_column():
    features = ks.feedback_features(correct_parent())
    assert features["stage"] == "refine" and features["failure"] == "none"
    assert features["bandwidth_fraction"] == pytest.approx(0.3)
    task = ks.task_features(ks.Task.load("relu"))
    assert task["task"] == "relu" and task["task_intensity"] < 1
    assert ks.feature_similarity(task, task) == pytest.approx(1.0)
    assert ks.feature_similarity(task, ks.task_features(ks.Task.load("matmul"))) < 0.1
    assert {row.name for row in ks.feature_catalog()} >= {"bandwidth_fraction", "spill_bytes", "occupancy",
                                                          "dominant_kernel_share", "failure", "task_intensity"}
    assert ks.find_feature("failure").values[0] == "none" and ks.find_feature("nothing") is None

    predicate = ks.Predicate('stage == "refine" and bandwidth_fraction < 0.6')
    assert predicate.holds(features)
    assert predicate.evaluate({"stage": "refine"}) is None  # the fraction is missing: unknown
    assert predicate.features() == ["stage", "bandwidth_fraction"]
    with pytest.raises(ks.ValidationError, match=r"column 13: expected a feature"):
        ks.Predicate("registers > > 3")
    with pytest.raises(ks.ValidationError, match="unknown feature 'bandwith_fraction'"):
        ks.Predicate("bandwith_fraction < 1")
    with pytest.raises(TypeError, match="feature 'stage' is a list"):
        predicate.holds({"stage": ["refine"]})


def test_the_skill_bank_is_inspected_extended_and_edited_from_python(tmp_path):
    bank = ks.SkillBank.builtin()
    assert len(bank) >= 15 and "coalesce_memory_access" in bank
    features = dict(ks.task_features(ks.Task.load("relu")), **ks.feedback_features(correct_parent()))
    assert "coalesce_memory_access" in [s.name for s in bank.applicable(features)]

    # A skill of one's own, replacing a built-in one in place, and one more.
    fuse = bank.find("fuse_kernels")
    position = [s.name for s in bank.skills].index("fuse_kernels")
    fuse.advice = "Our own fusion advice."
    fuse.when = "kernels > 3"
    bank.add(fuse)
    assert bank.skills[position].advice == "Our own fusion advice."
    with pytest.raises(ks.ValidationError, match="unknown feature 'kernel'"):
        fuse.when = "kernel > 3"
    bank.add(ks.Skill("use_tensor_cores", "Use tensor cores", "task_intensity > 50",
                      "Use mma.sync on 16 x 8 x 16 tiles.", {"cuda": "// mma.sync\n"}))
    assert bank.skills[-1].name == "use_tensor_cores"
    with pytest.raises(ks.ValidationError, match="snake_case"):
        ks.Skill("Tensor Cores", advice="x")
    assert bank.remove("use_tensor_cores") and not bank.remove("use_tensor_cores")

    # A file of one's own, with an example in a file beside it.
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "k.cl").write_text("__kernel void k(__global float* y) { y[0] = 1.0f; }\n")
    (tmp_path / "mine.json").write_text(json.dumps({
        "schema": "kernelsmith.skills/1", "version": "2",
        "skills": [{"name": "unroll_by_four", "title": "Unroll by four", "when": 'stage == "refine"',
                    "advice": "Unroll the inner loop by four.", "examples": {"opencl": "examples/k.cl"}}]}))
    assert bank.load_file(str(tmp_path / "mine.json")) == 1
    assert bank.files[-1].version == "2"
    assert bank.find("unroll_by_four").example("opencl").startswith("__kernel void k")
    copy = ks.SkillBank()
    copy.load_json(bank.to_json())
    assert [s.name for s in copy.skills] == [s.name for s in bank.skills]

    # The prompt builder gates a bank given in its options.
    options = ks.PromptBuilderOptions()
    options.skills = copy
    request = ks.MutationRequest()
    request.task = ks.Task.load("relu")
    parent = ks.Candidate()
    parent.language, parent.source = "opencl", ks.Task.load("relu").references["opencl"].source
    request.parent = parent
    request.parent_evaluation = correct_parent()
    prompt = ks.PromptBuilder(options).build(request, ks.EditMode.full)
    assert prompt.skills[:1] == ["coalesce_memory_access"]
    assert "unroll_by_four" in prompt.skills or len(prompt.skills) == options.max_skills
    assert "<skill>name</skill>" in prompt.messages[1].content
    assert ks.parse_skill_tag("done.\n<skill>Unroll-By Four</skill>") == "unroll_by_four"
    assert ks.parse_skill_tag("<skill>???</skill>") == "unspecified"


def make_item(task, skill, status, speedup, parent_speedup=1.0, stage=ks.Stage.refine):
    item = ks.ExperienceItem()
    item.task = task
    item.task_features = ks.task_features(ks.Task.load(task))
    item.feedback = ks.feedback_features(correct_parent())
    item.stage, item.skill, item.edit = stage, skill, "llm_diff"
    item.status, item.correct, item.compiled = status, status == ks.Status.ok, True
    item.speedup, item.parent_speedup = speedup, parent_speedup
    return item


def test_the_experience_memory_from_python_persists_and_learns(tmp_path):
    path = str(tmp_path / "memory.db")
    memory = ks.ExperienceMemory(path)
    first = memory.record(make_item("relu", "vectorize_memory_access", ks.Status.ok, 1.5))
    second = memory.record(make_item("relu", "fuse_kernels", ks.Status.ok, 1.2), [[first]])
    item = memory.item(first)
    assert item.refine.credits == 2 and item.value(ks.Stage.refine).weight == pytest.approx(2.0)
    assert memory.item(second).reward == pytest.approx(ks.experience_reward(ks.Stage.refine, ks.Status.ok, 1.2, 1.0))
    assert "skill vectorize_memory_access" in item.lesson()
    item.note = "edited"
    memory.update(item)
    reopened = ks.ExperienceMemory(path)
    assert len(reopened) == 2 and reopened.item(first).note == "edited"
    query = ks.ExperienceQuery("gelu", ks.task_features(ks.Task.load("gelu")),
                               ks.feedback_features(correct_parent()), ks.Stage.refine, 2, 5)
    found = reopened.retrieve(query)
    assert [entry.item.id for entry in found] and all(entry.item.task == "relu" for entry in found)
    assert found[0].retrieval.skill == found[0].item.skill
    assert reopened.remove(second) and len(ks.ExperienceMemory(path)) == 1


class NewestFirst(ks.Retriever):
    """A retriever of one's own: the most recent items, whatever they are worth."""

    def __init__(self):
        super().__init__()
        self.calls = 0
        self.lock = threading.Lock()

    def retrieve(self, query, items):
        with self.lock:
            self.calls += 1
        newest = sorted(items, key=lambda item: -item.id)[: query.count]
        return [ks.RetrievedItem(item, ks.Retrieval(item.id, item.skill, 0.0, 0.0, 0.0, False)) for item in newest]

    def name(self):
        return "newest"


class SkillfulMutator(ks.Mutator):
    """The parameter mutator, naming a skill and recording what each request carried."""

    def __init__(self):
        super().__init__()
        self.inner = ks.ParamMutator()
        self.carried = []

    def propose(self, request):
        self.carried.append([entry.item.id for entry in request.experience])
        proposals = self.inner.propose(request)
        for proposal in proposals:
            proposal.skill = "tune_parameters"
        return proposals

    def name(self):
        return "skillful"


def test_a_python_retriever_ranks_the_engine_s_experience(tmp_path):
    task = ks.Task.load("relu")
    memory = ks.ExperienceMemory()
    retriever = NewestFirst()
    memory.retriever = retriever
    assert memory.retriever.name() == "newest"

    class Scoring(ks.Evaluator):
        def evaluate(self, task, candidate):
            evaluation = ks.Evaluation()
            evaluation.status = ks.Status.ok
            evaluation.speedup = evaluation.fitness = 1.0 + len(candidate.source) % 7 / 10
            return evaluation

        def backend_name(self):
            return "custom"

    config = ks.EvolutionConfig()
    config.db_path = str(tmp_path / "run.db")
    config.budget, config.islands, config.seed, config.experience = 8, 1, 3, 2
    mutator = SkillfulMutator()
    evolution = ks.Evolution(task, Scoring(), mutator, config, memory=memory)
    evolution.run()
    assert evolution.memory is memory
    assert retriever.calls >= 6 and len(memory) == 6
    # Each request carried the newest items, as the Python retriever chose them, and the store says so.
    assert mutator.carried[0] == [] and all(len(ids) <= 2 for ids in mutator.carried)
    later = [ids for ids in mutator.carried if ids]
    assert later and all(ids == sorted(ids, reverse=True) for ids in later)
    store = ks.RunStore(config.db_path, True)
    (run,) = store.runs()
    steps = [s for s in store.steps(run.id) if s.selection != "seed"]
    assert [[r.item for r in s.retrieved] for s in steps] == mutator.carried[: len(steps)]
    assert all(s.skill == "tune_parameters" for s in steps)
    records = store.experience(run.id)
    assert len(records) == 6 and {r.item.skill for r in records} == {"tune_parameters"}


def reference_with_block(task: "ks.Task", block: int) -> str:
    """The task's OpenCL reference with another work-group size: a correct, new program."""
    return task.references["opencl"].source.replace("256), 256>>>", f"{block}), {block}>>>")


@needs_opencl
def test_experience_of_one_task_reaches_the_prompts_of_another_through_a_memory_file(tmp_path):
    """Two real searches in sequence, relu then gelu, with the LLM mutator against the loopback server and the
    evaluator on PoCL, sharing a memory file: what the relu run stored is retrieved into the gelu run's prompts,
    and the gelu steps that apply the same skill credit the relu items."""
    tasks = {}
    for name in ("relu", "gelu"):
        document = json.loads(ks.Task.load(name).to_json())
        document["sizes"] = {"N": 1 << 16}
        document["check_sizes"] = [{"name": "odd_1023", "sizes": {"N": 1023}}]
        tasks[name] = ks.Task.from_json(json.dumps(document), f"<{name}, 2^16 elements>")
    blocks = iter([128, 512, 64, 1024, 32, 16])

    def responder(body, index):
        user = body["messages"][1]["content"]
        name = re.search(r"^## Task: (\w+)", user, flags=re.M).group(1)
        program = reference_with_block(tasks[name], next(blocks))
        return chat_reply(f"Wider work-groups.\n\n```opencl\n{program}```\n<skill>expose_parallelism</skill>\n")

    evaluator = fast_opencl_evaluator(tmp_path / "cache")
    memory_path = str(tmp_path / "memory.db")
    with LoopbackLlmServer(responder=responder) as server:
        from kernelsmith.llm import make_llm_mutator

        runs = {}
        for name in ("relu", "gelu"):
            mutator = make_llm_mutator(server.url, "loopback-coder", api_key_env=None, full_weight=1.0,
                                       diff_weight=0.0, crossover_weight=0.0, seed=2, max_retries=0)
            config = ks.EvolutionConfig()
            config.islands, config.seed, config.budget = 1, 4, 4  # the reference, the seed and two LLM children
            config.db_path = str(tmp_path / f"{name}.db")
            config.memory_path = memory_path
            received_before = len(server.received)
            result = ks.Evolution(tasks[name], evaluator, mutator, config).run()
            assert result.evaluations == 4
            runs[name] = (config.db_path, server.received[received_before:])

    # The relu run stored what it learned, in its store and in the memory file, with the skill named.
    relu_store = ks.RunStore(runs["relu"][0], True)
    relu_records = relu_store.experience(relu_store.runs()[0].id)
    assert len(relu_records) == 2
    assert {r.item.skill for r in relu_records} == {"expose_parallelism"}
    memory = ks.ExperienceMemory(memory_path)
    relu_items = [item for item in memory.items() if item.task == "relu"]
    assert sorted(item.id for item in relu_items) == sorted(r.item.id for r in relu_records)

    # The gelu run's very first prompt shows relu's experience, and its steps record the items retrieved.
    gelu_prompts = [request.body["messages"][1]["content"] for request in runs["gelu"][1]]
    assert gelu_prompts and "## Experience from earlier steps" in gelu_prompts[0]
    assert "On task relu" in gelu_prompts[0] and "skill expose_parallelism" in gelu_prompts[0]
    gelu_store = ks.RunStore(runs["gelu"][0], True)
    gelu_run = gelu_store.runs()[0].id
    llm_steps = [s for s in gelu_store.steps(gelu_run) if s.mutation.startswith("llm")]
    relu_ids = {item.id for item in relu_items}
    assert llm_steps and {r.item for r in llm_steps[0].retrieved} <= relu_ids and llm_steps[0].retrieved
    assert all(s.skill == "expose_parallelism" for s in llm_steps)
    # The Python reader of run stores sees the same.
    from kernelsmith import store as run_stores

    (read,) = run_stores.read_runs(runs["gelu"][0])
    read_steps = [s for s in read.steps if s.mutation.startswith("llm")]
    assert [s.skill for s in read_steps] == [s.skill for s in llm_steps]
    assert [[r["item"] for r in s.retrieved] for s in read_steps] == [[r.item for r in s.retrieved] for s in llm_steps]
    # Applying the same skill followed the relu items: they were credited with the gelu outcomes.
    credited = [item for item in memory.items() if item.id in relu_ids and item.refine.credits > 1]
    assert credited
    assert {item.task for item in ks.ExperienceMemory(memory_path).items()} == {"relu", "gelu"}


def test_the_memory_simulation_shows_convergence_and_gains(capsys):
    """bench/bench_memory.py --quick: the claims it prints hold (memory over uniform, gated+memory over gated,
    shrinking estimate error, transfer to held-out tasks)."""
    spec = importlib.util.spec_from_file_location("bench_memory", ROOT / "bench" / "bench_memory.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    status = bench.main(["--quick", "--json"])
    document = json.loads(capsys.readouterr().out)
    assert document["claims"] and all(document["claims"].values()), document["claims"]
    assert status == 0
    policies = document["policies"]
    assert policies["oracle"]["refine_mean_reward"] >= policies["gated+memory"]["refine_mean_reward"] - 0.05
    errors = [point["mean_absolute_error"] for point in document["convergence"]]
    assert len(errors) == 3 and errors[-1] < errors[0]
