"""The notebook layer: evolve() with a progress bar on PoCL, Run reading the store (also while a run
writes), the plots, the HTML views, and the fallbacks without tqdm or pandas."""

from __future__ import annotations

import json
import math
import sys

import pytest

import kernelsmith as ks

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def opencl_available() -> bool:
    try:
        return any(b.name == "opencl" and b.available for b in ks.devices())
    except ks.Error:
        return False


needs_opencl = pytest.mark.skipif(not opencl_available(), reason="no OpenCL device (install pocl-opencl-icd)")


def small_relu() -> "ks.Task":
    document = json.loads(ks.Task.load("relu").to_json())
    document["name"] = "relu_small"
    document["sizes"] = {"N": 65536}
    document["check_sizes"] = [{"name": "odd_1023", "sizes": {"N": 1023}}]
    return ks.Task.from_json(json.dumps(document))


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    db = tmp_path_factory.mktemp("notebook") / "run.db"
    if not opencl_available():
        pytest.skip("no OpenCL device (install pocl-opencl-icd)")
    return ks.evolve(small_relu(), backend="opencl", budget=7, db=db, progress=True, islands=2, seed=5)


@needs_opencl
def test_evolve_returns_a_run_that_reads_every_evaluation(finished_run):
    assert finished_run.result.evaluations == 7
    assert not finished_run.running
    programs = finished_run.programs()
    rows = programs.to_dict("records") if hasattr(programs, "to_dict") else programs
    assert [row["sequence"] for row in rows] == list(range(7))
    assert rows[0]["origin"] == "reference"
    assert {row["island"] for row in rows} == {0, 1}
    info = finished_run.info()
    assert info["status"] == "finished" and info["backend"] == "opencl"
    assert info["config"]["budget"] == 7


@needs_opencl
def test_best_is_the_fittest_correct_program(finished_run):
    best = finished_run.best()
    rows = finished_run.records()
    correct = [row for row in rows if row["status"] == "ok"]
    assert best is not None and best.correct
    assert best.id == max(correct, key=lambda row: (row["fitness"], -row["sequence"]))["id"]
    assert best.id == finished_run.result.best.id
    assert best.evaluation.speedup == pytest.approx(finished_run.result.best_speedup)
    assert best.candidate.id() == best.id  # the stored source hashes back to its id


@needs_opencl
def test_speedup_history_is_a_running_maximum(finished_run):
    history = finished_run.speedup_history()
    points = history.to_dict("records") if hasattr(history, "to_dict") else history
    best_so_far = 0.0
    for point in points:
        if point["status"] == "ok":
            best_so_far = max(best_so_far, point["speedup"])
        else:
            assert math.isnan(point["speedup"])
        assert point["best_speedup"] == pytest.approx(best_so_far)
        assert point["island_best_speedup"] <= point["best_speedup"] + 1e-12
    assert points[-1]["best_speedup"] == pytest.approx(finished_run.result.best_speedup)


@needs_opencl
def test_plots_draw_the_run(finished_run):
    ax = finished_run.plot_progress()
    labels = [line.get_label() for line in ax.get_lines()]
    assert "best" in labels and "island 0" in labels and "island 1" in labels
    best_line = next(line for line in ax.get_lines() if line.get_label() == "best")
    assert max(best_line.get_ydata()) == pytest.approx(finished_run.result.best_speedup)

    cells = finished_run.archive_cells()
    assert cells and all(cell["fitness"] > 0 for cell in cells)
    ax = finished_run.plot_archive()
    grid = ax.images[0].get_array()
    assert int((~grid.mask).sum() if hasattr(grid, "mask") else (~(grid != grid)).sum()) >= 1
    assert max(grid.compressed()) == pytest.approx(max(cell["fitness"] for cell in cells))

    lineage = finished_run.lineage()
    assert lineage[-1]["id"] == finished_run.best().id
    for node in lineage[1:]:
        assert set(node["parent_ids"]) & {earlier["id"] for earlier in lineage}
    ax = finished_run.plot_lineage()
    assert len(ax.collections[0].get_offsets()) == len(lineage)
    plt.close("all")


def integer_ticks(axis) -> list:
    """The ticks matplotlib draws within the axis's view (after a draw), which must be whole numbers."""
    low, high = sorted(axis.get_view_interval())
    return [tick for tick in axis.get_majorticklocs() if low - 1e-9 <= tick <= high + 1e-9]


@needs_opencl
def test_the_axes_of_counted_things_have_whole_ticks(finished_run):
    # Generations and evaluations are counted: a tick at generation 0.5 or evaluation 2.5 means nothing.
    ax = finished_run.plot_lineage()
    ax.figure.canvas.draw()
    ticks = integer_ticks(ax.xaxis)
    assert ticks and all(tick == int(tick) for tick in ticks), ticks
    ax = finished_run.plot_progress()
    ax.figure.canvas.draw()
    ticks = integer_ticks(ax.xaxis)
    assert ticks and all(tick == int(tick) for tick in ticks), ticks
    # Evaluations are numbered from 1, as `kernelsmith report` numbers them; each island's line starts with the
    # reference, which the engine puts on every island.
    history = finished_run.speedup_history()
    points = history.to_dict("records") if hasattr(history, "to_dict") else history
    reference = points[0]
    assert "_island_bests" not in reference
    for island in (0, 1):
        line = next(line for line in ax.get_lines() if line.get_label() == f"island {island}")
        assert line.get_xdata()[0] == 1
        if reference["confirmed"]:
            assert line.get_ydata()[0] == pytest.approx(reference["speedup"])
    plt.close("all")


