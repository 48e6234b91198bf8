"""KernelBench's metrics (kernelsmith.kernelbench.metrics) on hand-computed examples, and how the report
picks each problem's best evaluation from stored evaluations (kernelsmith.kernelbench.report)."""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace
from pathlib import Path

import pytest

from kernelsmith.kernelbench.metrics import (
    FAST_P,
    ProblemResult,
    amsr,
    correctness_rate,
    fast_p,
    fast_p_name,
    geometric_mean_speedup,
    summarize,
)
from kernelsmith.kernelbench.report import EAGER, REFERENCE, evaluation_speedups, problem_id, problem_row
from kernelsmith.store import RunEvaluations, StoredEvaluation


def _problems():
    """Four attempted problems and one not attempted:
    A correct, 2.5x over eager, 1.25x over compile, 0.8x over max-autotune;
    B correct, exactly 1.0x over eager, 0.5x over compile, max-autotune unknown;
    C correct, exactly 1.2x over eager, compile and max-autotune unknown;
    D attempted, no correct kernel; E not attempted (left out of every denominator)."""
    return [
        ProblemResult("kb_l1_1_a", 1, correct=True, eager=2.5, compile=1.25, max_autotune=0.8),
        ProblemResult("kb_l1_2_b", 1, correct=True, eager=1.0, compile=0.5),
        ProblemResult("kb_l1_3_c", 1, correct=True, eager=1.2),
        ProblemResult("kb_l1_4_d", 1, correct=False),
        ProblemResult("kb_l1_5_e", 1, attempted=False),
    ]


def test_fast_p_counts_correct_problems_strictly_faster_than_p_over_all_attempted():
    problems = _problems()
    # eager: 0 -> A, B, C; 1 -> A, C (B is exactly 1); 1.2 -> A (C is exactly 1.2); 2 -> A.
    assert [fast_p(problems, p, "eager") for p in FAST_P] == [0.75, 0.5, 0.25, 0.25]
    # compile: C's is unknown, so it is not fast even at p = 0; 0 -> A, B; 1 -> A; 1.2 -> A (1.25); 2 -> none.
    assert [fast_p(problems, p, "compile") for p in FAST_P] == [0.5, 0.25, 0.25, 0.0]
    assert [fast_p(problems, p, "max_autotune") for p in FAST_P] == [0.25, 0.0, 0.0, 0.0]
    assert fast_p_name(1.2) == "fast_1.2" and fast_p_name(0.0) == "fast_0" and fast_p_name(2.0) == "fast_2"


def test_fast_0_over_eager_is_the_correctness_rate_when_every_speedup_is_known():
    problems = _problems()
    assert correctness_rate(problems) == 0.75
    assert fast_p(problems, 0.0, "eager") == correctness_rate(problems)


def test_geometric_means_are_over_correct_problems_with_a_known_speedup():
    problems = _problems()
    geomean, n = geometric_mean_speedup(problems, "eager")
    assert n == 3 and geomean == pytest.approx(3.0 ** (1 / 3))  # (2.5 * 1.0 * 1.2) ** (1/3)
    geomean, n = geometric_mean_speedup(problems, "compile")
    assert n == 2 and geomean == pytest.approx(math.sqrt(0.625))  # (1.25 * 0.5) ** (1/2)
    geomean, n = geometric_mean_speedup(problems, "max_autotune")
    assert n == 1 and geomean == pytest.approx(0.8)


def test_amsr_counts_a_problem_without_a_correct_kernel_as_zero():
    assert amsr(_problems()) == pytest.approx((2.5 + 1.0 + 1.2 + 0.0) / 4)


