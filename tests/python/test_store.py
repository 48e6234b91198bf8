"""kernelsmith.store, the one run-store reader of the package: schema 2's step facts (duplicate_of,
novelty_kind) filled by real runs on PoCL, the committed version-1 store (tests/data/run_store_v1.db,
written by the code of commit 07601d7) read as it is and after its upgrade, a version-2 store (made from
it as version 2's upgrade did) upgraded to version 3 (llm_attempts, abandoned_by), and the origin
vocabulary."""

from __future__ import annotations

import dataclasses
import re
import shutil
import sqlite3
import sys
from contextlib import closing
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
    # Its evaluations were screenings: nothing is confirmed, so no best; the correct ones are listed apart.
    assert run.best() is None
    assert {entry["program_id"] for entry in run.unconfirmed()} <= {row["id"] for row in run.records()}
    assert run.unconfirmed() and all(entry["reasons"] == ["screen mode"] for entry in run.unconfirmed())


def test_the_upgrade_of_version_1_keeps_everything_and_fills_the_columns(tmp_path):
    path = copy_of_fixture(tmp_path)
    old = store.read_runs(path)
    assert ks.RunStore(path).schema_version == ks.RUN_STORE_SCHEMA_VERSION == 4
    assert {"duplicate_of", "novelty_kind", "abandoned_by", "skill", "retrieved"} <= step_columns(path)
    new = store.read_runs(path)
    assert [r.schema_version for r in new] == [4, 4]
    expected_version_1_facts(new)
    for before, after in zip(old, new):
        assert dataclasses.replace(before, schema_version=4) == after  # every record, field by field
    assert all(s.skill is None and s.retrieved == [] for r in new for s in r.steps)

    # The exports read both alike.
    for export in (training.build_sft, training.build_rl):
        assert export(old).records == export(new).records


def version_2_copy_of_fixture(tmp_path) -> str:
    """The fixture as version 2 left it: version 2's upgrade (its two columns, filled) and its version row."""
    path = copy_of_fixture(tmp_path)
    derived = {r.id: store._novelty_facts_of_version_1(path, r.id) for r in store.read_runs(path)}
    with sqlite3.connect(path) as connection:
        connection.execute("ALTER TABLE steps ADD COLUMN duplicate_of TEXT")
        connection.execute("ALTER TABLE steps ADD COLUMN novelty_kind TEXT")
        for by_step in derived.values():
            for step_id, (duplicate_of, novelty_kind) in by_step.items():
                connection.execute("UPDATE steps SET duplicate_of = ?, novelty_kind = ? WHERE id = ?",
                                   (duplicate_of, novelty_kind, step_id))
        connection.execute("INSERT INTO schema_version (version, created) VALUES (2, 0)")
    connection.close()
    return path


def test_a_version_2_store_reads_as_it_is_and_upgrades_to_the_current_version(tmp_path):
    path = version_2_copy_of_fixture(tmp_path)
    before = Path(path).read_bytes()
    old = store.read_runs(path)
    assert [r.schema_version for r in old] == [2, 2]
    expected_version_1_facts(old)
    assert all(s.abandoned_by is None and s.llm_attempts == [] for r in old for s in r.steps)
    assert store.RunStoreReader(path).llm_attempts(old[0].id) == []
    assert Path(path).read_bytes() == before  # read-only: untouched

    assert ks.RunStore(path).schema_version == 4
    assert {"abandoned_by", "skill", "retrieved"} <= step_columns(path)
    new = store.read_runs(path)
    for previous, upgraded in zip(old, new):
        assert dataclasses.replace(previous, schema_version=4) == upgraded
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as connection:
        versions = [row[0] for row in connection.execute("SELECT version FROM schema_version ORDER BY version")]
        assert versions == [1, 2, 4]
        assert connection.execute("SELECT count(*) FROM llm_attempts").fetchone()[0] == 0
        assert connection.execute("SELECT count(*) FROM experience").fetchone()[0] == 0
    connection.close()