@needs_opencl
def test_run_open_reads_while_a_background_run_writes(tmp_path):
    db = tmp_path / "live.db"
    run = ks.evolve(small_relu(), backend="opencl", budget=6, db=db, progress=False, background=True, seed=2)
    try:
        seen = []
        while run.running:
            if db.exists():
                try:
                    seen.append(ks.Run.open(db).evaluation_count())
                except LookupError:  # the run row is not written yet
                    pass
        run.wait()
    finally:
        run.stop()
    assert seen == sorted(seen)  # a reader never sees rows disappear
    reopened = ks.Run.open(db)
    assert reopened.run_id == run.result.run_id
    assert reopened.evaluation_count() == 6


def test_run_open_of_a_missing_store_says_so(tmp_path):
    with pytest.raises(FileNotFoundError, match="no run store"):
        ks.Run.open(tmp_path / "absent.db")


def test_an_unknown_config_field_is_named():
    with pytest.raises(TypeError, match="no field 'islandz'"):
        ks.evolve(small_relu(), budget=3, db=":memory:", islandz=2)


def test_evaluation_html_shows_status_speedup_and_first_failure():
    evaluation = ks.Evaluation()
    evaluation.candidate_id = "abc"
    evaluation.status = ks.Status.ok
    evaluation.message = "ok <fast>"
    evaluation.speedup = 2.5
    timing = ks.TimingReport()
    timing.median_ms = 0.125
    timing.noise = 0.02
    timing.samples = 9
    evaluation.timing = timing
    page = evaluation._repr_html_()
    assert "2.5x" in page and "0.125 ms" in page and "ok &lt;fast&gt;" in page and "<fast>" not in page

    failed = ks.Evaluation()
    failed.status = ks.Status.compile_error
    failed.message = "compile error"
    report = ks.CompileReport()
    report.log = "note: in kernel\n<source>:3:5: error: use of undeclared identifier 'q'\n"
    failed.compile = report
    page = ks.evaluation_html(failed)
    assert "compile_error" in page and "undeclared identifier" in page and "first failure" in page
    assert "speedup" not in page


def test_candidate_html_escapes_and_highlights_the_plan():
    source = ("// @tune BLOCK = 64 in {64, 128}\n// @launch k<<<ceil_div(N, BLOCK), BLOCK>>>(x, N)\n"
              "__kernel void k(__global float* x, int N) { if (get_global_id(0) < N) x[0] = 1; }\n")
    page = ks.Candidate("opencl", source)._repr_html_()
    assert "&lt;&lt;&lt;" in page and "<<<" not in page
    highlighted = [line for line in page.split("\n") if "background" in line]
    assert len(highlighted) == 2 and "@tune" in highlighted[0] and "@launch" in highlighted[1]


@needs_opencl
def test_without_tqdm_and_pandas_it_still_works(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    monkeypatch.setitem(sys.modules, "pandas", None)
    run = ks.evolve(small_relu(), backend="opencl", budget=3, db=tmp_path / "plain.db", islands=1)
    assert "tqdm is not installed" in capsys.readouterr().out
    programs = run.programs()
    assert isinstance(programs, list) and len(programs) == 3 and programs[0]["origin"] == "reference"


class SlowScoringEvaluator(ks.Evaluator):
    """No device: every candidate is correct, scored from its @tune values, after a short sleep."""

    def evaluate(self, task, candidate):
        import time

        time.sleep(0.05)
        evaluation = ks.Evaluation()
        evaluation.task = task.name
        evaluation.status = ks.Status.ok
        values = ks.ParamMutator.values_of(candidate.source)
        evaluation.speedup = 1.0 + values.get("BLOCK", 0) * values.get("ITEMS", 0) / 4096.0
        evaluation.fitness = evaluation.speedup
        return evaluation

    def backend_name(self):
        return "opencl"


def test_an_interrupt_stops_the_run_cleanly(tmp_path):
    import _thread
    import threading

    db = tmp_path / "interrupted.db"
    timer = threading.Timer(1.0, _thread.interrupt_main)
    timer.start()
    try:
        run = ks.evolve(small_relu(), budget=10000, db=db, evaluator=SlowScoringEvaluator(), progress=False)
    finally:
        timer.cancel()
    assert not run.running
    assert run.info()["status"] == "stopped"
    count = run.evaluation_count()
    assert 0 < count < 10000
    assert count == run.result.evaluations  # the store holds every evaluation the engine finished