def test_summarize_gathers_every_metric():
    metrics = summarize(_problems())
    assert (metrics.attempted, metrics.correct) == (4, 3)
    assert metrics.correctness_rate == 0.75
    assert metrics.amsr == pytest.approx(1.175)
    assert metrics.baselines["compile"].missing == 1  # C
    assert metrics.baselines["max_autotune"].missing == 2  # B, C
    assert metrics.baselines["eager"].missing == 0
    document = metrics.as_dict()
    assert document["baselines"]["eager"]["fast_p"] == {"fast_0": 0.75, "fast_1": 0.5, "fast_1.2": 0.25, "fast_2": 0.25}
    assert document["baselines"]["compile"]["geomean_problems"] == 2
    assert document["baselines"]["compile"]["correct_without_speedup"] == 1


def test_no_problem_correct():
    problems = [ProblemResult("kb_l1_1_a", 1), ProblemResult("kb_l1_2_b", 1)]
    metrics = summarize(problems)
    assert metrics.correctness_rate == 0.0
    assert metrics.amsr == 0.0
    for baseline in metrics.baselines.values():
        assert list(baseline.fast_p.values()) == [0.0, 0.0, 0.0, 0.0]
        assert (baseline.geomean, baseline.geomean_n) == (None, 0)


def test_nothing_attempted_has_no_rates():
    metrics = summarize([ProblemResult("kb_l1_1_a", 1, attempted=False)])
    assert metrics.attempted == 0
    assert metrics.correctness_rate is None and metrics.amsr is None
    assert metrics.baselines["eager"].fast_p[1.0] is None
    assert summarize([]).correctness_rate is None


def test_missing_compile_baseline_keeps_the_problem_in_the_denominator():
    problems = [ProblemResult("kb_l1_1_a", 1, correct=True, eager=3.0),
                ProblemResult("kb_l1_2_b", 1, correct=True, eager=0.5, compile=4.0)]
    assert fast_p(problems, 1.0, "compile") == 0.5
    assert fast_p(problems, 1.0, "eager") == 0.5
    assert geometric_mean_speedup(problems, "compile") == (4.0, 1)
    assert amsr(problems) == pytest.approx(1.75)


def test_bad_results_are_refused_with_the_reason():
    with pytest.raises(ValueError, match="no correct kernel"):
        ProblemResult("kb_l1_1_a", 1, correct=False, eager=2.0)
    for bad in (0.0, -1.0, math.nan, math.inf):
        with pytest.raises(ValueError, match="finite number > 0"):
            ProblemResult("kb_l1_1_a", 1, correct=True, eager=bad)
    with pytest.raises(ValueError, match="attempted=False"):
        ProblemResult("kb_l1_1_a", 1, attempted=False, correct=True)
    with pytest.raises(ValueError, match="named more than once: kb_l1_1_a"):
        summarize([ProblemResult("kb_l1_1_a", 1), ProblemResult("kb_l1_1_a", 1)])
    with pytest.raises(ValueError, match="unknown baseline"):
        fast_p(_problems(), 1.0, "cudnn")


# ---- the report's choice of each problem's best evaluation


def _evaluation(sequence, status="ok", speedup=1.0, speedups=None, program=None, flags=(), baseline_errors=None,
                mode="strict"):
    data = {"status": status, "speedup": speedup, "integrity": {"flags": list(flags)},
            "timing": {"mode": mode} if status == "ok" else None}
    if speedups is not None:
        data["speedups"] = speedups
        data["baseline_errors"] = baseline_errors or {}
    return StoredEvaluation(id=sequence + 1, program_id=program or f"p{sequence}", sequence=sequence, status=status,
                            speedup=speedup, fitness=speedup, message=status, backend="cuda", device="H100", data=data)


def _run(evaluations, origins=None, run_id=1, status="finished", stop_reason="budget"):
    return RunEvaluations(store="run.db", id=run_id, task_name="kb_l2_7_gemm_relu", language="cuda", backend="cuda",
                          device="H100", mutator="param", status=status, stop_reason=stop_reason, error="",
                          evaluations=evaluations, origins=origins or {})


def test_problem_names_give_level_and_number():
    assert problem_id("kb_l1_19_relu") == (1, 19)
    assert problem_id("kb_l2_100_gemm_add_relu") == (2, 100)
    assert problem_id("relu") is None and problem_id("kb_x1_1_a") is None


