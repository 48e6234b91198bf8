"""kernelsmith.store, the one run-store reader of the package: schema 2's step facts (duplicate_of,
novelty_kind) filled by real runs on PoCL, the committed version-1 store (tests/data/run_store_v1.db,
written by the code of commit 07601d7) read as it is and after its upgrade, and the origin vocabulary."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

import kernelsmith as ks
from kernelsmith import store, training

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "data" / "run_store_v1.db"
sys.path.insert(0, str(ROOT / "tests" / "data"))

import make_run_store_v1 as fixture_runs  # noqa: E402  (the runs the fixture holds, made again here)

VARIANT_ID = ks.Candidate("opencl", fixture_runs.VARIANT).id()
LLM_DUPLICATE = "the answer's program is already in the run (a duplicate of an earlier program)"


def opencl_available() -> bool:
    try:
        return any(b.name == "opencl" and b.available for b in ks.devices())
    except ks.Error:
        return False


needs_opencl = pytest.mark.skipif(not opencl_available(), reason="no OpenCL device (install pocl-opencl-icd)")


def copy_of_fixture(tmp_path) -> str:
    path = tmp_path / "run_store_v1.db"
    shutil.copyfile(FIXTURE, path)
    return str(path)


def step_columns(path) -> set:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as connection:
        return {row[1] for row in connection.execute("PRAGMA table_info(steps)")}


def facts(run: store.StoredRun):
    """Per step: what it was, and the two facts."""
    return [(s.mutation, s.failure, bool(s.child_id), s.novelty_kind, s.duplicate_of) for s in run.steps]


def expected_version_1_facts(runs):
    """What the fixture's steps must read as, whatever the file's version (docs/run-store.md)."""
    scripted, llm = runs
    assert [(f[0], f[2]) for f in facts(scripted)] == [
        ("reference", True), ("seed", True), ("scripted", True), ("scripted", False), ("scripted", False),
        ("scripted", False)]
    assert [f[3:] for f in facts(scripted)] == [
        ("novel", None), ("novel", None), ("novel", None), ("duplicate", VARIANT_ID), ("near_duplicate", VARIANT_ID),
        (None, None)]
    assert facts(scripted)[5][1] == "the SEARCH block matched nothing"
    assert [f[3:] for f in facts(llm)] == [("novel", None)] * 3 + [("duplicate", None)] * 2
    assert [f[1] for f in facts(llm)[3:]] == [LLM_DUPLICATE] * 2


def test_a_version_1_store_reads_without_being_changed(tmp_path):
    path = copy_of_fixture(tmp_path)
    before = Path(path).read_bytes()
    runs = store.read_runs(path)
    assert [r.schema_version for r in runs] == [1, 1]
    expected_version_1_facts(runs)
    assert {"duplicate_of", "novelty_kind"}.isdisjoint(step_columns(path))
    assert Path(path).read_bytes() == before
    # The notebook's Run reads it too.
    run = ks.Run.open(path, 1)
    assert [row["origin"] for row in run.records()] == ["reference", "seed", "scripted"]
    assert run.best().id in {row["id"] for row in run.records()}


def test_the_upgrade_to_version_2_keeps_everything_and_fills_the_columns(tmp_path):
    path = copy_of_fixture(tmp_path)
    old = store.read_runs(path)
    assert ks.RunStore(path).schema_version == ks.RUN_STORE_SCHEMA_VERSION == 2
    assert {"duplicate_of", "novelty_kind"} <= step_columns(path)
    new = store.read_runs(path)
    assert [r.schema_version for r in new] == [2, 2]
    expected_version_1_facts(new)
    for before, after in zip(old, new):
        assert dataclasses.replace(before, schema_version=2) == after  # every record, field by field

    # The exports read both alike.
    for export in (training.build_sft, training.build_rl):
        assert export(old).records == export(new).records


def test_the_rl_export_resolves_the_duplicates_of_a_version_1_store(tmp_path):
    runs = store.read_runs(copy_of_fixture(tmp_path), [2])
    export = training.build_rl(runs, training.RlOptions(min_headroom=0.0, min_group_size=1, layout="completions"))
    duplicates = [r for r in export.records if r["duplicate_of"]]
    # The mutator's own rejections did not name the program: the export found it by parsing the answer.
    assert duplicates and {r["duplicate_of"] for r in duplicates} == {VARIANT_ID}


@pytest.fixture(scope="module")
def current_store(tmp_path_factory):
    """The fixture's two runs made again by this build: a version-2 store written by the engine."""
    if not opencl_available():
        pytest.skip("no OpenCL device (install pocl-opencl-icd)")
    path = str(tmp_path_factory.mktemp("current") / "run.db")
    fixture_runs.write_runs(path)
    return path


