"""The evolution engine from Python: Python mutators and evaluators plugged into the C++ loop, the
real path on PoCL with the parameter mutator, the CLI, kill -9 and resume, Ctrl-C, and a reader of the
run store while a run writes."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import kernelsmith as ks
from processes import signal_when_ready


def opencl_available() -> bool:
    try:
        return any(b.name == "opencl" and b.available for b in ks.devices())
    except ks.Error:
        return False


needs_opencl = pytest.mark.skipif(not opencl_available(), reason="no OpenCL device (install pocl-opencl-icd)")


@pytest.fixture(scope="module")
def small_task_dir(tmp_path_factory) -> Path:
    """The built-in relu task at sizes a CPU evaluates in a fraction of a second."""
    document = json.loads(ks.Task.load("relu").to_json())
    document["name"] = "relu_small"
    document["sizes"] = {"N": 65536}
    document["check_sizes"] = [{"name": "odd_1023", "sizes": {"N": 1023}}]
    folder = tmp_path_factory.mktemp("relu_small")
    (folder / "task.json").write_text(json.dumps(document))
    return folder


@pytest.fixture(scope="module")
def small_task(small_task_dir) -> "ks.Task":
    return ks.Task.load(str(small_task_dir))


class ScoringEvaluator(ks.Evaluator):
    """Scores a candidate from its @tune values (no device): larger BLOCK * ITEMS is faster; ITEMS == 2
    is wrong. A source without tunables (the reference) scores 1."""

    def __init__(self, delay: float = 0.0):
        super().__init__()
        self.delay = delay
        self.seen = []
        self.lock = threading.Lock()

    def evaluate(self, task, candidate):
        evaluation = ks.Evaluation()
        evaluation.task = task.name
        values = ks.ParamMutator.values_of(candidate.source)
        if values.get("ITEMS") == 2:
            evaluation.status = ks.Status.incorrect
            evaluation.message = "output y differs at 17"
            evaluation.fitness = 0.0
        else:
            evaluation.status = ks.Status.ok
            evaluation.message = "ok"
            evaluation.speedup = 1.0 + values.get("BLOCK", 0) * values.get("ITEMS", 0) / 1024.0
            evaluation.fitness = evaluation.speedup
        if self.delay:
            time.sleep(self.delay)
        with self.lock:
            self.seen.append(candidate.id())
        return evaluation

    def backend_name(self):
        return "custom"


class PythonParamMutator(ks.Mutator):
    """A mutator written in Python: moves one tunable one step, records what it was asked."""

    def __init__(self, fail_every: int = 0):
        super().__init__()
        self.requests = []
        self.lock = threading.Lock()
        self.fail_every = fail_every
        self.threads = set()

    def propose(self, request):
        with self.lock:
            self.requests.append(request)
            count = len(self.requests)
            self.threads.add(threading.get_ident())
        if self.fail_every and count % self.fail_every == 0:
            raise RuntimeError("the model answered nonsense")
        try:
            values = ks.ParamMutator.values_of(request.parent.source)
        except ks.Error as error:
            return [ks.Proposal(mutation="python", failure=f"cannot parse the parent: {error}")]
        if not values:
            return [ks.Proposal(mutation="python", failure="the parent has no tunables")]
        allowed = {t.name: list(t.values) for t in ks.LaunchPlan.parse(request.parent.source).tunables}
        names = sorted(allowed)
        rng = request.seed
        for attempt in range(20):
            name = names[(rng + attempt) % len(names)]
            choices = allowed[name]
            index = choices.index(values[name])
            step = 1 if ((rng >> 3) + attempt) % 2 else -1
            moved = dict(values)
            moved[name] = choices[max(0, min(len(choices) - 1, index + step))]
            source = ks.ParamMutator.rewrite(request.parent.source, moved)
            candidate = ks.Candidate(request.parent.language, source)
            if moved != values and not request.is_known(candidate):
                return [
                    ks.Proposal(
                        candidate=candidate,
                        mutation="python",
                        prompt='[{"role": "user", "content": "step a parameter"}]',
                        response=f"{name}={moved[name]}",
                        model="python-stepper",
                        prompt_tokens=7,
                        completion_tokens=2,
                        latency_seconds=0.001,
                    )
                ]
        return [ks.Proposal(mutation="python", failure="no unexplored neighbour")]

    def name(self):
        return "python-stepper"


class TunablesOnlyMutator(PythonParamMutator):
    """The Python stepper, saying which parents it can work from (those with tunables) and reporting a
    parent used up when it has no unexplored neighbour left."""

    def __init__(self):
        super().__init__()
        self.asked = []
        self.task_names = set()

    def can_mutate(self, parent):
        with self.lock:
            self.asked.append(parent.id())
        return bool(ks.ParamMutator.values_of(parent.source))

    def propose(self, request):
        with self.lock:
            self.task_names.add(request.task.name)
        proposals = super().propose(request)
        if proposals[0].candidate is None:
            proposals[0].exhausted_ids = [request.parent.id()]
        return proposals


def programs_in_space(task) -> int:
    """The reference plus every combination of the seed's tunables: all a parameter search can reach."""
    combinations = 1
    for tunable in ks.LaunchPlan.parse(task.seeds["opencl"].source).tunables:
        combinations *= len(tunable.values)
    return 1 + combinations