def test_speedups_come_from_speedups_and_else_from_speedup_over_the_reference():
    kind, speedups = evaluation_speedups(_evaluation(0, speedup=2.0, speedups={
        "eager": 2.0, "compile": 1.5, "compile_max_autotune": 0.0}))
    assert kind == EAGER and speedups == {"eager": 2.0, "compile": 1.5, "max_autotune": None}  # 0: that baseline failed
    kind, speedups = evaluation_speedups(_evaluation(0, speedup=1.7))  # schema 2: no "speedups"
    assert kind == REFERENCE and speedups == {"eager": 1.7, "compile": None, "max_autotune": None}
    # Schema 3 for a task checked against a reference kernel.
    kind, speedups = evaluation_speedups(_evaluation(0, speedup=1.7, speedups={"reference": 1.7}))
    assert kind == REFERENCE and speedups["eager"] == 1.7


def test_the_best_correct_evaluation_is_the_fastest_over_eager_and_the_reference_program_is_left_out():
    run = _run([
        _evaluation(0, speedup=1.0, program="ref"),  # the reference: a baseline, not a solution
        _evaluation(1, speedup=3.0, speedups={"eager": 3.0, "compile": 0.9, "compile_max_autotune": 0.7},
                    flags=["nondeterministic"]),
        _evaluation(2, status="incorrect", speedup=0.0),
        _evaluation(3, speedup=2.0, speedups={"eager": 2.0, "compile": 0.6, "compile_max_autotune": 0.5}),
    ], origins={"ref": "reference"})
    row = problem_row("kb_l2_7_gemm_relu", [run])
    assert (row.level, row.number, row.evaluations, row.correct_evaluations) == (2, 7, 3, 2)
    assert row.baseline == EAGER
    assert (row.result.eager, row.result.compile, row.result.max_autotune) == (3.0, 0.9, 0.7)
    assert row.best["program_id"] == "p1" and row.best["evaluation"] == 2
    assert row.status == "ok [nondeterministic]"


def test_eager_speedups_outrank_reference_speedups_across_runs():
    old = _run([_evaluation(0, speedup=5.0)], run_id=1)  # a schema-2 run: 5x over the reference kernel
    new = _run([_evaluation(0, speedup=1.5, speedups={"eager": 1.5, "compile": 1.1, "compile_max_autotune": 1.0})],
               run_id=2)
    row = problem_row("kb_l2_7_gemm_relu", [old, new])
    assert row.baseline == EAGER and row.result.eager == 1.5 and row.best["run"] == 2
    assert len(row.runs) == 2 and row.correct_evaluations == 2


def test_a_problem_without_a_correct_kernel_says_why():
    run = _run([_evaluation(0, status="incorrect", speedup=0.0), _evaluation(1, status="compile_error", speedup=0.0),
                _evaluation(2, status="incorrect", speedup=0.0)])
    row = problem_row("kb_l2_7_gemm_relu", [run])
    assert not row.result.correct and row.best is None and row.baseline == ""
    assert row.status == "no correct kernel: incorrect x2, compile_error x1; latest: incorrect"
    empty = problem_row("kb_l2_7_gemm_relu", [_run([], status="running", stop_reason="")])
    assert empty.status == "no evaluation stored (run 1 running)"
    failed = replace(_run([], status="failed", stop_reason="error"), error="task has no reference in opencl")
    assert problem_row("kb_l2_7_gemm_relu", [failed]).status == (
        "no evaluation stored: run 1 failed: task has no reference in opencl")


def test_the_metrics_example_of_the_docs_runs_as_written():
    docs = Path(__file__).resolve().parents[2] / "docs"
    # The section lives in docs/kernelbench-report.md until it joins docs/kernelbench.md.
    pages = [docs / "kernelbench-report.md", docs / "kernelbench.md"]
    blocks = [block for page in pages if page.exists()
              for block in re.findall(r"^```python\n(.*?)^```", page.read_text(), flags=re.S | re.M)
              if "kernelsmith.kernelbench.metrics" in block]
    assert blocks, "the metrics example is missing from the docs"
    for block in blocks:
        exec(compile(block, "docs: the KernelBench metrics example", "exec"), {})  # noqa: S102


