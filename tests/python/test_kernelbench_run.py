"""`kernelsmith kernelbench run` and `kernelsmith kernelbench report` end to end on PoCL: task folders named as
imported KernelBench problems (written here, checked against ordinary reference kernels), real run stores, the
real command in a subprocess; a killed or interrupted run goes on where it stopped."""

from __future__ import annotations

import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

import kernelsmith as ks
from backends import needs_opencl
from processes import signal_when_ready

_RELU = Path(ks.Task.load("relu").folder)
_REFERENCE = (_RELU / "reference.cl").read_text()
_SEED = (_RELU / "seed.cl").read_text()
# A seed that forgets the max: wrong wherever x < 0, so none of its variants is correct.
_WRONG_SEED = _SEED.replace("fmax(x[i], 0.0f)", "x[i]")
assert _WRONG_SEED != _SEED


def _write_task(folder: Path, name: str, seed: str | None) -> None:
    """A relu task small enough for a CPU, checked against the OpenCL reference kernel."""
    folder.mkdir(parents=True)
    (folder / "reference.cl").write_text(_REFERENCE)
    document = {
        "schema": "kernelsmith.task/1",
        "name": name,
        "description": f"{name}: ReLU over N float32 values (a stand-in problem for the tests)",
        "sizes": {"N": 65536},
        "check_sizes": [{"name": "odd_1023", "sizes": {"N": 1023}}],
        "tensors": [
            {"name": "x", "dtype": "float32", "shape": ["N"], "role": "input",
             "distribution": {"kind": "normal", "a": 0.0, "b": 1.0}},
            {"name": "y", "dtype": "float32", "shape": ["N"], "role": "output"},
        ],
        "work": {"flops": "N", "bytes": "8 * N"},
        "references": {"opencl": "reference.cl"},
    }  # fmt: skip
    if seed is not None:
        (folder / "seed.cl").write_text(seed)
        document["seeds"] = {"opencl": "seed.cl"}
    (folder / "task.json").write_text(json.dumps(document, indent=2))


@pytest.fixture(scope="module")
def problems(tmp_path_factory) -> tuple[Path, Path]:
    """(tasks folder, seeds folder): four level-1 problems (a seed in the task; a seed only in the seeds folder; a
    wrong seed; no seed anywhere), one level-2 problem and one task that is not a problem."""
    root = tmp_path_factory.mktemp("kernelbench")
    tasks, seeds = root / "tasks", root / "seeds"
    _write_task(tasks / "kb_l1_1_relu", "kb_l1_1_relu", _SEED)
    _write_task(tasks / "kb_l1_2_relu_seeded", "kb_l1_2_relu_seeded", None)
    (seeds / "kb_l1_2_relu_seeded").mkdir(parents=True)
    (seeds / "kb_l1_2_relu_seeded" / "seed.cl").write_text(_SEED)
    _write_task(tasks / "kb_l1_3_relu_wrong", "kb_l1_3_relu_wrong", _WRONG_SEED)
    _write_task(tasks / "kb_l1_4_relu_unseeded", "kb_l1_4_relu_unseeded", None)
    _write_task(tasks / "kb_l2_1_relu", "kb_l2_1_relu", _SEED)
    _write_task(tasks / "relu_plain", "relu_plain", _SEED)
    return tasks, seeds


def kernelsmith(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kernelsmith", *args], capture_output=True, text=True,
                          timeout=timeout)


def _run_args(tasks: Path, seeds: Path, db: Path, budget: int, *extra: str) -> list[str]:
    return ["kernelbench", "run", "--tasks", str(tasks), "--level", "1", "--seeds", str(seeds), "--backend", "opencl",
            "--mutator", "param", "--budget", str(budget), "--db", str(db), "--seed", "1", "--islands", "1",
            "--in-flight", "1", *extra]  # fmt: skip