def config_for(db: Path, budget: int, **fields) -> "ks.EvolutionConfig":
    config = ks.EvolutionConfig()
    config.db_path = str(db)
    config.budget = budget
    config.seed = 3
    for name, value in fields.items():
        setattr(config, name, value)
    return config


def test_python_mutator_and_evaluator_run_in_the_engine(tmp_path, small_task):
    evaluator = ScoringEvaluator()
    mutator = PythonParamMutator(fail_every=5)
    config = config_for(tmp_path / "run.db", 14, islands=2, mutations_in_flight=3)
    evolution = ks.Evolution(small_task, evaluator, mutator, config)
    reports = []
    evolution.on_progress(reports.append)
    result = evolution.run()

    assert result.stop_reason == "budget"
    assert result.evaluations == 14
    assert len(evaluator.seen) == len(set(evaluator.seen)) == 14
    assert result.best is not None and result.best.correct
    assert result.best_speedup == max(r.speedup for r in reports if r.program_id and r.status == ks.Status.ok)
    assert len(mutator.threads) >= 1
    assert reports[-1].evaluations == 14

    con = sqlite3.connect(config.db_path)
    rows = con.execute(
        "SELECT mutation, model, prompt_tokens, completion_tokens, response, child_id, failure FROM steps "
        "WHERE selection != 'seed'"
    ).fetchall()
    raised = [row for row in rows if "the model answered nonsense" in row[6]]
    assert raised, "a mutator exception is recorded as a failed step"
    assert all(row[5] is None for row in raised)
    made = [row for row in rows if row[5] is not None]
    assert made and all(row[0] == "python" and row[1] == "python-stepper" and row[2] == 7 for row in made)
    # Short-term memory: requests on a parent carry the outcomes of its earlier children.
    statuses = {pid: status for pid, status in con.execute("SELECT program_id, status FROM evaluations")}
    with_memory = [request for request in mutator.requests if request.recent_attempts]
    assert with_memory
    for request in with_memory:
        for attempt in request.recent_attempts:
            assert str(attempt.status).split(".")[-1] == statuses[attempt.child_id]
    con.close()


def test_a_progress_callback_error_ends_the_run(tmp_path, small_task):
    config = config_for(tmp_path / "run.db", 50)
    evolution = ks.Evolution(small_task, ScoringEvaluator(), ks.ParamMutator(), config)

    def callback(progress):
        if progress.evaluations >= 3:
            raise ValueError("enough")

    evolution.on_progress(callback)
    with pytest.raises(ValueError, match="enough"):
        evolution.run()
    store = ks.RunStore(config.db_path, read_only=True)
    run = store.latest_run()
    assert run.status == "failed"
    assert "enough" in run.error
    assert not evolution.running


