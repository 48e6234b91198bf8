"""bench/bench_model_new.py on the CPU (C++ extension candidates): both sides run the same ModelNew files and
are correct, kernelsmith's second candidate with the same extension loads it prebuilt, and the report holds
both sides' wall times and their ratio (whatever its value: tests never assert timing ratios)."""

from __future__ import annotations

import json
import pathlib
import sys

import pytest

import kernelsmith as ks
from backends import needs_opencl

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import bench_model_new as bench  # noqa: E402

pytest.importorskip("torch", reason="ModelNew candidates need torch (pip install kernelsmith[torch])")


def test_the_candidates_of_each_kind_are_distinct_files_sharing_extensions():
    for kind in bench.KINDS:
        sources = [bench.candidate_source(kind, index, 2) for index in range(4)]
        assert len(set(sources)) == 4 and all("class ModelNew(nn.Module)" in s for s in sources)
    # Candidates 0 and 2 share a kernel and differ in their glue; 0 and 1 differ in their kernel.
    cpp = [bench.candidate_source("cpp", index, 2) for index in range(3)]
    assert cpp[0].split("class ModelNew")[0] == cpp[2].split("class ModelNew")[0]
    assert cpp[0].split("class ModelNew")[0] != cpp[1].split("class ModelNew")[0]


@needs_opencl
def test_the_benchmark_runs_both_ways_on_the_cpu(tmp_path, capsys):
    out = tmp_path / "report.json"
    code = bench.main(["--kind", "cpp", "--candidates", "2", "--distinct", "1", "--baseline", "1", "--no-target",
                       "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    report = json.loads(out.read_text())
    assert [r["status"] for r in report["kernelsmith"]["evaluations"]] == ["ok", "ok"]
    way = report["KernelBench way"]
    assert len(way) == 1 and way[0]["correct"] and way[0]["returncode"] == 0 and way[0]["build_s"] > 0
    if ks.sandbox_status().enabled:
        assert all(r["prebuilt"] for r in report["kernelsmith"]["evaluations"]), report["kernelsmith"]
    assert report["ratio"] > 0
    assert "mean wall s / candidate" in printed and "KernelBench way" in printed
