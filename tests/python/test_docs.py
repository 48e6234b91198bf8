"""docs/python.md and docs/memory.md run as written: their ```python blocks are executed in order, in one
namespace per page, in a scratch folder (they write run stores and a memory file there)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import kernelsmith as ks

DOC = Path(__file__).resolve().parents[2] / "docs" / "python.md"
MEMORY_DOC = Path(__file__).resolve().parents[2] / "docs" / "memory.md"


def python_blocks(text: str):
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def test_the_walk_through_has_its_sections():
    blocks = python_blocks(DOC.read_text())
    assert len(blocks) >= 10
    joined = "\n".join(blocks)
    for needle in ("ks.devices()", "ks.evolve(", "ks.Run.open(", "plot_progress", "ks.Mutator", "ks.Evaluator"):
        assert needle in joined


def test_python_blocks_of_docs_python_md_run(tmp_path, monkeypatch):
    if not any(b.available for b in ks.devices()):
        pytest.skip("no CUDA or OpenCL device (install pocl-opencl-icd)")
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "docs_python_md"}
    for index, block in enumerate(python_blocks(DOC.read_text())):
        code = compile(block, f"docs/python.md block {index + 1}", "exec")
        exec(code, namespace)  # noqa: S102  (the documentation's own examples)
    # What the blocks did, checked: the run store exists and the Python mutator made the children.
    assert (tmp_path / "quickstart.db").exists()
    origins = [row["origin"] for row in namespace["run"].records()]
    assert origins[0] == "reference"
    assert namespace["failed"].ok is False
    import matplotlib.pyplot as plt

    plt.close("all")


def test_python_blocks_of_docs_memory_md_run(tmp_path, monkeypatch, capsys):
    """The skill bank, a predicate's error, a memory file and a Python retriever in a run; no device needed."""
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "docs_memory_md"}
    blocks = python_blocks(MEMORY_DOC.read_text())
    assert len(blocks) >= 3
    for index, block in enumerate(blocks):
        code = compile(block, f"docs/memory.md block {index + 1}", "exec")
        exec(code, namespace)  # noqa: S102  (the documentation's own examples)
    printed = capsys.readouterr().out
    assert "coalesce_memory_access" in printed
    assert "column 30: unknown feature 'spils'" in printed
    assert (tmp_path / "memory.db").exists() and len(ks.ExperienceMemory(str(tmp_path / "memory.db"))) == 6
    assert namespace["memory"].retriever.name() == "newest"


def test_docs_memory_md_lists_every_feature_and_skill_file_field():
    text = MEMORY_DOC.read_text()
    for row in ks.feature_catalog():
        assert f"| `{row.name}` |" in text, f"docs/memory.md does not list the feature {row.name}"
    for field in ("schema", "version", "skills[].name", "skills[].when", "skills[].advice", "skills[].examples"):
        assert f"| `{field}` |" in text