def test_stop_from_another_thread_leaves_a_resumable_store(tmp_path, small_task):
    config = config_for(tmp_path / "run.db", 500, mutations_in_flight=2)
    evolution = ks.Evolution(small_task, ScoringEvaluator(delay=0.05), PythonParamMutator(), config)
    timer = threading.Timer(0.5, evolution.stop)
    timer.start()
    result = evolution.run()
    timer.join()
    assert result.stop_reason == "stopped"
    store = ks.RunStore(config.db_path, read_only=True)
    assert store.run(result.run_id).status == "stopped"
    assert store.evaluation_count(result.run_id) == result.evaluations

    config.resume = True
    config.budget = result.evaluations + 3
    evaluator = ScoringEvaluator()
    resumed = ks.Evolution(small_task, evaluator, PythonParamMutator(), config).run()
    assert resumed.run_id == result.run_id
    assert resumed.evaluations == result.evaluations + 3
    before = {e.program_id for e in store.evaluations(result.run_id)[: result.evaluations]}
    assert not before & set(evaluator.seen)


def test_a_reader_sees_consistent_rows_while_a_run_writes(tmp_path, small_task):
    budget = min(18, programs_in_space(small_task) - 2)
    assert budget >= 8
    config = config_for(tmp_path / "run.db", budget, islands=2)
    evolution = ks.Evolution(small_task, ScoringEvaluator(delay=0.02), ks.ParamMutator(), config)
    outcome = {}
    worker = threading.Thread(target=lambda: outcome.setdefault("result", evolution.run()))
    worker.start()
    counts = []
    deadline = time.monotonic() + 120
    while worker.is_alive() and time.monotonic() < deadline:
        if os.path.exists(config.db_path):
            try:
                con = sqlite3.connect(f"file:{config.db_path}?mode=ro", uri=True, timeout=10)
            except sqlite3.OperationalError:  # the file exists, its WAL files not yet
                continue
            try:
                # One read transaction: every evaluated program and its step are visible together.
                con.execute("BEGIN")
                evaluated = con.execute("SELECT count(*) FROM evaluations").fetchone()[0]
                orphans = con.execute(
                    "SELECT count(*) FROM evaluations e LEFT JOIN programs p ON p.run = e.run AND p.id = e.program_id "
                    "WHERE p.id IS NULL"
                ).fetchone()[0]
                unlinked = con.execute(
                    "SELECT count(*) FROM evaluations e WHERE NOT EXISTS "
                    "(SELECT 1 FROM steps s WHERE s.evaluation_id = e.id)"
                ).fetchone()[0]
                con.execute("COMMIT")
            except sqlite3.OperationalError as error:  # the store is being created
                assert not counts, f"a read failed after the store existed: {error}"
                continue
            finally:
                con.close()
            assert orphans == 0
            assert unlinked == 0
            counts.append(evaluated)
        time.sleep(0.01)
    worker.join()
    assert outcome["result"].evaluations == budget
    assert counts == sorted(counts), "the evaluation count only grows"
    assert len(set(counts)) > 3, "the reader saw the run progress"


def _store_counts(db: Path):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        rows = con.execute("SELECT program_id, sequence FROM evaluations ORDER BY sequence").fetchall()
    except sqlite3.OperationalError:
        rows = []
    finally:
        con.close()
    return rows


def _evolve_command(task_dir: Path, db: Path, budget: int, *extra: str):
    return [
        sys.executable, "-m", "kernelsmith", "evolve", "--task", str(task_dir), "--backend", "opencl",
        "--mutator", "param", "--budget", str(budget), "--db", str(db), "--seed", "1", "--islands", "2",
        "--in-flight", "1", *extra,
    ]  # fmt: skip