def test_the_notes_give_why_a_baseline_is_unknown():
    from kernelsmith.kernelbench.report import _notes, _timed_baselines

    run = _run([_evaluation(0, speedup=2.0, speedups={"eager": 2.0, "compile": 0.0},
                            baseline_errors={"compile": "torch.compile failed: InductorError"})])
    row = problem_row("kb_l2_7_gemm_relu", [run])
    assert (row.result.eager, row.result.compile, row.result.max_autotune) == (2.0, None, None)
    # compile was tried (it failed); max-autotune was never asked for.
    assert _timed_baselines([row]) == ("eager", "compile")
    notes = _notes([row], {}, None, _timed_baselines([row]))
    assert ("the torch.compile baseline is unknown (failed or not timed) for kb_l2_7_gemm_relu (torch.compile "
            "failed: InductorError): counted as not faster in fast_p over it") in notes
    assert ("not timed in these runs, so left out: torch.compile max-autotune (choose the baselines with "
            "`kernelsmith kernelbench run --baselines`)") in notes
    assert not any(note.startswith("the torch.compile max-autotune baseline is unknown") for note in notes)


def test_a_baseline_no_run_timed_has_no_column_and_no_metrics():
    from kernelsmith.kernelbench.report import Report, _timed_baselines, format_json, format_report

    rows = [problem_row("kb_l2_7_gemm_relu", [_run([_evaluation(0, speedup=2.0, speedups={"eager": 2.0, "compile": 1.5})])])]
    timed = _timed_baselines(rows)
    assert timed == ("eager", "compile")
    report = Report(["run.db"], None, rows, {"all": summarize([r.result for r in rows])}, baselines=timed)
    text = format_report(report)
    # Counted as never faster, max-autotune would print fast_0 = 0% beside a correct kernel.
    assert "max-autotune" not in text.split("notes:")[0]
    assert "over compile" in text and "1.500x" in text
    document = json.loads(format_json(report))
    assert document["baselines_timed"] == ["eager", "compile"]
    assert document["metrics"]["all"]["baselines"]["max_autotune"] is None
    assert document["metrics"]["all"]["baselines"]["compile"]["fast_p"]["fast_1"] == 1.0


def test_only_confirmed_evaluations_count_and_a_faster_unconfirmed_one_is_shown_apart():
    run = _run([
        _evaluation(0, speedup=6.9, speedups={"eager": 6.9}),
        _evaluation(1, speedup=92.3, speedups={"eager": 92.3}, flags=["speedup_above_threshold", "speedup_unconfirmed"]),
        _evaluation(2, speedup=40.0, speedups={"eager": 40.0}, mode="screen"),
        _evaluation(3, speedup=9.0, speedups={"eager": 9.0}, flags=["race"]),
    ])
    row = problem_row("kb_l2_7_gemm_relu", [run])
    assert row.result.eager == 6.9 and row.best["program_id"] == "p0"
    assert (row.correct_evaluations, row.confirmed_evaluations) == (4, 1)
    assert row.unconfirmed["program_id"] == "p1" and row.unconfirmed["reasons"] == ["speedup_unconfirmed"]
    metrics = summarize([row.result])
    assert metrics.amsr == 6.9 and metrics.baselines["eager"].geomean == 6.9
    # Nothing confirmed: not correct for the metrics, with why.
    screened = problem_row("kb_l2_7_gemm_relu", [_run([_evaluation(0, speedup=3.0, mode="screen")])])
    assert not screened.result.correct and screened.best is None
    assert screened.status == "no confirmed kernel: 1 correct, none confirmed (screen mode x1)"
    assert screened.unconfirmed["reasons"] == ["screen mode"]
    assert summarize([screened.result]).amsr == 0.0