def test_the_rl_export_resolves_the_duplicates_of_a_version_1_store(tmp_path):
    runs = store.read_runs(copy_of_fixture(tmp_path), [2])
    export = training.build_rl(runs, training.RlOptions(min_headroom=0.0, min_group_size=1, layout="completions"))
    duplicates = [r for r in export.records if r["duplicate_of"]]
    # The mutator's own rejections did not name the program: the export found it by parsing the answer.
    assert duplicates and {r["duplicate_of"] for r in duplicates} == {VARIANT_ID}


@pytest.fixture(scope="module")
def current_store(tmp_path_factory):
    """The fixture's two runs made again by this build: a store of the current version written by the engine."""
    if not opencl_available():
        pytest.skip("no OpenCL device (install pocl-opencl-icd)")
    path = str(tmp_path_factory.mktemp("current") / "run.db")
    fixture_runs.write_runs(path)
    return path


def check_llm_steps(run: store.StoredRun, named: bool):
    """The LLM run's steps after its three programs: the mutator's own duplicate rejections (named by the
    engine in version 2, not in version 1), or, when it picked VARIANT itself as the parent, the parser's
    rejection of an answer that repeats its parent (no program reached the filter)."""
    assert [f[3:] for f in facts(run)[:3]] == [("novel", None)] * 3
    for step in run.steps[3:]:
        if step.failure == LLM_DUPLICATE:
            assert (step.novelty_kind, step.duplicate_of) == ("duplicate", VARIANT_ID if named else None)
        else:
            assert (step.novelty_kind, step.duplicate_of, step.parent_ids) == (None, None, [VARIANT_ID])


@needs_opencl
def test_a_real_run_records_duplicates_and_near_duplicates_as_columns(current_store):
    scripted, llm = store.read_runs(current_store)
    assert scripted.schema_version == ks.RUN_STORE_SCHEMA_VERSION
    # The engine's novelty filter judged the scripted proposals.
    assert [f[3:] for f in facts(scripted)] == [
        ("novel", None), ("novel", None), ("novel", None), ("duplicate", VARIANT_ID), ("near_duplicate", VARIANT_ID),
        (None, None)]
    check_llm_steps(llm, named=True)
    # The reader and the library's RunStore agree.
    native = ks.RunStore(current_store, True)
    for run in (scripted, llm):
        assert [(s.duplicate_of or None, s.novelty_kind or None) for s in native.steps(run.id)] == [
            (s.duplicate_of, s.novelty_kind) for s in run.steps]


def answer_with_a_known_program(reference: str):
    """An LLM that always answers with a program the run holds, never with its parent's: VARIANT, or the
    reference when the parent is VARIANT."""
    from loopback_llm import chat_reply

    def respond(body, index):
        shown = re.search(r"^## Current program[^\n]*\n```\w*\n(.*?)\n```", body["messages"][-1]["content"],
                          re.S | re.M)
        parent = shown.group(1) if shown else ""
        parent_is_variant = ks.normalize_source(parent) == ks.normalize_source(fixture_runs.VARIANT)
        code = reference if parent_is_variant else fixture_runs.VARIANT
        return chat_reply(f"Here it is.\n\n```opencl\n{code}```\n", model="scripted-coder")

    return respond


@needs_opencl
def test_the_engine_names_the_program_an_llm_answer_duplicates(tmp_path):
    from loopback_llm import LoopbackLlmServer
    from kernelsmith.llm import make_llm_mutator

    path = str(tmp_path / "run.db")
    task = fixture_runs.small_relu()
    reference = task.references["opencl"].source
    with LoopbackLlmServer(responder=answer_with_a_known_program(reference)) as server:
        mutator = make_llm_mutator(server.url, "scripted-coder", api_key_env=None, full_weight=1.0, diff_weight=0.0,
                                   crossover_weight=0.0, seed=3, timeout=30, max_retries=0)
        config = fixture_runs.config(path, 4, max_failed_proposals=3)
        ks.Evolution(task, fixture_runs.evaluator(str(tmp_path / "cache")), mutator, config).run()
    (run,) = store.read_runs(path)
    rejected = run.steps[3:]
    assert len(rejected) == 3 and all(s.failure == LLM_DUPLICATE for s in rejected)
    for step in rejected:
        # The program the answer holds, by the id the store gave it.
        answered = fixture_runs.VARIANT if step.parent_ids != [VARIANT_ID] else reference
        assert (step.novelty_kind, step.duplicate_of) == ("duplicate", ks.Candidate("opencl", answered).id())
        assert run.evaluations[step.duplicate_of].ok