@needs_opencl
def test_short_evolution_on_pocl_with_the_parameter_mutator(tmp_path, small_task):
    evaluator = ks.create_evaluator(ks.EvaluatorOptions(backend="opencl"))
    config = config_for(tmp_path / "run.db", 6, islands=1)
    result = ks.Evolution(small_task, evaluator, ks.ParamMutator(), config).run()
    assert result.evaluations == 6
    assert result.best is not None and result.best.correct
    assert result.best_speedup > 0
    store = ks.RunStore(config.db_path, read_only=True)
    evaluations = store.evaluations(result.run_id)
    assert [e.sequence for e in evaluations] == list(range(6))
    assert len({e.program_id for e in evaluations}) == 6
    origins = [store.program(result.run_id, e.program_id).candidate.lineage.origin for e in evaluations]
    assert origins[:2] == ["reference", "seed"]
    assert set(origins[2:]) == {"param"}
    for e in evaluations:
        assert e.evaluation.backend == "opencl"
        if e.evaluation.ok:
            assert e.evaluation.timing is not None
    # The children differ from their parents in the @tune values only.
    for e in evaluations[2:]:
        program = store.program(result.run_id, e.program_id)
        parent = store.program(result.run_id, program.candidate.lineage.parent_ids[0])
        assert ks.ParamMutator.values_of(program.candidate.source) != ks.ParamMutator.values_of(parent.candidate.source)