@needs_opencl
def test_a_real_run_records_duplicates_and_near_duplicates_as_columns(current_store):
    scripted, llm = store.read_runs(current_store)
    assert scripted.schema_version == 2
    # The engine's novelty filter judged the scripted proposals.
    assert [f[3:] for f in facts(scripted)] == [
        ("novel", None), ("novel", None), ("novel", None), ("duplicate", VARIANT_ID), ("near_duplicate", VARIANT_ID),
        (None, None)]
    # The LLM mutator withheld its known answers, and the engine named the program they equal.
    assert [f[3:] for f in facts(llm)] == [("novel", None)] * 3 + [("duplicate", VARIANT_ID)] * 2
    assert [f[1] for f in facts(llm)[3:]] == [LLM_DUPLICATE] * 2
    # The reader and the library's RunStore agree.
    native = ks.RunStore(current_store, True)
    for run in (scripted, llm):
        assert [(s.duplicate_of or None, s.novelty_kind or None) for s in native.steps(run.id)] == [
            (s.duplicate_of, s.novelty_kind) for s in run.steps]


@needs_opencl
def test_the_upgraded_fixture_reads_like_a_store_written_now(tmp_path, current_store):
    path = copy_of_fixture(tmp_path)
    ks.RunStore(path)
    upgraded, now = store.read_runs(path), store.read_runs(current_store)
    for old, new in zip(upgraded, now):
        assert [f[:3] for f in facts(old)] == [f[:3] for f in facts(new)]
        for a, b in zip(old.steps, new.steps):
            # Only version 1 could not name the program the LLM mutator's own check found.
            if a.failure == LLM_DUPLICATE:
                assert (a.novelty_kind, a.duplicate_of, b.duplicate_of) == ("duplicate", None, VARIANT_ID)
            else:
                assert (a.novelty_kind, a.duplicate_of) == (b.novelty_kind, b.duplicate_of)


@needs_opencl
def test_origins_are_one_vocabulary(current_store):
    assert ks.ORIGINS == ("reference", "seed", "user", "param", "llm_full", "llm_diff", "llm_crossover")
    assert set(ks.INITIAL_ORIGINS) == {"reference", "seed"} == store.INITIAL_ORIGINS
    assert all(ks.is_initial_origin(o) == (o in ks.INITIAL_ORIGINS) for o in ks.ORIGINS + ("scripted",))
    assert store.NOVELTY_KINDS == ("novel", "duplicate", "near_duplicate")
    runs = store.read_runs(current_store)
    made_by_library = {p.origin for r in runs for p in r.programs.values()} - {"scripted"}
    assert made_by_library and made_by_library <= set(ks.ORIGINS)
    assert all(p.is_initial == (p.origin in ("reference", "seed")) for r in runs for p in r.programs.values())


def test_a_store_of_an_unknown_version_is_refused_by_name(tmp_path):
    path = copy_of_fixture(tmp_path)
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE schema_version SET version = 9")
    connection.close()
    with pytest.raises(ks.StoreError, match="schema version 9"):
        store.read_runs(path)


def test_only_the_store_module_runs_sql_on_a_run_store():
    package = ROOT / "python" / "kernelsmith"
    sql = re.compile(r"\.execute\(|\bSELECT\b|sqlite3\.connect")
    offenders = [str(p.relative_to(package)) for p in package.rglob("*.py")
                 if p.name != "store.py" and sql.search(p.read_text())]
    assert offenders == []
    assert not (package / "training" / "store.py").exists()
    assert not hasattr(training, "Run") and not hasattr(training, "Program")