def _store_evaluations(db: Path) -> dict[str, list[tuple[str, int, str, float, str]]]:
    """Per task: (program, sequence, status, speedup, origin) of each evaluation, read with plain SQL."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        rows = con.execute(
            "SELECT r.task_name, e.program_id, e.sequence, e.status, e.speedup, p.origin FROM evaluations e "
            "JOIN runs r ON r.id = e.run JOIN programs p ON p.run = e.run AND p.id = e.program_id "
            "ORDER BY r.id, e.sequence").fetchall()
    except sqlite3.OperationalError:  # the store is being created
        rows = []
    finally:
        con.close()
    by_task: dict[str, list] = {}
    for task, *rest in rows:
        by_task.setdefault(task, []).append(tuple(rest))
    return by_task


@pytest.fixture(scope="module")
def finished_run(problems, tmp_path_factory):
    """One `kernelbench run` over level 1 with budget 4, in JSON (its progress on stderr)."""
    tasks, seeds = problems
    db = tmp_path_factory.mktemp("run") / "run.db"
    done = kernelsmith(*_run_args(tasks, seeds, db, 4, "--json"))
    assert done.returncode == 0, done.stderr
    return db, json.loads(done.stdout), done.stderr


@needs_opencl
def test_run_evolves_each_selected_problem_into_one_store_and_reports(finished_run):
    db, report, progress = finished_run
    assert report["schema"] == "kernelsmith.kernelbench_report/3"
    names = [p["name"] for p in report["problems"]]
    assert names == ["kb_l1_1_relu", "kb_l1_2_relu_seeded", "kb_l1_3_relu_wrong"]  # level 2 and the rest left out
    assert [skip["problem"] for skip in report["skipped"]] == ["kb_l1_4_relu_unseeded"]
    assert report["skipped"][0]["reason"].startswith("no opencl seed: the task has none")
    assert "parameter mutator" in report["skipped"][0]["reason"]
    assert "seed from " in progress and "kb_l1_2_relu_seeded/seed.cl" in progress

    stored = _store_evaluations(db)
    assert set(stored) == set(names)  # one run per attempted problem, in the one store
    for problem in report["problems"]:
        rows = stored[problem["name"]]
        assert len(rows) == 4 and len(problem["runs"]) == 1
        assert problem["runs"][0]["status"] == "finished"
        kernels = [row for row in rows if row[4] != "reference"]  # the reference is the baseline, not a solution
        correct = [row for row in kernels if row[2] == "ok"]
        assert problem["evaluations"] == len(kernels) == 3
        assert problem["correct_evaluations"] == len(correct)
        if correct:
            best = max(correct, key=lambda row: row[3])
            assert problem["speedups"]["eager"] == pytest.approx(best[3])
            assert problem["best"]["program_id"] == best[0]
            assert problem["speedup_baseline"] == "reference"  # schema-2 evaluations: no PyTorch baselines
            assert problem["speedups"]["compile"] is None and problem["speedups"]["max_autotune"] is None
        else:
            assert problem["speedups"]["eager"] is None
            assert problem["status"].startswith("no correct kernel: incorrect x3")
    correct_flags = [p["correct"] for p in report["problems"]]
    assert correct_flags == [True, True, False]

    metrics = report["metrics"]["all"]
    assert (metrics["attempted"], metrics["correct"]) == (3, 2)
    assert metrics["correctness_rate"] == pytest.approx(2 / 3)
    eager = [p["speedups"]["eager"] for p in report["problems"] if p["correct"]]
    assert metrics["amsr"] == pytest.approx(sum(eager) / 3)
    over_eager = metrics["baselines"]["eager"]
    assert over_eager["fast_p"]["fast_0"] == pytest.approx(2 / 3)
    assert over_eager["fast_p"]["fast_1"] == pytest.approx(sum(1 for s in eager if s > 1) / 3)
    assert over_eager["geomean_speedup"] == pytest.approx(math.sqrt(eager[0] * eager[1]))
    assert over_eager["geomean_problems"] == 2
    # Checked against reference kernels, these runs timed no PyTorch baseline: no compile metrics, rather than
    # fast_0 = 0% over torch.compile beside correct kernels.
    assert report["baselines_timed"] == ["eager"]
    assert metrics["baselines"]["compile"] is None and metrics["baselines"]["max_autotune"] is None
    assert any("counted as the speedup over eager" in note for note in report["notes"])


@needs_opencl
def test_report_reads_the_store_as_the_run_left_it(finished_run):
    db, from_run, _ = finished_run
    done = kernelsmith("kernelbench", "report", "--db", str(db), "--json", timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["problems"] == from_run["problems"]
    assert report["metrics"] == from_run["metrics"]

    text = kernelsmith("kernelbench", "report", "--db", str(db), timeout=120)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    row = next(line for line in lines if line.startswith("kb_l1_1_relu "))
    assert f"{from_run['problems'][0]['speedups']['eager']:.3f}x (ref)" in row
    assert "no correct kernel: incorrect x3" in next(line for line in lines if line.startswith("kb_l1_3_relu_wrong"))
    for label in ("fast_0", "fast_1", "fast_1.2", "fast_2", "geomean speedup", "correctness rate: 66.7%", "amsr"):
        assert label in text.stdout
    assert "PyTorch eager" in text.stdout and "over compile" not in text.stdout
    assert "not timed in these runs, so left out: torch.compile, torch.compile max-autotune" in text.stdout

    level_2 = kernelsmith("kernelbench", "report", "--db", str(db), "--level", "2", "--json", timeout=120)
    assert level_2.returncode == 0
    assert json.loads(level_2.stdout)["problems"] == []
    assert "no KernelBench problem of level 2" in " ".join(json.loads(level_2.stdout)["notes"])

    missing = kernelsmith("kernelbench", "report", "--db", str(db.parent / "none.db"), timeout=120)
    assert missing.returncode == 1
    assert "no run store at" in missing.stderr


@needs_opencl
def test_rerun_skips_finished_problems_and_several_stores_merge(problems, finished_run, tmp_path):
    tasks, seeds = problems
    db, first, _ = finished_run
    before = _store_evaluations(db)
    again = kernelsmith(*_run_args(tasks, seeds, db, 4))
    assert again.returncode == 0, again.stderr
    for name in ("kb_l1_1_relu", "kb_l1_2_relu_seeded", "kb_l1_3_relu_wrong"):
        assert f"{name}: already finished in the store (run " in again.stdout
    assert _store_evaluations(db) == before  # nothing evaluated again

    other = tmp_path / "other.db"
    done = kernelsmith(*_run_args(tasks, seeds, other, 3, "--problems", "1"))
    assert done.returncode == 0, done.stderr
    merged = kernelsmith("kernelbench", "report", "--db", str(db), "--db", str(other), "--json", timeout=120)
    assert merged.returncode == 0, merged.stderr
    report = json.loads(merged.stdout)
    relu = report["problems"][0]
    assert relu["name"] == "kb_l1_1_relu" and len(relu["runs"]) == 2
    assert {run["store"] for run in relu["runs"]} == {str(db), str(other)}
    assert relu["evaluations"] == 3 + 2
    assert relu["speedups"]["eager"] >= first["problems"][0]["speedups"]["eager"]  # the best over both stores
    # The same store named twice counts once.
    twice = json.loads(kernelsmith("kernelbench", "report", "--db", str(db), "--db", str(db), "--json").stdout)
    assert twice["problems"] == first["problems"]


def _wait_for(db: Path, task: str, count: int, process: subprocess.Popen, timeout: float = 300.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the run ended early: {process.communicate()}")
        if db.exists() and len(_store_evaluations(db).get(task, [])) >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"no {count} evaluations of {task} within {timeout} s")


@needs_opencl
def test_a_killed_run_loses_nothing_and_the_rerun_resumes_it(problems, tmp_path):
    tasks, seeds = problems
    db = tmp_path / "killed.db"
    command = [sys.executable, "-m", "kernelsmith", *_run_args(tasks, seeds, db, 6, "--problems", "1-2")]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for(db, "kb_l1_2_relu_seeded", 3, process)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
    before = _store_evaluations(db)
    assert len(before["kb_l1_1_relu"]) == 6
    assert 3 <= len(before["kb_l1_2_relu_seeded"]) < 6

    resumed = kernelsmith(*_run_args(tasks, seeds, db, 6, "--problems", "1-2"))
    assert resumed.returncode == 0, resumed.stderr
    assert "kb_l1_1_relu: already finished in the store (run 1, budget)" in resumed.stdout
    assert "kb_l1_2_relu_seeded (2/2): resuming run 2 (running)" in resumed.stdout
    after = _store_evaluations(db)
    assert after["kb_l1_1_relu"] == before["kb_l1_1_relu"]
    second = after["kb_l1_2_relu_seeded"]
    assert second[: len(before["kb_l1_2_relu_seeded"])] == before["kb_l1_2_relu_seeded"], "nothing stored is lost"
    assert len(second) == 6 and len({row[0] for row in second}) == 6, "nothing is evaluated twice"
    con = sqlite3.connect(db)
    assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 2
    con.close()

    restarted = kernelsmith(*_run_args(tasks, seeds, db, 3, "--problems", "1", "--restart"))
    assert restarted.returncode == 0, restarted.stderr
    assert "kb_l1_1_relu (1/1): new run" in restarted.stdout
    assert len(_store_evaluations(db)["kb_l1_1_relu"]) == 6 + 3


@needs_opencl
def test_a_problem_that_used_its_wall_time_counts_as_finished(problems, tmp_path):
    tasks, seeds = problems
    db = tmp_path / "wall.db"
    done = kernelsmith(*_run_args(tasks, seeds, db, 1000, "--problems", "1", "--wall-time", "1"))
    assert done.returncode == 0, done.stderr
    con = sqlite3.connect(db)
    assert con.execute("SELECT status, stop_reason FROM runs").fetchall() == [("stopped", "wall_time")]
    con.close()
    again = kernelsmith(*_run_args(tasks, seeds, db, 1000, "--problems", "1", "--wall-time", "1"))
    assert again.returncode == 0, again.stderr
    assert "kb_l1_1_relu: already finished in the store (run 1, wall_time)" in again.stdout


@needs_opencl
def test_ctrl_c_stops_the_problem_and_leaves_the_rest_for_the_rerun(problems, tmp_path):
    tasks, seeds = problems
    db = tmp_path / "interrupted.db"
    process = subprocess.Popen([sys.executable, "-m", "kernelsmith", *_run_args(tasks, seeds, db, 21)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stdout, stderr = signal_when_ready(process, lambda: _wait_for(db, "kb_l1_1_relu", 3, process), signal.SIGINT)
    assert process.returncode == 130, stderr
    assert "stopping" in stderr and "rerun the same command" in stderr
    assert "kb_l1_2_relu_seeded: not started: interrupted" in stdout
    assert "kb_l1_1_relu " in stdout  # the report of what is stored
    con = sqlite3.connect(db)
    assert con.execute("SELECT task_name, status, stop_reason FROM runs").fetchall() == [
        ("kb_l1_1_relu", "stopped", "stopped")]
    con.close()


@needs_opencl
def test_the_llm_mutator_needs_no_seed_and_one_mutator_serves_every_problem(problems, tmp_path):
    from loopback_llm import LoopbackLlmServer, chat_reply

    tasks, _ = problems
    blocks = [64, 128, 512, 1024]  # a new work-group size in each answer: no answer duplicates another

    def responder(body, index):
        kernel = _REFERENCE.replace("256", str(blocks[index % len(blocks)]))
        return chat_reply(f"Another work-group size.\n```opencl\n{kernel}```\n")

    db = tmp_path / "llm.db"
    with LoopbackLlmServer(responder=responder) as server:
        done = kernelsmith("kernelbench", "run", "--tasks", str(tasks), "--level", "1", "--problems", "2,4",
                           "--backend", "opencl", "--mutator", "llm", "--llm-url", server.url, "--model", "scripted",
                           "--api-key-env", "", "--llm-retries", "0", "--budget", "3", "--islands", "1",
                           "--in-flight", "1", "--db", str(db), "--json")
        requests = len(server.received)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["skipped"] == []
    assert [p["name"] for p in report["problems"]] == ["kb_l1_2_relu_seeded", "kb_l1_4_relu_unseeded"]
    stored = _store_evaluations(db)
    for problem in report["problems"]:
        origins = [row[4] for row in stored[problem["name"]]]
        assert origins[0] == "reference" and len(origins) == 3
        assert all(origin.startswith("llm_") for origin in origins[1:])  # no seed: the model wrote every kernel
        assert problem["correct"] and problem["evaluations"] == 2
    assert requests == 4


@needs_opencl
def test_a_sweeps_llm_budget_caps_all_its_problems_together_and_a_rerun_resumes(problems, tmp_path):
    """--sweep-max-llm-calls: each problem's run is capped at what the sweep has left; the one that meets the cap
    stops resumably (llm_budget), and a rerun with a new cap resumes it, its earlier calls not counted again."""
    from loopback_llm import LoopbackLlmServer, chat_reply

    tasks, _ = problems
    blocks = [64, 128, 512, 1024]

    def responder(body, index):
        kernel = _REFERENCE.replace("256", str(blocks[index % len(blocks)]))
        return chat_reply(f"Another work-group size.\n```opencl\n{kernel}```\n")

    db = tmp_path / "sweep.db"

    def sweep(cap: int) -> tuple:
        with LoopbackLlmServer(responder=responder) as server:
            done = kernelsmith("kernelbench", "run", "--tasks", str(tasks), "--level", "1", "--problems", "2,4",
                               "--backend", "opencl", "--mutator", "llm", "--llm-url", server.url, "--model",
                               "scripted", "--api-key-env", "", "--llm-retries", "0", "--budget", "3", "--islands",
                               "1", "--in-flight", "1", "--db", str(db), "--sweep-max-llm-calls", str(cap), "--json")
            return done, len(server.received)

    done, requests = sweep(3)
    assert done.returncode == 0, done.stderr
    assert requests == 3  # two for the first problem, the one left for the second
    assert "the sweep spent 3 calls of 3" in done.stderr
    runs = {run.task_name: run for run in ks.RunStore(str(db), read_only=True).runs()}
    assert runs["kb_l1_2_relu_seeded"].stop_reason == "budget"
    assert runs["kb_l1_4_relu_unseeded"].stop_reason == "llm_budget"

    done, requests = sweep(1)
    assert done.returncode == 0, done.stderr
    assert requests == 1  # the first problem is finished; the second resumes with one call left of the sweep's
    runs = {run.task_name: run for run in ks.RunStore(str(db), read_only=True).runs()}
    assert runs["kb_l1_4_relu_unseeded"].stop_reason == "budget"

    done, requests = sweep(-1)
    assert done.returncode != 0 and "--sweep-max-llm-calls is -1" in done.stderr and requests == 0


def test_bad_selections_say_what_is_there(problems, tmp_path):
    tasks, seeds = problems
    db = str(tmp_path / "x.db")
    done = kernelsmith("kernelbench", "run", "--tasks", str(tasks), "--level", "3", "--db", db, timeout=120)
    assert done.returncode == 1
    assert "no problem folder of level 3" in done.stderr and "level 1: 4, level 2: 1" in done.stderr
    done = kernelsmith("kernelbench", "run", "--tasks", str(tasks), "--problems", "2-1", "--db", db, timeout=120)
    assert done.returncode == 1 and "ends before it starts" in done.stderr
    done = kernelsmith("kernelbench", "run", "--tasks", str(tasks), "--problems", "one", "--db", db, timeout=120)
    assert done.returncode == 1 and "neither a number nor a range" in done.stderr
    done = kernelsmith("kernelbench", "run", "--tasks", str(tasks), "--baselines", "eager,fast", "--db", db,
                       timeout=120)
    assert done.returncode == 1 and "--baselines: unknown baseline(s) fast; known: eager, compile" in done.stderr
    done = kernelsmith("kernelbench", "run", "--tasks", str(tmp_path / "nowhere"), "--db", db, timeout=120)
    assert done.returncode == 1 and "no such folder" in done.stderr
    done = kernelsmith("kernelbench", "run", "--tasks", str(tasks), "--seeds", str(tmp_path / "nowhere"), "--db", db,
                       timeout=120)
    assert done.returncode == 1 and "--seeds" in done.stderr and "no such folder" in done.stderr
    assert not os.path.exists(db)  # nothing started


# ---- a problem whose expected outputs come from PyTorch (the oracle of kernelsmith.evaluation/3)

_PROBLEM = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


batch_size = 16
dim = 4096


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
'''


@needs_opencl
def test_an_oracle_problem_is_reported_against_pytorch_eager(tmp_path):
    pytest.importorskip("torch")
    tasks = tmp_path / "tasks"
    folder = tasks / "kb_l1_19_relu"
    folder.mkdir(parents=True)
    (folder / "problem.py").write_text(_PROBLEM)
    seed = _SEED.replace("(x, y, N)", "(x, out, batch_size * dim)").replace("ceil_div(N,", "ceil_div(batch_size * dim,")
    (folder / "seed.cl").write_text(seed)
    (folder / "task.json").write_text(json.dumps({
        "schema": "kernelsmith.task/1",
        "name": "kb_l1_19_relu",
        "description": "KernelBench level 1 problem 19 (written for the tests)",
        "sizes": {"batch_size": 16, "dim": 4096},
        "check_sizes": [{"name": "odd", "sizes": {"batch_size": 3, "dim": 1023}}],
        "tensors": [
            {"name": "x", "dtype": "float32", "shape": ["batch_size", "dim"], "role": "input",
             "distribution": {"kind": "normal", "a": 0.0, "b": 1.0}},
            {"name": "out", "dtype": "float32", "shape": ["batch_size", "dim"], "role": "output"},
        ],
        "work": {"flops": "batch_size * dim", "bytes": "8 * batch_size * dim"},
        "oracle": {"kind": "pytorch", "module": "problem.py", "constants": {"batch_size": "batch_size", "dim": "dim"},
                   "forward": ["x"], "outputs": ["out"]},
        "seeds": {"opencl": "seed.cl"},
    }))  # fmt: skip
    db = tmp_path / "oracle.db"
    done = kernelsmith("kernelbench", "run", "--tasks", str(tasks), "--backend", "opencl", "--mutator", "param",
                       "--budget", "3", "--db", str(db), "--islands", "1", "--in-flight", "1", "--json",
                       "--baselines", "eager")
    assert done.returncode == 0, done.stderr
    problem = json.loads(done.stdout)["problems"][0]
    assert problem["correct"] and problem["speedup_baseline"] == "eager"
    assert problem["speedups"]["eager"] > 0
    # Only the baselines asked for were timed (torch.compile would take minutes here).
    con = sqlite3.connect(db)
    stored = [json.loads(row[0]) for row in con.execute("SELECT json FROM evaluations")]
    con.close()
    assert stored and all(set(evaluation["baselines"]) == {"eager"} for evaluation in stored)
    # The run started from the seed alone (an oracle task has no reference kernel).
    origins = [row[4] for row in _store_evaluations(db)["kb_l1_19_relu"]]
    assert origins[0] == "seed" and "reference" not in origins

    # Without a seed the LLM mutator starts from the problem's own Model written as a ModelNew (a cold start,
    # docs/kernelbench-modelnew.md): the problem is not skipped, and the Model is its first program.
    from loopback_llm import LoopbackLlmServer, chat_reply

    (folder / "seed.cl").unlink()
    document = json.loads((folder / "task.json").read_text())
    del document["seeds"]
    (folder / "task.json").write_text(json.dumps(document))
    with LoopbackLlmServer(responder=lambda body, index: chat_reply("no program this time")) as server:
        done = kernelsmith("kernelbench", "run", "--tasks", str(tasks), "--backend", "opencl", "--mutator", "llm",
                           "--llm-url", server.url, "--model", "scripted", "--api-key-env", "", "--budget", "1",
                           "--db", str(tmp_path / "unseeded.db"), "--json", "--baselines", "eager")
    assert done.returncode == 0, done.stderr
    assert "skipped" not in done.stderr
    cold = [row[4] for row in _store_evaluations(tmp_path / "unseeded.db")["kb_l1_19_relu"]]
    assert cold == ["seed"]