@needs_opencl
def test_cli_evolve_and_report(tmp_path, small_task_dir):
    db = tmp_path / "cli.db"
    done = subprocess.run(
        _evolve_command(small_task_dir, db, 5, "--json"), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["evaluations"] == 5
    assert document["stop_reason"] == "budget"
    assert document["db"] == str(db)
    assert document["best_program_id"]
    assert "[5/5]" in done.stderr  # progress lines go to stderr with --json

    report = subprocess.run(
        [sys.executable, "-m", "kernelsmith", "report", "--db", str(db), "--json"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert report.returncode == 0, report.stderr
    summary = json.loads(report.stdout)
    assert summary["evaluations"] == 5
    assert summary["best"][0]["id"] == document["best_program_id"]
    assert summary["lineage"][0]["id"] == document["best_program_id"]
    assert summary["history"][-1]["evaluation"] == 5

    text = subprocess.run(
        [sys.executable, "-m", "kernelsmith", "report", "--db", str(db)], capture_output=True, text=True, timeout=120
    )
    assert text.returncode == 0
    assert "lineage of the best" in text.stdout

    missing = subprocess.run(
        [sys.executable, "-m", "kernelsmith", "report", "--db", str(tmp_path / "none.db")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert missing.returncode == 1
    assert "no run store" in missing.stderr


def _wait_for_evaluations(process, db: Path, count: int, timeout: float = 240.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the run ended early: {process.stderr.read() if process.stderr else ''}")
        if db.exists() and len(_store_counts(db)) >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"no {count} evaluations within {timeout} s")


@needs_opencl
def test_kill_9_then_resume_loses_nothing_and_repeats_nothing(tmp_path, small_task_dir):
    db = tmp_path / "killed.db"
    process = subprocess.Popen(
        _evolve_command(small_task_dir, db, 60), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        _wait_for_evaluations(process, db, 5)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
        process.stderr.close()
    before = _store_counts(db)
    assert len(before) >= 5
    con = sqlite3.connect(db)
    assert con.execute("SELECT status FROM runs").fetchone()[0] == "running"  # it never said goodbye
    con.close()

    target = len(before) + 4
    resumed = subprocess.run(
        _evolve_command(small_task_dir, db, target, "--resume", "--json"), capture_output=True, text=True, timeout=300
    )
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["evaluations"] == target

    after = _store_counts(db)
    assert after[: len(before)] == before, "no evaluated program lost"
    ids = [program_id for program_id, _ in after]
    assert len(ids) == len(set(ids)) == target, "no program evaluated twice"
    assert [sequence for _, sequence in after] == list(range(target))
    con = sqlite3.connect(db)
    assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 1
    assert con.execute("SELECT status FROM runs").fetchone()[0] == "finished"
    # Every evaluated child has its step; pending steps hold stored programs.
    assert con.execute(
        "SELECT count(*) FROM evaluations e WHERE NOT EXISTS (SELECT 1 FROM steps s WHERE s.evaluation_id = e.id)"
    ).fetchone()[0] == 0
    assert con.execute(
        "SELECT count(*) FROM steps s WHERE s.child_id IS NOT NULL AND NOT EXISTS "
        "(SELECT 1 FROM programs p WHERE p.run = s.run AND p.id = s.child_id)"
    ).fetchone()[0] == 0
    con.close()


@needs_opencl
def test_ctrl_c_stops_cleanly(tmp_path, small_task_dir):
    db = tmp_path / "interrupted.db"
    process = subprocess.Popen(
        _evolve_command(small_task_dir, db, 60), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    stdout, stderr = signal_when_ready(process, lambda: _wait_for_evaluations(process, db, 4), signal.SIGINT)
    assert process.returncode == 130, stderr
    assert "stopping" in stderr
    assert "stopped: stopped" in stdout
    con = sqlite3.connect(db)
    status, reason = con.execute("SELECT status, stop_reason FROM runs").fetchone()
    con.close()
    assert (status, reason) == ("stopped", "stopped")


@needs_opencl
def test_a_second_ctrl_c_aborts_and_marks_the_run_stopped(tmp_path, small_task_dir):
    db = tmp_path / "aborted.db"
    process = subprocess.Popen(
        _evolve_command(small_task_dir, db, 200), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        _wait_for_evaluations(process, db, 4)
        process.send_signal(signal.SIGINT)
        time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    con = sqlite3.connect(db)
    status, reason = con.execute("SELECT status, stop_reason FROM runs").fetchone()
    con.close()
    # The first Ctrl-C may already have ended the run ("stopped"); the second must not leave it "running".
    assert status == "stopped" and reason in ("aborted", "stopped"), reason


def test_a_python_mutator_chooses_its_parents_and_the_run_stops_when_none_is_left(tmp_path, small_task):
    mutator = TunablesOnlyMutator()
    config = config_for(tmp_path / "run.db", 200, islands=2, mutations_in_flight=1, language="opencl")
    result = ks.Evolution(small_task, ScoringEvaluator(), mutator, config).run()

    assert result.stop_reason == "no_new_candidates"
    assert "can work from" in result.stop_detail
    assert result.evaluations <= programs_in_space(small_task)
    assert mutator.task_names == {small_task.name}  # request.task is the run's task
    assert len(mutator.asked) == len(set(mutator.asked))  # can_mutate is asked once per program
    reference_id = ks.Candidate("opencl", small_task.references["opencl"].source).id()
    assert reference_id in mutator.asked
    con = sqlite3.connect(config.db_path)
    steps = con.execute("SELECT parent_ids, failure FROM steps WHERE selection != 'seed'").fetchall()
    con.close()
    assert steps and all(reference_id not in parents for parents, _ in steps)
    # A parent reported used up is not picked again: at most one "used up" step per program (the other failures
    # are children the novelty filter refused as near duplicates, which use nothing up).
    assert result.failed_proposals == sum(1 for _, failure in steps if failure)
    used_up = [parents for parents, failure in steps if failure == "no unexplored neighbour"]
    assert used_up and len(used_up) == len(set(used_up)) <= result.evaluations - 1
    assert all(failure in ("", "no unexplored neighbour") or failure.startswith("near duplicate of program")
               for _, failure in steps)


def test_program_ids_and_the_requests_task_are_read_only_views():
    candidate = ks.Candidate("opencl", "__kernel void k(__global float* y) { y[0] = 1.0f; }")
    evaluation = ks.Evaluation()
    evaluation.candidate_id = "named-otherwise"
    program = ks.Program(candidate, evaluation, island=1)
    assert program.id == candidate.id()
    assert program.evaluation.candidate_id == candidate.id()
    with pytest.raises(AttributeError):
        program.candidate = candidate  # the id would go stale
    program.candidate.source = "changed"  # a copy: the program keeps its code
    assert program.candidate.source == candidate.source

    request = ks.MutationRequest()
    with pytest.raises(ks.ValidationError, match="no task"):
        request.task
    request.task = ks.Task.load("relu")
    request.task.name = "changed"  # a copy of the shared task
    assert request.task.name == "relu"
    assert ks.ParamMutator().can_mutate(ks.Candidate("opencl", request.task.seeds["opencl"].source))
    assert not ks.ParamMutator().can_mutate(ks.Candidate("opencl", request.task.references["opencl"].source))


def test_resume_needs_a_store_with_a_run_to_resume(tmp_path, small_task_dir, capsys):
    """`evolve --resume` on a mistyped path, an empty file, a store with no run, or a store whose runs are of
    another task fails at once, naming the path and how to start a new run; nothing is created."""
    from kernelsmith.cli import main

    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    no_run = tmp_path / "no_run.db"
    ks.RunStore(str(no_run))  # a store with its schema and no run
    other_task = tmp_path / "other.db"
    store = ks.RunStore(str(other_task))
    info = ks.RunInfo()
    info.task_name, info.config_json, info.task_json = "softmax", "{}", "{}"
    store.create_run(info)
    del store
    cases = {
        tmp_path / "mistyped.db": "no run store at",
        empty: "is an empty file",
        no_run: "holds no run of task relu_small",
        other_task: "holds no run of task relu_small (runs of tasks: softmax)",
    }
    for path, words in cases.items():
        status = main(["evolve", "--task", str(small_task_dir), "--backend", "opencl", "--resume", "--db", str(path)])
        error = capsys.readouterr().err
        assert status == 1, error
        assert words in error and str(path) in error and "drop --resume" in error, error
    assert not (tmp_path / "mistyped.db").exists()
    assert empty.read_bytes() == b""
    assert ks.RunStore(str(no_run), True).runs() == []


def test_bad_llm_timeout_and_retries_are_refused(tmp_path, small_task_dir, capsys):
    from kernelsmith.cli import main

    for flag, value in (("--llm-timeout", "0"), ("--llm-retries", "-1")):
        status = main(["evolve", "--task", str(small_task_dir), "--db", str(tmp_path / "x.db"), flag, value])
        assert status == 1
        assert flag in capsys.readouterr().err
    assert not (tmp_path / "x.db").exists()


def test_the_triton_example_of_docs_triton_md_is_refused_on_another_backend(tmp_path, monkeypatch):
    """docs/triton.md's EvolutionConfig.language example, run as written: on a machine whose best backend is
    OpenCL, run() refuses Triton naming both backends before anything is evaluated."""
    import re

    backends = {b.name: b.available for b in ks.devices()}
    if backends.get("cuda") or not backends.get("opencl"):
        pytest.skip("needs OpenCL as the best backend, without CUDA")
    doc = (Path(__file__).resolve().parents[2] / "docs" / "triton.md").read_text()
    block = re.findall(r"^```python\n(.*?)^```", doc, flags=re.S | re.M)[-1]
    assert 'config.language = "triton"' in block
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(block, "docs/triton.md", "exec"), namespace)  # noqa: S102  (the documentation's own example)
    with pytest.raises(ks.ValidationError, match="^triton runs on the cuda backend; this run uses opencl"):
        namespace["evolution"].run()


class ModeEvaluator(ScoringEvaluator):
    """ScoringEvaluator's scores, measured in `mode`; in strict mode the fastest programs (BLOCK * ITEMS of 1024
    or more) are incorrect: a race only strict mode's checks find."""

    def __init__(self, mode: str):
        super().__init__()
        self.mode = mode

    def evaluate(self, task, candidate):
        evaluation = super().evaluate(task, candidate)
        if evaluation.status == ks.Status.ok:
            timing = ks.TimingReport()
            timing.mode = self.mode
            evaluation.timing = timing
            values = ks.ParamMutator.values_of(candidate.source)
            if self.mode == "strict" and values.get("BLOCK", 0) * values.get("ITEMS", 0) >= 1024:
                evaluation.status = ks.Status.incorrect
                evaluation.message = "incorrect: the outputs changed with the order of the blocks"
                evaluation.fitness = 0.0
                evaluation.speedup = 0.0
        return evaluation


def test_a_screened_leader_is_confirmed_by_the_strict_confirmer_before_it_leads(tmp_path, small_task):
    config = ks.EvolutionConfig()
    config.db_path = str(tmp_path / "confirm.db")
    config.budget = 16
    config.seed = 5
    strict = ModeEvaluator("strict")
    evolution = ks.Evolution(small_task, ModeEvaluator("screen"), ks.ParamMutator(), config)
    evolution.set_confirmer(strict)
    progress = []
    evolution.on_progress(progress.append)
    result = evolution.run()

    assert result.evaluations == 16  # confirmations are not counted in the budget
    assert result.confirmations == len(strict.seen) > 0
    assert result.best is not None
    assert result.best.evaluation.timing.mode == "strict"
    store = ks.RunStore(config.db_path, read_only=True)
    standing = {record.program_id: record.evaluation for record in store.evaluations(result.run_id)}
    screenings = store.screenings(result.run_id)
    assert len(screenings) == result.confirmations
    for screening in screenings:
        assert screening.evaluation.timing.mode == "screen"
        assert standing[screening.program_id].timing is None or standing[screening.program_id].timing.mode == "strict"
    for step in progress:
        if step.best_program_id:
            assert standing[step.best_program_id].timing.mode == "strict"
            assert standing[step.best_program_id].status == ks.Status.ok
    refuted = [step for step in progress if step.confirmation == "refuted"]
    assert refuted and result.refuted == len(refuted)
    assert all(step.program_id != result.best.id for step in refuted)
    assert all(standing[step.program_id].status == ks.Status.incorrect for step in refuted)


class TwoModeEvaluator(ModeEvaluator):
    """Screens in evaluate() and confirms in its own confirm_batch(), as a user's evaluator with a cheap screening
    and a trusted strict measurement would."""

    def __init__(self):
        super().__init__("screen")
        self.strict = ModeEvaluator("strict")
        self.confirmed = []

    def confirm_batch(self, task, candidates):
        self.confirmed.extend(candidate.id() for candidate in candidates)
        return [self.strict.evaluate(task, candidate) for candidate in candidates]


def test_a_python_evaluators_own_confirm_batch_confirms_the_would_be_leaders(tmp_path, small_task):
    """Without set_confirmer, the run's evaluator confirms: a Python subclass's confirm_batch override is what
    the search calls, and only its strict evaluations lead."""
    config = ks.EvolutionConfig()
    config.db_path = str(tmp_path / "own.db")
    config.budget = 12
    config.seed = 5
    evaluator = TwoModeEvaluator()
    evolution = ks.Evolution(small_task, evaluator, ks.ParamMutator(), config)
    result = evolution.run()
    assert result.confirmations == len(evaluator.confirmed) > 0
    assert result.best is not None and result.best.id in evaluator.confirmed
    assert result.best.evaluation.timing.mode == "strict"
    assert result.unconfirmed == 0
