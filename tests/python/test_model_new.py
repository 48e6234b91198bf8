"""KernelBench's own candidate format (language "pytorch", a ModelNew file) through the real path: the
evaluator's sandboxed worker starts a runner of the candidate's own, which builds ModelNew as the problem's
Model is built and runs it on the task's check inputs; the worker compares its outputs with the oracle's
(docs/kernelbench-modelnew.md)."""

from __future__ import annotations

import json
import pathlib

import pytest

import kernelsmith as ks
from backends import needs_opencl
from test_task_oracle import GEMM_SCALE_MASK, manifest, write_task

pytestmark = [needs_opencl]

torch = pytest.importorskip("torch", reason="ModelNew candidates need torch (pip install kernelsmith[torch])")

# The problem's Model as a ModelNew: what a run with no hand-written seed starts from.
HONEST = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)

    def forward(self, x, scale, mask):
        return self.gemm(x) * scale * mask
'''

# The epilogue (scale and mask) in a C++ extension built with load_inline, the GEMM from PyTorch.
CPP_EPILOGUE = '''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = r"""
#include <torch/extension.h>
torch::Tensor scale_mask(torch::Tensor y, double scale, torch::Tensor mask) {
  auto out = torch::empty_like(y);
  const float* in = y.data_ptr<float>();
  const bool* m = mask.data_ptr<bool>();
  float* o = out.data_ptr<float>();
  const int64_t cols = y.size(1);
  for (int64_t i = 0; i < y.numel(); ++i) o[i] = m[i % cols] ? in[i] * static_cast<float>(scale) : 0.0f;
  return out;
}
"""
epilogue = load_inline(name="scale_mask_epilogue", cpp_sources=source, functions=["scale_mask"])


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)

    def forward(self, x, scale, mask):
        return epilogue.scale_mask(self.gemm(x).contiguous(), scale, mask.contiguous())
