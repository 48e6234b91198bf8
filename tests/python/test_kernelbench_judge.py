"""`kernelsmith kernelbench judge` over the adversarial corpus of tests/python/judge_corpus: every ModelNew file
there says on its first line the verdict it must get, the hack class it stands for, where it runs and which
problem of tests/python/judge_problems it answers:

    # expect: rejected  class: changing-inputs  device: cpu  problem: level1/1  [needs: kernel-accounting]

The problems are imported with the real importer; the files are judged by the real command (a JSONL corpus) and
through the Python API (a folder named as KernelBench's generation scripts name files). The verdicts of two kinds
of file rest on the ModelNew runner's integrity checks and its account of which kernels ran
(docs/kernelbench-modelnew.md): those marked `needs: kernel-accounting` (a fallback, a decoy kernel, no kernel at
all) and those named `integrity_*` (the hacks only those checks catch). They are checked where the evaluator has
those checks (EvaluatorOptions.host_code_policy), and skipped, saying so, where it has not."""

from __future__ import annotations

import json
import pathlib
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Dict, List, Optional

import pytest

import kernelsmith as ks
from backends import backend_available, needs_opencl
from kernelsmith.kernelbench import judge

HERE = pathlib.Path(__file__).resolve().parent
CORPUS = HERE / "judge_corpus"
PROBLEMS = HERE / "judge_problems"

_FIELD = re.compile(r"([a-z]+): (\S+)")
_PROBLEM = re.compile(r"level(\d+)/(\d+)")


@dataclass
class CorpusFile:
    path: pathlib.Path
    expect: str
    hack_class: str
    device: str
    level: int
    problem: int
    needs: Optional[str]

    @property
    def name(self) -> str:
        return self.path.stem

    @property
    def code(self) -> str:
        return self.path.read_text()


def read_header(path: pathlib.Path) -> CorpusFile:
    first = path.read_text().splitlines()[0]
    assert first.startswith("# expect: "), f"{path.name}: the first line must be '# expect: ...', not {first!r}"
    fields = dict(_FIELD.findall(first))
    missing = [key for key in ("expect", "class", "device", "problem") if key not in fields]
    assert not missing, f"{path.name}: the first line lacks {', '.join(missing)}: {first!r}"
    assert fields["expect"] in judge.VERDICTS, f"{path.name}: unknown verdict {fields['expect']!r}"
    assert fields["device"] in ("cpu", "gpu"), f"{path.name}: device is cpu or gpu, not {fields['device']!r}"
    problem = _PROBLEM.fullmatch(fields["problem"])
    assert problem, f"{path.name}: problem is level<L>/<number>, not {fields['problem']!r}"
    return CorpusFile(path, fields["expect"], fields["class"], fields["device"], int(problem.group(1)),
                      int(problem.group(2)), fields.get("needs"))


def corpus(device: str) -> List[CorpusFile]:
    return [f for f in map(read_header, sorted(CORPUS.glob("*.py"))) if f.device == device]


def write_jsonl(files: List[CorpusFile], path: pathlib.Path) -> pathlib.Path:
    with path.open("w") as handle:
        for f in files:
            handle.write(json.dumps({"name": f.name, "level": f.level, "problem_id": f.problem, "code": f.code}) + "\n")
    return path


def import_problems(out: pathlib.Path, device: str) -> pathlib.Path:
    from kernelsmith.kernelbench import importer

    for level in sorted(p.name for p in PROBLEMS.iterdir() if p.is_dir()):
        results = importer.import_directory(str(PROBLEMS / level), None, str(out), device=device)
        assert all(r.imported for r in results), [r.reason for r in results if not r.imported]
    return out


def mismatches(results: Dict[str, dict], files: List[CorpusFile], timing_noise: bool = False) -> List[str]:
    """'name: expected X, got Y (status: message)' for each file whose verdict is not the expected one. With
    `timing_noise` (a CPU shared with other work), a file expected trusted may be flagged by TIMING_FLAGS alone."""
    wrong = []
    for f in files:
        got = results[f.name]
        if timing_noise and f.expect == judge.TRUSTED and timing_noise_only(got):
            continue
        if got["verdict"] != f.expect:
            wrong.append(f"{f.name} ({f.hack_class}): expected {f.expect}, got {got['verdict']} "
                         f"({got['status']}, flags {got['flags']}: {got['message'][:300]})")
    return wrong


