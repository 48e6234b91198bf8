"""The examples run as a user runs them: the quickstart notebook through a Jupyter kernel, the custom
mutator and evaluator scripts as programs, each with a tiny budget on the best available backend."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import kernelsmith as ks

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def backend_available() -> bool:
    try:
        return any(b.available for b in ks.devices())
    except ks.Error:
        return False


needs_backend = pytest.mark.skipif(not backend_available(), reason="no CUDA or OpenCL device (install pocl-opencl-icd)")


def package_environment() -> dict:
    """The environment of a child process that imports this same kernelsmith package."""
    environment = dict(os.environ)
    package_root = str(Path(ks.__file__).parent.parent)
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, environment.get("PYTHONPATH")]))
    environment["MPLBACKEND"] = "Agg"
    return environment


def outputs_text(notebook) -> str:
    parts = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            parts.append(output.get("text", ""))
            for value in output.get("data", {}).values():
                parts.append(value if isinstance(value, str) else "")
    return "\n".join(parts)


@needs_backend
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # jupyter_client / zmq internals
def test_quickstart_notebook_runs_and_shows_a_speedup(tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    for name, value in package_environment().items():
        monkeypatch.setenv(name, value)  # the kernel process inherits it
    monkeypatch.delenv("MPLBACKEND")  # the kernel's inline backend draws the figures into the outputs
    notebook = nbformat.read(EXAMPLES / "quickstart.ipynb", as_version=4)
    client = nbclient.NotebookClient(notebook, kernel_name="python3", timeout=300,
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    text = outputs_text(notebook)
    assert "best speedup:" in text
    speedup = float(text.split("best speedup:")[1].split("x")[0])
    assert speedup > 0
    assert "Evaluation of" in text and "speedup</th>" in text  # the Evaluation's HTML view
    assert "@launch" in text  # the candidate's source
    images = [o for c in notebook.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    assert len(images) == 2  # progress and lineage plots


def run_example(script: str, tmp_path: Path, *arguments: str) -> str:
    db = tmp_path / f"{script}.db"
    completed = subprocess.run(
        [sys.executable, str(EXAMPLES / script), "--small", "--no-progress", "--db", str(db), *arguments],
        capture_output=True, text=True, timeout=300, env=package_environment())
    assert completed.returncode == 0, completed.stderr
    assert db.exists()
    return completed.stdout


@needs_backend
def test_custom_mutator_example_proposes_the_children(tmp_path):
    out = run_example("custom_mutator.py", tmp_path, "--budget", "5")
    # The reference and the seed come first; the other three are SweepMutator's children.
    assert "5 evaluations (3 from SweepMutator)" in out
    assert "best speedup:" in out
    run = ks.Run.open(tmp_path / "custom_mutator.py.db")
    assert run.info()["mutator"] == "sweep"
    rows = run.records()
    for row in rows[2:]:
        parent = next(r for r in rows if r["id"] == row["parent_ids"][0])
        child_values = ks.ParamMutator.values_of(run.program(row["id"]).candidate.source)
        parent_values = ks.ParamMutator.values_of(run.program(parent["id"]).candidate.source)
        assert sum(child_values[k] != parent_values[k] for k in child_values) == 1  # one step of one value


@needs_backend
def test_custom_evaluator_example_discounts_noise(tmp_path):
    out = run_example("custom_evaluator.py", tmp_path, "--budget", "4")
    assert "4 evaluations on" in out and "best speedup:" in out
    run = ks.Run.open(tmp_path / "custom_evaluator.py.db")
    for row in run.records():
        if row["status"] == "ok":
            evaluation = run.program(row["id"]).evaluation
            assert evaluation.fitness == pytest.approx(evaluation.speedup / (1 + evaluation.timing.noise))


@needs_backend
def test_model_new_example_evaluates_the_problems_model_as_a_candidate(tmp_path):
    pytest.importorskip("torch", reason="ModelNew candidates need torch (pip install kernelsmith[torch])")
    completed = subprocess.run([sys.executable, str(EXAMPLES / "model_new.py"), "--out", str(tmp_path / "work")],
                               capture_output=True, text=True, timeout=600, env=package_environment())
    assert completed.returncode == 0, completed.stderr
    assert "the problem's Model as ModelNew: ok," in completed.stdout, completed.stdout