'''


def evaluator(tmp_path: pathlib.Path, **overrides):
    options = ks.EvaluatorOptions(backend="opencl", mode="screen", correctness_trials=1, min_samples=3,
                                  max_samples=10, screen_budget_seconds=0.05, cache_dir=str(tmp_path / "cache"))
    for name, value in overrides.items():
        setattr(options, name, value)
    return ks.create_evaluator(options)


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    document = manifest()
    document["oracle"]["baselines"] = ["eager"]
    return ks.Task.load(str(write_task(tmp_path_factory.mktemp("model_new") / "t", document)))


@pytest.fixture(scope="module")
def shared_evaluator(tmp_path_factory):
    return evaluator(tmp_path_factory.mktemp("evaluator"))


def test_the_problems_own_model_as_modelnew_is_ok_and_timed_against_eager(task, shared_evaluator):
    result = shared_evaluator.evaluate(task, ks.Candidate("pytorch", HONEST))
    assert result.status == ks.Status.ok, result.message
    assert result.correctness.passed and result.correctness.trials >= 2  # both size configurations
    assert result.timing is not None and result.timing.samples >= 3
    assert result.timing.kernels[0].name == "ModelNew"
    # Timed like the eager baseline it is compared with (ratios are the benchmarks' business, not a test's).
    assert result.baseline_timing is not None and set(result.speedups) == {"eager"}
    assert result.speedup > 0.0 and result.timing.median_ms > 0.0
    assert "unconfined" not in result.integrity.flags


@pytest.mark.parametrize("forward, stage_words", [
    # Writes into its input after computing the right answer.
    ("y = self.gemm(x) * scale * mask\n        x.zero_()\n        return y", "wrote into its input x"),
    # Wrong answer.
    ("return self.gemm(x) * scale", "sizes"),
    # Returns a tensor subclass whose values are right.
    ("class Lazy(torch.Tensor):\n            pass\n        return (self.gemm(x) * scale * mask).as_subclass(Lazy)",
     "plain torch.Tensor"),
])
def test_a_modelnew_that_cheats_or_errs_is_incorrect(task, shared_evaluator, forward, stage_words):
    source = HONEST.replace("return self.gemm(x) * scale * mask", forward)
    result = shared_evaluator.evaluate(task, ks.Candidate("pytorch", source))
    assert result.status == ks.Status.incorrect, result.message
    assert stage_words in result.message


@pytest.mark.parametrize("source, status, words", [
    (HONEST.replace("class ModelNew", "class Other"), ks.Status.compile_error, "defines no class ModelNew"),
    (HONEST + "\nthis is not python\n", ks.Status.compile_error, "could not be built"),
    (HONEST.replace("self.gemm = nn.Linear", "self.linear = nn.Linear").replace("self.gemm(x)", "self.linear(x)"),
     ks.Status.compile_error, "keep the Model's parameter"),
    (HONEST.replace("return self.gemm(x) * scale * mask", "raise RuntimeError('boom')"), ks.Status.runtime_error,
     "boom"),
])
def test_a_modelnew_that_does_not_build_or_run_says_why(task, shared_evaluator, source, status, words):
    result = shared_evaluator.evaluate(task, ks.Candidate("pytorch", source))
    assert result.status == status, result.message
    assert words in result.message
    assert result.compile.ok == (status != ks.Status.compile_error)


def test_a_modelnew_cannot_reach_the_network_or_write_outside_its_folder(task, shared_evaluator, tmp_path):
    # Host code runs confined: a socket and a write outside the runner's folder both fail, so forward raises.
    target = tmp_path / "escaped.txt"
    for attack in (f"open({str(target)!r}, 'w').write('x')",
                   "import socket; socket.create_connection(('127.0.0.1', 9), timeout=1)"):
        source = HONEST.replace("return self.gemm(x) * scale * mask",
                                f"{attack}\n        return self.gemm(x) * scale * mask")
        result = shared_evaluator.evaluate(task, ks.Candidate("pytorch", source))
        assert result.status == ks.Status.runtime_error, result.message
    assert not target.exists()


def test_a_modelnew_cannot_read_the_evaluators_caches(task, tmp_path):
    """The expected outputs the oracle computed are cached on disk (the evaluator's cache_dir): a ModelNew that
    looks for them there finds nothing it may read, so it fails instead of copying the answer."""
    cache = tmp_path / "cache"
    own = evaluator(tmp_path)
    assert own.evaluate(task, ks.Candidate("pytorch", HONEST)).status == ks.Status.ok  # fills the cache
    assert any(cache.rglob("*")), "the oracle's disk cache holds nothing to attack"
    attack = HONEST.replace("return self.gemm(x) * scale * mask",
                            f"import os\n        os.listdir({str(cache)!r})\n"
                            "        return self.gemm(x) * scale * mask")
    result = own.evaluate(task, ks.Candidate("pytorch", attack))
    assert result.status == ks.Status.runtime_error, result.message
    assert "PermissionError" in result.message, result.message


def test_a_modelnew_with_a_cpp_extension_is_ok(task, shared_evaluator):
    """A C++ extension through load_inline, built inside the confined runner (tens of seconds: the torch
    extension headers)."""
    result = shared_evaluator.evaluate(task, ks.Candidate("pytorch", CPP_EPILOGUE))
    assert result.status == ks.Status.ok, result.message
    assert result.correctness.trials >= 2


def test_a_modelnew_on_a_task_without_an_oracle_is_refused_with_the_reason(tmp_path):
    result = evaluator(tmp_path).evaluate(ks.Task.load("relu"), ks.Candidate("pytorch", HONEST))
    assert result.status == ks.Status.compile_error
    assert "needs a task with a PyTorch oracle" in result.message


def test_a_py_file_defining_modelnew_is_a_pytorch_candidate(tmp_path):
    path = tmp_path / "candidate.py"
    path.write_text(HONEST)
    assert ks.Candidate.from_file(str(path)).language == "pytorch"
    assert "pytorch" in [language.name for language in ks.kernel_languages()]


def test_kernelsmith_eval_takes_a_modelnew_file(task, tmp_path, capsys):
    from kernelsmith.cli import main

    path = tmp_path / "model_new.py"
    path.write_text(HONEST)
    folder = pathlib.Path(task.folder)
    assert (folder / "task.json").exists()
    status = main(["eval", "--task", str(folder), "--backend", "opencl", "--mode", "screen", "--json", str(path)])
    assert status == 0
    document = json.loads(capsys.readouterr().out)
    assert document["status"] == "ok", document["message"]


def test_a_problems_model_becomes_the_modelnew_a_cold_start_begins_with():
    seed = ks.model_new_from_problem("class Model(nn.Module):\n    def __init__(self):\n"
                                     "        super(Model, self).__init__()\n# Models, ModelNew\n")
    assert seed == ("class ModelNew(nn.Module):\n    def __init__(self):\n"
                    "        super(ModelNew, self).__init__()\n# Models, ModelNew\n")
    ok = ks.Evaluation()
    ok.status = ks.Status.ok
    # A correct ModelNew without a kernel of its own is a program to draft from; one with a kernel, to refine.
    assert not ks.has_custom_kernel(ks.Candidate("pytorch", HONEST))
    assert ks.stage_of(ks.Candidate("pytorch", HONEST), ok) == ks.Stage.draft
    assert ks.has_custom_kernel(ks.Candidate("pytorch", CPP_EPILOGUE))
    assert ks.stage_of(ks.Candidate("pytorch", CPP_EPILOGUE), ok) == ks.Stage.refine
    assert ks.stage_of(ks.Candidate("opencl", "__kernel void k() {}"), ok) == ks.Stage.refine
    assert ks.stage_of(ks.Candidate("pytorch", CPP_EPILOGUE), None) == ks.Stage.draft


def llm_run(task, responder, db: pathlib.Path, budget: int, capsys) -> tuple:
    """`kernelsmith evolve --language pytorch --mutator llm` on the task against a loopback OpenAI-compatible
    server answering with `responder`: the JSON summary and the messages of every request sent."""
    from kernelsmith.cli import main
    from loopback_llm import LoopbackLlmServer

    with LoopbackLlmServer(responder=responder) as server:
        status = main(["evolve", "--task", str(pathlib.Path(task.folder)), "--backend", "opencl", "--language",
                       "pytorch", "--mutator", "llm", "--llm-url", server.url, "--model", "m", "--api-key-env", "",
                       "--budget", str(budget), "--islands", "1", "--in-flight", "1", "--db", str(db), "--json"])
        prompts = [r.body["messages"] for r in server.received]
    assert status == 0
    return json.loads(capsys.readouterr().out), prompts


def test_an_llm_run_on_a_problem_without_a_seed_starts_from_its_model(task, tmp_path, capsys):
    """`kernelsmith evolve --mutator llm --language pytorch` on a problem with no seed, against a loopback
    OpenAI-compatible server: the run starts from the problem's Model as a ModelNew, the prompt carries the
    problem and asks for a ModelNew, and the LLM's ModelNew answers are evaluated children whose steps are
    recorded with the stage their parent gives them."""
    from loopback_llm import chat_reply

    assert not dict(task.seeds)
    # The second answer fails before any build: a quick compile_error.
    failing = CPP_EPILOGUE.replace("epilogue = load_inline(", "raise ImportError('no compiler')\nepilogue = load_inline(")
    answers = [CPP_EPILOGUE, failing]

    def responder(body, index):
        return chat_reply(f"The epilogue fused in C++.\n```python\n{answers[min(index, 1)]}```\n")

    db = tmp_path / "cold.db"
    document, prompts = llm_run(task, responder, db, 3, capsys)
    assert document["evaluations"] == 3, document
    prompt = "\n".join(m["content"] for m in prompts[0])
    assert "class ModelNew(nn.Module)" in prompt and "load_inline" in prompt
    assert "def get_init_inputs" in prompt  # the problem itself

    store = ks.RunStore(str(db), True)
    (run,) = store.runs()
    programs = {record.program_id: record for record in store.evaluations(run.id)}
    seed_step = next(s for s in store.steps(run.id) if s.mutation == "seed")
    seed = store.program(run.id, seed_step.child_id).candidate
    assert seed.language == "pytorch" and seed.source == ks.model_new_from_problem(task.oracle.module.source)
    assert programs[seed_step.child_id].evaluation.status == ks.Status.ok
    children = [s for s in store.steps(run.id) if s.mutation.startswith("llm") and s.child_id]
    assert len(children) == 2
    statuses = sorted(programs[s.child_id].evaluation.status.name for s in children)
    assert statuses == ["compile_error", "ok"], statuses
    for step in children:
        assert store.program(run.id, step.child_id).candidate.language == "pytorch"
    stages = {record.step: record.item.stage for record in store.experience(run.id)}
    first = min(children, key=lambda s: s.id)
    assert first.parent_ids == [seed_step.child_id] and stages[first.id] == ks.Stage.draft
    for step in children:
        parent = store.program(run.id, step.parent_ids[0])
        assert stages[step.id] == ks.stage_of(parent.candidate, programs[step.parent_ids[0]].evaluation)


def test_a_modelnew_run_takes_kernels_with_a_launch_plan_too_in_one_population(task, tmp_path, capsys):
    """A run of ModelNew files also takes the backend's own format (docs/kernelbench-modelnew.md, "Cold start"):
    the prompt offers it, an answer that is a kernel with its launch plan becomes an OpenCL child evaluated
    against the same PyTorch module, and both formats stand in the run's one population."""
    from loopback_llm import chat_reply

    reordered = HONEST.replace("return self.gemm(x) * scale * mask", "return self.gemm(x) * mask * scale")
    answers = [f"A kernel with its plan.\n```\n{GEMM_SCALE_MASK}```\n", f"```python\n{reordered}```\n"]

    def responder(body, index):
        return chat_reply(answers[min(index, 1)])

    db = tmp_path / "mixed.db"
    document, prompts = llm_run(task, responder, db, 3, capsys)
    assert document["evaluations"] == 3, document
    system = prompts[0][0]["content"]
    assert "You may instead answer with a whole OpenCL" in system and "@launch" in system

    store = ks.RunStore(str(db), True)
    (run,) = store.runs()
    evaluations = {record.program_id: record.evaluation for record in store.evaluations(run.id)}
    children = sorted((s for s in store.steps(run.id) if s.mutation.startswith("llm") and s.child_id),
                      key=lambda s: s.id)
    languages = [store.program(run.id, s.child_id).candidate.language for s in children]
    assert languages == ["opencl", "pytorch"], languages
    kernel = evaluations[children[0].child_id]
    assert kernel.status == ks.Status.ok, kernel.message
    assert set(kernel.speedups) == {"eager"}  # timed against the same PyTorch module as the ModelNew files
    assert evaluations[children[1].child_id].status == ks.Status.ok


def test_a_task_may_hold_a_modelnew_seed_when_it_has_an_oracle(tmp_path):
    document = manifest()
    document["name"] = "gemm_scale_mask_seeded"
    document["oracle"]["baselines"] = ["eager"]
    document["seeds"] = {"pytorch": "model_new.py"}
    folder = write_task(tmp_path / "seeded", document)
    (folder / "model_new.py").write_text(HONEST)
    task = ks.Task.load(str(folder))
    assert dict(task.seeds)["pytorch"].source == HONEST
    # Without an oracle nothing could check it: refused with the field named.
    document.pop("oracle")
    document["references"] = {"opencl": "reference.cl"}
    broken = write_task(tmp_path / "no_oracle", document)
    (broken / "model_new.py").write_text(HONEST)
    (broken / "reference.cl").write_text(GEMM_SCALE_MASK)
    with pytest.raises(ks.Error, match="seeds.pytorch"):
        ks.Task.load(str(broken))


def test_kernelbench_run_seeds_take_a_modelnew_file_for_a_pytorch_run(task, tmp_path):
    from kernelsmith.kernelbench.runner import add_seed_from

    seeded = ks.Task.from_json(task.to_json())
    folder = tmp_path / "seeds" / seeded.name
    folder.mkdir(parents=True)
    (folder / "seed.py").write_text("import triton\n")  # a Triton seed: not a ModelNew
    assert add_seed_from(ks, seeded, "pytorch", tmp_path / "seeds") is None
    (folder / "model_new.py").write_text(HONEST)
    assert add_seed_from(ks, seeded, "pytorch", tmp_path / "seeds") == str(folder / "model_new.py")
    assert dict(seeded.seeds)["pytorch"].source == HONEST


def test_a_cold_start_run_exports_kernelbench_style_sft_records(task, tmp_path, capsys):
    """`kernelsmith export --format sft --style kernelbench`: a KernelBench-style prompt around the problem's
    source and the ModelNew answer, for the steps whose ModelNew children are kept; other children are dropped
    with their reason."""
    from kernelsmith import training
    from loopback_llm import chat_reply

    # A ModelNew that differs from the Model (kept as a first step: correct, from the seed).
    rewritten = HONEST.replace("return self.gemm(x) * scale * mask", "return (self.gemm(x) * mask) * scale")
    db = tmp_path / "export.db"
    llm_run(task, lambda body, index: chat_reply(f"```python\n{rewritten}```\n"), db, 2, capsys)
    export = training.export_sft([str(db)], str(tmp_path / "sft.jsonl"), training.SftOptions(style="kernelbench"))
    assert export.report.kept == 1, export.report.summary()
    (record,) = training.read_jsonl(str(tmp_path / "sft.jsonl"))
    assert "class Model(nn.Module)" in record["prompt"] and "ModelNew" in record["prompt"]
    assert record["completion"] == f"```python\n{rewritten.rstrip()}\n```"
    assert record["metadata"]["language"] == "pytorch"
