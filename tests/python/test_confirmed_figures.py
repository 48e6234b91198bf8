"""Confirmed figures only (docs/evaluation.md#confirmed-evaluations): every figure a user reads (`kernelsmith
report`, `kernelsmith kernelbench report` and its metrics, the web view's JSON, the notebook's best and progress,
the progress lines) comes from confirmed evaluations, and a faster evaluation that is not confirmed is listed apart
with why.

The stores are real: written by the library's own RunStore (the C++ writer the engine uses), holding Evaluation
documents as the evaluator writes them: a 92.3x evaluation flagged speedup_unconfirmed beside a confirmed 6.9x one,
as the attack that found the problem saw it. Commands run as subprocesses; the web view through Flask's client.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import kernelsmith as ks
from kernelsmith import store as run_store
from kernelsmith.kernelbench import report as kb_report
from kernelsmith.notebook import Run

ROOT = Path(__file__).resolve().parents[2]
PROBLEM = "kb_l1_19_relu"

#: (name, mode, speedup, flags) of each evaluation, in order; every one is correct (status ok).
EVALUATIONS = [
    ("seed", "strict", 1.0, []),
    ("confirmed", "strict", 6.9, ["nondeterministic"]),  # a flag that casts no doubt: confirmed
    ("cheat", "strict", 92.3, ["speedup_above_threshold", "remeasured", "speedup_unconfirmed"]),
    ("screened", "screen", 40.0, []),  # screen mode: never confirmed, whatever its flags
    ("slower", "strict", 3.0, ["host_timer_mismatch"]),
]


def evaluation(task: str, mode: str, speedup: float, flags, status: str = "ok") -> "ks.Evaluation":
    result = ks.Evaluation()
    result.task = task
    result.status = ks.parse_status(status)
    result.message = "ok" if status == "ok" else status
    result.speedup = speedup
    result.speedups = {"eager": speedup, "compile": speedup / 2}
    result.fitness = min(speedup, 1.0) if "speedup_unconfirmed" in flags else speedup
    timing = ks.TimingReport()
    timing.mode = mode
    timing.median_ms = 1.0 / speedup
    result.timing = timing
    integrity = result.integrity
    integrity.flags = list(flags)
    result.integrity = integrity
    return result


def write_store(path: Path, task: str = PROBLEM, evaluations=EVALUATIONS) -> dict:
    """One finished run of `task` holding `evaluations`; returns the program id of each by name."""
    store = ks.RunStore(str(path))
    info = ks.RunInfo()
    info.task_name = task
    info.language = info.backend = "opencl"
    info.device = "test device"
    info.mutator = "param"
    info.config_json = ks.EvolutionConfig().to_json()
    run = store.create_run(info)
    ids = {}
    for sequence, (name, mode, speedup, flags) in enumerate(evaluations):
        candidate = ks.Candidate("opencl", f"// {name}\n__kernel void k() {{}}\n",
                                 ks.Lineage(origin="seed" if sequence == 0 else "param"))
        store.add_program(run, candidate.id(), candidate, f"hash-{name}")
        step = ks.StepRecord()
        step.run, step.island, step.child_id = run, 0, candidate.id()
        step.selection, step.mutation = ("seed", "seed") if sequence == 0 else ("policy", "param")
        step.parent_ids = [] if sequence == 0 else [ids["seed"]]
        step_id = store.add_step(step)
        store.add_evaluation(run, candidate.id(), sequence, evaluation(task, mode, speedup, flags), step_id)
        ids[name] = candidate.id()
    store.set_run_status(run, "finished", "budget")
    return ids


def kernelsmith(*args, **environment):
    import os

    return subprocess.run([sys.executable, "-m", "kernelsmith", *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **environment})


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "run.db"
    return path, write_store(path)


# ---- the one definition


def test_confirmed_means_ok_strict_and_no_doubting_flag_in_python_and_in_sql(db):
    path, ids = db
    (run,) = run_store.read_runs(str(path))
    confirmed = {e.program_id for e in run.evaluations.values() if e.confirmed}
    assert confirmed == {ids["seed"], ids["confirmed"]}
    reasons = {name: run.evaluations[ids[name]].unconfirmed_reasons for name in ids}
    assert reasons["cheat"] == ["speedup_unconfirmed"]
    assert reasons["screened"] == ["screen mode"]
    assert reasons["slower"] == ["host_timer_mismatch"]
    # The SQL twin agrees with the Python rule on every row.
    reader = run_store.RunStoreReader(str(path))
    assert {row["id"] for row in reader.evaluated_programs(run.id, confirmed_only=True)} == confirmed
    assert [row["confirmed"] for row in reader.progress_rows(run.id)] == [1, 1, 0, 0, 0]
    assert run_store.unconfirmed_reasons("incorrect", {}) == ["status incorrect", "mode unknown"]


def test_every_doubting_flag_is_documented_and_is_a_flag_the_evaluator_raises():
    documented = (ROOT / "docs" / "evaluation.md").read_text()
    section = documented.split("## Confirmed evaluations", 1)[1].split("\n## ", 1)[0]
    # Raised by the worker's harness, or by the ModelNew runner it starts (the host-code integrity checks).
    sources = sorted((ROOT / "lib" / "evaluate").glob("*.cpp")) + [
        ROOT / "python" / "kernelsmith" / "pytorch_oracle.py", ROOT / "python" / "kernelsmith" / "_host_code_guard.py"]
    raised = "".join(path.read_text() for path in sources)
    for flag in run_store.DOUBT_FLAGS:
        assert f"`{flag}`" in section, flag
        assert f'"{flag}"' in raised, flag


# ---- kernelsmith report


def test_report_headlines_the_confirmed_best_and_lists_the_unconfirmed_apart(db):
    path, ids = db
    result = kernelsmith("report", "--db", str(path), "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["best"][0]["id"] == ids["confirmed"]
    assert document["best"][0]["speedup"] == pytest.approx(6.9)
    assert {entry["id"] for entry in document["best"]} == {ids["confirmed"], ids["seed"]}
    apart = {entry["id"]: entry["reasons"] for entry in document["unconfirmed"]}
    assert apart == {ids["cheat"]: ["speedup_unconfirmed"], ids["screened"]: ["screen mode"]}
    assert max(point["best_speedup"] for point in document["history"]) == pytest.approx(6.9)
    assert document["lineage"][0]["id"] == ids["confirmed"]

    text = kernelsmith("report", "--db", str(path))
    assert text.returncode == 0, text.stderr
    headline, apart_text = text.stdout.split("not confirmed, so not counted", 1)
    assert f"{ids['confirmed']}  6.900x" in headline and "92.300x" not in headline
    assert f"{ids['cheat']}  92.300x  (evaluation 3): speedup_unconfirmed" in apart_text
    assert "after     2: 6.900x" in text.stdout and "92.300x" not in text.stdout.split("best confirmed speedup")[1]


def test_report_of_a_run_with_nothing_confirmed_says_so(tmp_path):
    path = tmp_path / "screen.db"
    ids = write_store(path, evaluations=[("seed", "screen", 1.0, []), ("fast", "screen", 5.0, [])])
    result = kernelsmith("report", "--db", str(path))
    assert result.returncode == 0, result.stderr
    assert "no confirmed program yet" in result.stdout
    assert f"{ids['fast']}  5.000x  (evaluation 2): screen mode" in result.stdout
    assert "lineage of the best" not in result.stdout


# ---- kernelsmith kernelbench report and its metrics


def test_kernelbench_report_counts_confirmed_evaluations_only(tmp_path):
    path = tmp_path / "kb.db"
    ids = write_store(path)
    # A second problem whose only fast kernel is not confirmed: no confirmed kernel, so not correct in the metrics.
    write_store(path, "kb_l1_20_leaky", [("seed", "screen", 1.5, []), ("cheat", "strict", 50.0, ["race"])])
    result = kernelsmith("kernelbench", "report", "--db", str(path), "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["schema"] == kb_report.REPORT_SCHEMA
    relu, leaky = document["problems"]
    assert relu["best"]["program_id"] == ids["confirmed"] and relu["speedups"]["eager"] == pytest.approx(6.9)
    assert relu["unconfirmed"]["program_id"] == ids["cheat"]
    assert relu["unconfirmed"]["reasons"] == ["speedup_unconfirmed"]
    assert (relu["correct_evaluations"], relu["confirmed_evaluations"]) == (5, 2)
    assert leaky["correct"] is False and leaky["best"] is None
    assert leaky["status"] == "no confirmed kernel: 2 correct, none confirmed (screen mode x1, race x1)"
    assert leaky["unconfirmed"]["speedups"]["eager"] == pytest.approx(50.0)
    metrics = document["metrics"]["all"]
    assert (metrics["attempted"], metrics["correct"]) == (2, 1)
    assert metrics["amsr"] == pytest.approx(6.9 / 2)
    eager = metrics["baselines"]["eager"]
    assert eager["geomean_speedup"] == pytest.approx(6.9) and eager["geomean_problems"] == 1
    assert eager["fast_p"]["fast_2"] == pytest.approx(0.5)
    assert any("not confirmed" in note and PROBLEM in note for note in document["notes"])

    text = kernelsmith("kernelbench", "report", "--db", str(path))
    assert text.returncode == 0, text.stderr
    row = next(line for line in text.stdout.splitlines() if line.startswith(PROBLEM))
    assert "6.900x" in row and "92.300x over eager [speedup_unconfirmed]" in row
    assert "geomean speedup" in text.stdout and "92.3" not in text.stdout.split("metrics (all")[1].split("notes:")[0]


# ---- the web view's JSON


def test_the_web_view_headlines_the_confirmed_best(db):
    pytest.importorskip("flask", reason="the web view needs Flask: pip install 'kernelsmith[web]'")
    from kernelsmith.web import create_app

    path, ids = db
    client = create_app([str(path)]).test_client()

    def get(url):
        response = client.get(url, headers={"Host": "127.0.0.1:8050"})
        assert response.status_code == 200, (url, response.get_data(as_text=True)[:500])
        return response

    (run,) = get("/api/runs").get_json()["stores"][0]["runs"]
    assert run["best_program_id"] == ids["confirmed"] and run["best_speedup"] == pytest.approx(6.9)
    assert run["unconfirmed"]["program_id"] == ids["cheat"]
    state = get(f"/store/0/run/{run['id']}/api/state").get_json()
    assert state["best"]["program_id"] == ids["confirmed"]
    assert state["unconfirmed"]["reasons"] == ["speedup_unconfirmed"]
    progress = get(f"/store/0/run/{run['id']}/api/progress").get_json()
    while progress["view"]["busy"]:
        progress = get(f"/store/0/run/{run['id']}/api/progress").get_json()
    assert progress["speedup"]["all"] == [[0, 1.0], [1, pytest.approx(6.9)]]
    assert progress["unconfirmed"] == [[2, pytest.approx(92.3)]]
    page = get(f"/store/0/run/{run['id']}/").get_data(as_text=True)
    assert "best confirmed" in page and "not confirmed, not counted" in page and "speedup_unconfirmed" in page
    lineage = get(f"/store/0/run/{run['id']}/lineage").get_data(as_text=True)
    assert f'data-program="{ids["confirmed"]}"' in lineage and f'data-program="{ids["cheat"]}"' not in lineage


# ---- the notebook and the progress lines


def test_the_notebook_best_and_progress_are_confirmed(db):
    path, ids = db
    run = Run.open(path)
    assert run.best().id == ids["confirmed"]
    assert [entry["program_id"] for entry in run.unconfirmed()] == [ids["cheat"], ids["screened"]]
    history = run.speedup_history()
    rows = history.to_dict("records") if hasattr(history, "to_dict") else history
    assert max(row["best_speedup"] for row in rows) == pytest.approx(6.9)
    assert [row["confirmed"] for row in rows] == [True, True, False, False, False]
    shown = run._repr_html_()
    assert "6.9x" in shown and "92.3x" in shown and "speedup_unconfirmed" in shown
    assert shown.index("6.9x") < shown.index("92.3x")


def test_progress_lines_follow_the_confirmed_best(db):
    """The best-so-far of `evolve`'s lines and the notebook's bar: fed the run's evaluations in order, as the engine
    reports them, it reads each back from the store and moves only on a confirmed one."""
    path, ids = db
    best = run_store.ConfirmedBest(str(path))
    improved = [best.observe(1, ids[name], "ok") for name, *_ in EVALUATIONS]
    # The first report starts from what the store holds (a resumed run), so its best is already 6.9x.
    assert best.speedup == pytest.approx(6.9) and best.program_id == ids["confirmed"]
    assert improved == [False, False, False, False, False]
    assert best.text() == "best 6.900x (unconfirmed 92.300x: speedup_unconfirmed)"
    fresh = run_store.ConfirmedBest(str(path))
    fresh.run_id = 1  # as if it had followed the run from its start
    assert [fresh.observe(1, ids[name], "ok") for name, *_ in EVALUATIONS] == [True, True, False, False, False]
    assert fresh.text() == best.text()


@pytest.mark.skipif(not any(b.name == "opencl" and b.available for b in ks.devices()),
                    reason="no OpenCL device (install pocl-opencl-icd)")
def test_a_real_run_headlines_a_confirmed_best(tmp_path):
    """Through the engine: relu on PoCL, screened (whatever the engine confirms on its side, the notebook's best and
    the report read the stored evaluations and headline only confirmed ones)."""
    from kernelsmith import notebook

    options = ks.EvaluatorOptions(backend="opencl", mode="screen", correctness_trials=1, cache_dir=str(tmp_path))
    options.strict_budget_seconds = options.screen_budget_seconds = 0.05
    options.strict_min_samples = options.min_samples = 5
    run = notebook.evolve("relu", budget=4, db=tmp_path / "run.db", progress=False, evaluator_options=options)
    (stored,) = run_store.read_runs(str(tmp_path / "run.db"))
    confirmed = [e for e in stored.evaluations.values() if e.confirmed]
    best = run.best()
    assert (best is None) == (not confirmed)
    if best is not None:
        assert best.evaluation.timing.mode == "strict"
        assert best.id == max(confirmed, key=lambda e: (e.fitness, -e.sequence)).program_id
    document = json.loads(kernelsmith("report", "--db", str(tmp_path / "run.db"), "--json").stdout)
    assert [entry["id"] for entry in document["best"][:1]] == ([best.id] if best else [])
    assert all(entry["reasons"] for entry in document["unconfirmed"])


# ---- errors from a broken store: one line naming the file


def deep_json(levels: int = 100000) -> str:
    return "[" * levels + "]" * levels


@pytest.mark.parametrize("command, column", [
    (["report"], "evaluations.json"), (["kernelbench", "report"], "evaluations.json"),
    (["export", "--format", "sft", "--out", "OUT"], "programs.parent_ids"),
    (["export", "--format", "rl", "--out", "OUT"], "programs.parent_ids"),
])
def test_a_deeply_nested_row_gives_one_line_naming_the_store(db, tmp_path, command, column):
    path, ids = db
    table, name = column.split(".")
    key = "program_id" if table == "evaluations" else "id"
    with sqlite3.connect(path) as connection:  # a forged row: what no kernelsmith writer produces
        connection.execute(f"UPDATE {table} SET {name} = ? WHERE {key} = ?", (deep_json(), ids["cheat"]))
    args = [str(tmp_path / "out.jsonl") if arg == "OUT" else arg for arg in command]
    result = kernelsmith(*args, "--db", str(path))
    assert result.returncode != 0
    assert "Traceback" not in result.stderr and "RecursionError" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"kernelsmith {' '.join(command[:2] if command[0] == 'kernelbench' else command[:1])}: ")
    assert str(path) in lines[0] and "nested deeper than" in lines[0]


def test_a_store_that_is_not_a_store_gives_one_line_naming_it(tmp_path):
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"SQLite format 3\x00" + b"\x5a" * 8192)
    for command in (["report"], ["kernelbench", "report"], ["export", "--format", "sft", "--out",
                                                           str(tmp_path / "o.jsonl")]):
        result = kernelsmith(*command, "--db", str(junk))
        assert result.returncode != 0 and "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and str(junk) in result.stderr, result.stderr


def test_kernelsmith_debug_shows_the_traceback(db, tmp_path):
    path, ids = db
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE evaluations SET json = ? WHERE program_id = ?", (deep_json(), ids["cheat"]))
    result = kernelsmith("report", "--db", str(path), KERNELSMITH_DEBUG="1")
    assert result.returncode != 0 and "Traceback" in result.stderr
