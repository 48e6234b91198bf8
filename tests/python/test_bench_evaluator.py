"""bench/bench_evaluator.py's throughput pass through a real evaluator (PoCL): each kernel's record explains its
cost (samples on both sides, how they were taken, a re-measurement), and the pass's summary counts the
re-measurements and names the slowest evaluations."""

from __future__ import annotations

import pathlib
import sys
from types import SimpleNamespace

import kernelsmith as ks

from backends import fast_opencl_evaluator, needs_opencl

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import bench_evaluator as be  # noqa: E402


@needs_opencl
def test_a_pass_records_why_each_evaluation_cost_what_it_did(tmp_path, capsys):
    # Every speedup is suspicious: each evaluation is measured again.
    evaluator = fast_opencl_evaluator(tmp_path, suspicious_speedup=1e-3, strict_min_samples=7)

    folder = ROOT / "tasks" / "relu"
    task = SimpleNamespace(handle=ks.Task.load(str(folder)))
    source = (folder / "reference.cl").read_text()
    candidates = [SimpleNamespace(task=task, key=f"relu/{label}",
                                  handle=be.candidate_handle(ks, SimpleNamespace(language="opencl", label=label),
                                                             source + f"\n// {label}\n"))
                  for label in ("seed", "variant")]
    result = be.evaluate_all(evaluator, [task], {id(c): c.handle for c in candidates}, candidates)

    assert result["evaluations"] == 2 and result["statuses"] == {"ok": 2}
    for kernel in result["kernels"]:
        assert "remeasured" in kernel["flags"] and "speedup_above_threshold" in kernel["flags"]
        # The re-measurement replaces a screened timing: strict_min_samples samples on each side.
        assert kernel["timing"]["samples"] == 7 and kernel["baseline_timing"]["samples"] == 7
        assert kernel["timing"]["median_ms"] > 0 and kernel["timing"]["sampling"]
    be.print_pass("cold", result)
    printed = capsys.readouterr().out
    assert "suspicious speedups measured again: 2 of 2" in printed
    assert "slowest: relu/" in printed