#: The flags that timing noise raises on an honest file (the host clock's cross-check; a large speedup that a
#: second measurement did not find). The machines the CPU tests run on are shared with compilers and other
#: tests, and PoCL's timings there spread by 50% and more: on the CPU an honest file flagged by these alone
#: passes (the hacks of the corpus are caught by the checks, never by timing). The GPU test allows none.
TIMING_FLAGS = {"host_timer_mismatch", "speedup_unconfirmed"}


def timing_noise_only(result: dict) -> bool:
    return result["verdict"] == judge.FLAGGED and set(result["doubts"]) <= TIMING_FLAGS


def integrity_checks_built() -> bool:
    """Whether this build's evaluator has the ModelNew runner's integrity checks and kernel accounting."""
    return hasattr(ks.EvaluatorOptions(), "host_code_policy")


_NO_INTEGRITY_CHECKS = ("this build's evaluator lacks the ModelNew runner's integrity checks "
                        "(EvaluatorOptions.host_code_policy): the files that need them are not judged here")


def needs_integrity_checks(f: CorpusFile) -> bool:
    return f.needs is not None or f.name.startswith("integrity_")


# ---- the corpus itself


def test_every_corpus_file_says_what_it_expects_and_the_corpus_covers_the_classes():
    files = [read_header(path) for path in sorted(CORPUS.glob("*.py"))]
    assert len(files) >= 30
    classes = {f.hack_class for f in files}
    for wanted in ("honest", "changing-inputs", "returning-inputs", "precision-downcast", "partial-computation",
                   "shape-specialisation", "reading-files", "network", "try-except-fallback", "no-custom-kernel"):
        assert wanted in classes, f"no corpus file of class {wanted}"
    assert sum(1 for f in files if f.hack_class == "honest" and f.device == "cpu" and f.expect == "trusted") >= 3
    assert any(f.device == "gpu" for f in files) and any(f.device == "cpu" for f in files)
    problems = {(int(level.name.removeprefix("level")), int(p.name.split("_")[0]))
                for level in PROBLEMS.iterdir() if level.is_dir() for p in level.glob("*.py")}
    unknown = [f.name for f in files if (f.level, f.problem) not in problems]
    assert not unknown, f"corpus files answering no problem of {PROBLEMS}: {unknown}"


# ---- reading corpora and the verdict rule (no evaluation)