@needs_opencl
def test_the_upgraded_fixture_reads_like_a_store_written_now(tmp_path, current_store):
    path = copy_of_fixture(tmp_path)
    ks.RunStore(path)
    (old_scripted, old_llm), (scripted, llm) = store.read_runs(path), store.read_runs(current_store)
    # The scripted run does not depend on measured speed: the same steps, the same facts.
    assert facts(old_scripted) == facts(scripted)
    # The LLM run follows the same rules; only version 1 could not name the program the mutator's own
    # check found.
    check_llm_steps(old_llm, named=False)
    check_llm_steps(llm, named=True)


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


def test_a_damaged_file_is_refused_with_how_to_recover(tmp_path):
    path = tmp_path / "run.db"
    path.write_bytes(b"SQLite format 3\x00" + b"\x5a" * 8192)
    with pytest.raises(ks.StoreError) as error:
        store.read_runs(str(path))
    assert str(error.value).startswith(f"the run store '{path}' is damaged or is not a SQLite database (")
    assert str(error.value).endswith(
        f"): keep a copy of the file, start a new run with another --db path, and rescue what is left with "
        f"`sqlite3 {path} .recover | sqlite3 recovered.db`"
    )


def test_a_store_damaged_past_its_schema_is_refused_with_how_to_recover(tmp_path):
    path = tmp_path / "run.db"
    writer = ks.RunStore(str(path))
    info = ks.RunInfo()
    info.task_name = "relu"
    for _ in range(200):
        writer.create_run(info)
    del writer
    with open(path, "r+b") as file:  # every page after the first (the schema) turns to noise
        size = file.seek(0, 2)
        file.seek(4096)
        file.write(b"\x5a" * (size - 4096))
    for read in (lambda: store.read_runs(str(path)), lambda: store.RunStoreReader(str(path)).latest_run_id()):
        with pytest.raises(ks.StoreError) as error:
            read()
        assert str(error.value).startswith(f"the run store '{path}' is damaged or is not a SQLite database (")
        assert ".recover" in str(error.value)


def test_only_the_store_module_runs_sql_on_a_run_store():
    package = ROOT / "python" / "kernelsmith"
    sql = re.compile(r"\.execute\(|\bSELECT\b|sqlite3\.connect")
    offenders = [str(p.relative_to(package)) for p in package.rglob("*.py")
                 if p.name != "store.py" and sql.search(p.read_text())]
    assert offenders == []
    assert not (package / "training" / "store.py").exists()
    assert not hasattr(training, "Run") and not hasattr(training, "Program")


def index_names(path) -> set:
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as connection:
        return {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}


def test_the_readers_index_comes_with_a_new_store_and_to_an_older_one_opened_for_writing(tmp_path):
    fresh = tmp_path / "fresh.db"
    ks.RunStore(str(fresh))
    assert "evaluations_by_fitness" in index_names(fresh)
    older = copy_of_fixture(tmp_path)
    assert "evaluations_by_fitness" not in index_names(older)
    ks.RunStore(older, True)  # a reader changes nothing
    assert "evaluations_by_fitness" not in index_names(older)
    best_before = store.RunStoreReader(older).best_evaluation(1)
    ks.RunStore(older)
    assert "evaluations_by_fitness" in index_names(older)
    assert store.RunStoreReader(older).best_evaluation(1) == best_before
    with closing(sqlite3.connect(f"file:{older}?mode=ro", uri=True)) as connection:
        plan = " ".join(str(row[3]) for row in connection.execute(
            "EXPLAIN QUERY PLAN SELECT id FROM evaluations WHERE run = 1 AND status = 'ok' "
            "ORDER BY fitness DESC, sequence ASC LIMIT 1"))
    assert "evaluations_by_fitness" in plan