def test_a_jsonl_corpus_turns_each_malformed_line_into_an_entry_that_says_why(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text("\n".join([
        json.dumps({"name": "good", "level": 1, "problem_id": "2", "code": "class ModelNew: pass"}),
        "{not json",
        json.dumps([1, 2]),
        json.dumps({"name": "no_code", "level": 1, "problem_id": 2}),
        json.dumps({"level": "one", "problem_id": 2, "code": "x"}),
        "",
    ]) + "\n")
    entries = judge.read_corpus(str(path)).entries
    assert [(e.name, e.level, e.problem_id, e.error) for e in entries][0] == ("good", 1, 2, None)
    errors = [e.error for e in entries[1:]]
    assert errors[0].startswith(f"{path} line 2: not JSON")
    assert errors[1] == f"{path} line 3: a list, not an object with name, level, problem_id, code"
    assert errors[2] == f"{path} line 4: no code"
    assert errors[3] == f"{path} line 5: level 'one' is not a number"
    assert entries[4].name == "line 5"


def test_a_corpus_folder_takes_kernelbench_file_names_and_lists_the_others(tmp_path):
    for name in ("level_2_problem_7_sample_1_kernel.py", "level_1_problem_3_sample_0_kernel.py",
                 "level_1_problem_3_sample_0_prompt.txt", "model_new.py"):
        (tmp_path / name).write_text("code of " + name)
    (tmp_path / "sub").mkdir()
    corpus_ = judge.read_corpus(str(tmp_path))
    assert [(e.name, e.level, e.problem_id) for e in corpus_.entries] == [
        ("level_1_problem_3_sample_0_kernel", 1, 3), ("level_2_problem_7_sample_1_kernel", 2, 7)]
    assert corpus_.entries[0].code == "code of level_1_problem_3_sample_0_kernel.py"
    assert corpus_.not_understood == ["level_1_problem_3_sample_0_prompt.txt", "model_new.py"]
    with pytest.raises(FileNotFoundError, match="no such file or folder"):
        judge.read_corpus(str(tmp_path / "missing.jsonl"))


def _evaluation(status: str, flags=(), host_code=None):
    return SimpleNamespace(status=status, integrity=SimpleNamespace(flags=list(flags)), host_code=host_code,
                           speedups={"eager": 1.5, "compile": 0.0}, message="m")


def test_the_verdict_rule_reads_the_doubt_casting_flags_of_the_library():
    doubts = ks.doubt_casting_flags()
    doubt = sorted(doubts)[0]
    assert judge.verdict_of(_evaluation("incorrect", [doubt])) == (judge.REJECTED, [])
    assert judge.verdict_of(_evaluation("ok", [doubt, "remeasured"])) == (judge.FLAGGED, [doubt])
    assert judge.verdict_of(_evaluation("ok", ["remeasured", "nondeterministic"])) == (judge.TRUSTED, [])
    assert judge.verdict_of(_evaluation("ok", ["torch_only"])) == (judge.FLAGGED, [judge.TORCH_ONLY])
    kernels = SimpleNamespace(custom_share=0.75, custom_calls=3, kernels=[
        SimpleNamespace(name="swish_kernel", origin="candidate", launches=3, device_seconds=0.003),
        SimpleNamespace(name="aten::addmm", origin="library", launches=3, device_seconds=0.001)])
    result = judge.result_of(judge.CorpusEntry("f", 1, 1, "", "here"), "kb_l1_1_x", _evaluation("ok", [], kernels))
    assert result.verdict == judge.TRUSTED
    assert result.custom_kernels == {"share": 0.75, "calls": 3, "kernels": [
        {"name": "swish_kernel", "launches": 3, "device_seconds": 0.003}]}
    assert result.speedups == {"eager": 1.5, "compile": None, "max_autotune": None}
    assert judge.custom_kernels_of(_evaluation("ok")) is None


def test_metrics_count_every_correct_file_and_then_only_the_trusted_ones():
    def result(verdict, eager):
        return judge.JudgeResult("f", 1, 1, "t", "ok" if verdict != judge.REJECTED else "incorrect", verdict, [],
                                 None, {"eager": eager, "compile": None, "max_autotune": None}, "")
    results = [result(judge.TRUSTED, 2.0), result(judge.FLAGGED, 8.0), result(judge.REJECTED, None),
               result(judge.TRUSTED, 0.5)]
    metrics = judge.metrics_of(results)
    assert metrics["all"].attempted == metrics["trusted"].attempted == 4
    assert (metrics["all"].correct, metrics["trusted"].correct) == (3, 2)
    assert metrics["all"].baselines["eager"].fast_p[1.0] == 0.5
    assert metrics["trusted"].baselines["eager"].fast_p[1.0] == 0.25
    assert metrics["trusted"].baselines["eager"].geomean == pytest.approx(1.0)


# ---- the corpus, judged on the CPU


@pytest.fixture(scope="module")
def cpu_tasks(tmp_path_factory) -> pathlib.Path:
    return import_problems(tmp_path_factory.mktemp("judge") / "tasks", "cpu")


def judge_command(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kernelsmith", "kernelbench", "judge", *args], capture_output=True,
                          text=True, timeout=1800)


# Screen mode and eager only (torch.compile's baseline compiles for minutes on a CPU). One worker: a second one
# on the same two cores would build extensions while the first times, and the host clock's cross-check of an
# honest file would see that noise.
_CPU_OPTIONS = ("--backend", "opencl", "--mode", "screen", "--baselines", "eager")


@pytest.fixture(scope="module")
def cpu_judged(cpu_tasks, tmp_path_factory) -> tuple:
    """(the files, the JSON report of `kernelsmith kernelbench judge` over them as a JSONL corpus): the CPU files,
    less those that need integrity checks this build lacks."""
    files = [f for f in corpus("cpu") if integrity_checks_built() or not needs_integrity_checks(f)]
    corpus_file = write_jsonl(files, tmp_path_factory.mktemp("corpus") / "cpu.jsonl")
    done = judge_command(str(corpus_file), "--tasks", str(cpu_tasks), *_CPU_OPTIONS, "--json")
    assert done.returncode == 0, done.stderr
    return files, json.loads(done.stdout)


@needs_opencl
def test_the_command_judges_a_jsonl_corpus_in_the_documented_schema(cpu_judged):
    files, cpu_judged = cpu_judged
    assert cpu_judged["schema"] == judge.JUDGE_SCHEMA
    assert [r["name"] for r in cpu_judged["results"]] == [f.name for f in files]
    for result in cpu_judged["results"]:
        assert {"name", "level", "problem_id", "task_name", "status", "verdict", "flags", "custom_kernels", "speedups",
                "message"} <= set(result)
        assert result["task_name"].startswith(f"kb_l{result['level']}_{result['problem_id']}_")
    counts = cpu_judged["verdicts"]
    assert sum(counts.values()) == len(files)
    metrics = cpu_judged["metrics"]
    assert metrics["all"]["attempted"] == metrics["trusted"]["attempted"] == len(files)
    assert metrics["all"]["correct"] == counts["trusted"] + counts["flagged"]
    assert metrics["trusted"]["correct"] == counts["trusted"]
    assert metrics["all"]["baselines"]["compile"] is None  # not timed (--baselines eager)


@needs_opencl
def test_every_cpu_file_gets_its_expected_verdict(cpu_judged):
    files, cpu_judged = cpu_judged
    results = {r["name"]: r for r in cpu_judged["results"]}
    files = [f for f in files if not needs_integrity_checks(f)]
    assert not mismatches(results, files, timing_noise=True)
    for f in files:
        if f.expect == judge.TRUSTED:
            assert results[f.name]["speedups"]["eager"] > 0


@needs_opencl
def test_cpu_files_whose_verdict_rests_on_the_integrity_checks(cpu_judged):
    if not integrity_checks_built():
        pytest.skip(_NO_INTEGRITY_CHECKS)
    files, cpu_judged = cpu_judged
    results = {r["name"]: r for r in cpu_judged["results"]}
    assert not mismatches(results, [f for f in files if needs_integrity_checks(f)], timing_noise=True)
    for f in files:
        if f.needs == "kernel-accounting":
            assert {"no_custom_kernel", "custom_kernel_unused"} & set(results[f.name]["doubts"]), results[f.name]
    for f in files:
        if f.expect == judge.TRUSTED:
            own = results[f.name]["custom_kernels"]
            assert own["kernels"] and own["share"] > 0, f"{f.name}: {own}"


@needs_opencl
def test_with_torch_only_allowed_a_pytorch_rewrite_is_labelled_and_still_flagged(cpu_tasks):
    options = ks.EvaluatorOptions(backend="opencl", mode="screen")
    if not hasattr(options, "host_code_policy"):
        pytest.skip("this build's evaluator has no policy on PyTorch-only rewrites (EvaluatorOptions.host_code_policy)")
    files = [f for f in corpus("cpu") if f.hack_class == "no-custom-kernel"]
    report = judge.judge(judge.read_corpus(str(write_jsonl(files, cpu_tasks.parent / "torch_only.jsonl"))),
                         tasks=str(cpu_tasks), options=options, baselines=["eager"], allow_torch_only=True)
    assert options.host_code_policy == "torch_only_allowed"
    for result in report.results:
        assert result.verdict == judge.FLAGGED and judge.TORCH_ONLY in result.doubts, result.message
        assert set(result.doubts) - {judge.TORCH_ONLY} <= TIMING_FLAGS, result.doubts


@needs_opencl
def test_problems_are_imported_from_a_kernelbench_checkout_when_asked(tmp_path):
    # judge_problems is laid out as a KernelBench checkout (level1/<number>_<Name>.py): the problems the corpus
    # answers are imported into a temporary folder; a level the checkout lacks is said per file.
    chosen = [f for f in corpus("cpu") if f.name in ("shape_specialised_swish", "returning_inputs_view_swish")]
    files = chosen + [CorpusFile(chosen[0].path, judge.REJECTED, "none", "cpu", 5, 1, None)]
    lines = []
    report = judge.judge(str(write_jsonl(files, tmp_path / "c.jsonl")), kernelbench=str(PROBLEMS),
                         options=ks.EvaluatorOptions(backend="opencl", mode="screen"), baselines=["eager"],
                         import_device="cpu", log=lines.append)
    assert [r.verdict for r in report.results] == [judge.REJECTED] * 3
    assert [r.task_name for r in report.results] == ["kb_l1_1_swish", "kb_l1_1_swish", None]
    assert report.results[2].message == (f"unknown problem: level 5 problem 1: --kernelbench {PROBLEMS} has no "
                                         f"level5 folder")
    assert len(lines) == 1 and lines[0].startswith(f"importing 1 problem(s) of level 1 from {PROBLEMS / 'level1'} into ")


@needs_opencl
def test_a_corpus_folder_named_as_kernelbench_names_files(cpu_tasks, tmp_path):
    # The files that build no extension (the folder's reading is what is new here), each under the name
    # KernelBench's generation scripts give it, beside a prompt file, and one file of a problem not imported.
    chosen = [f for f in corpus("cpu") if "load_inline" not in f.code and not needs_integrity_checks(f)]
    folder = tmp_path / "samples"
    folder.mkdir()
    names = {}
    for sample, f in enumerate(chosen):
        name = f"level_{f.level}_problem_{f.problem}_sample_{sample}_kernel.py"
        (folder / name).write_text(f.code)
        names[name[:-3]] = f
    (folder / "level_1_problem_1_sample_0_prompt.txt").write_text("the prompt")
    (folder / "level_3_problem_9_sample_0_kernel.py").write_text(chosen[0].code)
    options = ks.EvaluatorOptions(backend="opencl", mode="screen")
    seen = []
    report = judge.judge(str(folder), tasks=str(cpu_tasks), options=options, baselines=["eager"],
                         on_result=seen.append)
    results = {r.name: r for r in report.results}
    assert len(seen) == len(report.results) == len(chosen) + 1
    unknown = results.pop("level_3_problem_9_sample_0_kernel")
    assert (unknown.verdict, unknown.task_name) == (judge.REJECTED, None)
    assert unknown.message.startswith("unknown problem: level 3 problem 9")
    wrong = [f"{name}: expected {f.expect}, got {results[name].verdict} ({results[name].message[:200]})"
             for name, f in names.items() if results[name].verdict != f.expect]
    assert not wrong
    assert report.corpus.not_understood == ["level_1_problem_1_sample_0_prompt.txt"]
    assert any("level_1_problem_1_sample_0_prompt.txt" in note for note in report.notes)
    text = judge.format_report(report)
    assert "REJECTED level_3_problem_9_sample_0_kernel" in text
    assert "metrics (trusted files, only trusted files count as correct)" in text


@needs_opencl
def test_the_command_says_what_is_missing(tmp_path):
    corpus_file = tmp_path / "c.jsonl"
    corpus_file.write_text(json.dumps({"name": "x", "level": 1, "problem_id": 1, "code": "x"}) + "\n")
    done = judge_command(str(corpus_file))
    assert done.returncode == 1 and "give --tasks DIR" in done.stderr
    done = judge_command(str(corpus_file), "--tasks", str(tmp_path / "none"), "--backend", "opencl")
    assert done.returncode == 1 and "no such folder" in done.stderr
    done = judge_command(str(tmp_path / "none.jsonl"), "--tasks", str(tmp_path))
    assert done.returncode == 1 and "no such file or folder" in done.stderr


# ---- the corpus, judged on a GPU


@pytest.mark.gpu
@pytest.mark.skipif(not backend_available("cuda"), reason="no CUDA device for kernelsmith")
def test_every_gpu_file_gets_its_expected_verdict(tmp_path):
    torch = pytest.importorskip("torch", reason="ModelNew candidates need torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    tasks = import_problems(tmp_path / "tasks", "cuda")
    files = [f for f in corpus("gpu") if integrity_checks_built() or not needs_integrity_checks(f)]
    corpus_file = write_jsonl(files, tmp_path / "gpu.jsonl")
    done = judge_command(str(corpus_file), "--tasks", str(tasks), "--backend", "cuda", "--devices", "all",
                         "--baselines", "eager,compile", "--json")
    assert done.returncode == 0, done.stderr
    results = {r["name"]: r for r in json.loads(done.stdout)["results"]}
    assert not mismatches(results, files)
    for f in files:
        if f.expect == judge.TRUSTED:
            speedups = results[f.name]["speedups"]
            assert speedups["eager"] and speedups["compile"], f"{f.name}: a baseline was not timed: {speedups}"
            if integrity_checks_built():
                assert results[f.name]["custom_kernels"]["kernels"], f"{f.name}: no kernel of its own reported"
