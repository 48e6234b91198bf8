"""The `kernelsmith` command's messages, through the real command in a subprocess: a reader that goes
away early (`kernelsmith report | head`) and a damaged run store."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import kernelsmith as ks

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "data" / "run_store_v1.db"


def report(db, **kwargs):
    return subprocess.run(
        [sys.executable, "-m", "kernelsmith", "report", "--db", str(db)], text=True, timeout=120, **kwargs
    )


def damage(path: Path) -> None:
    """Overwrites every page after the first: the header stays, the schema and the tables are lost."""
    size = path.stat().st_size
    assert size > 8192
    with open(path, "r+b") as file:
        file.seek(4096)
        file.write(b"\x5a" * (size - 4096))


def test_report_into_a_closed_pipe_stops_quietly(tmp_path):
    db = tmp_path / "run.db"
    shutil.copyfile(FIXTURE, db)
    whole = report(db, capture_output=True)
    assert whole.returncode == 0, whole.stderr
    assert "lineage of the best" in whole.stdout

    # A pipe whose reader is gone before the first line is written, as after `| head` has read enough.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        closed = report(db, stdout=write_end, stderr=subprocess.PIPE)
    finally:
        os.close(write_end)
    assert "Traceback" not in closed.stderr
    assert "BrokenPipeError" not in closed.stderr
    assert closed.stderr == ""
    assert closed.returncode == 1


def test_report_of_a_damaged_store_says_how_to_recover(tmp_path):
    db = tmp_path / "run.db"
    store = ks.RunStore(str(db))
    info = ks.RunInfo()
    info.task_name = "relu"
    info.language = "opencl"
    for _ in range(200):
        store.create_run(info)
    del store
    damage(db)
    result = report(db, capture_output=True)
    assert result.returncode == 1
    assert result.stderr.startswith(
        f"kernelsmith report: the run store '{db}' is damaged (database disk image is malformed): keep a copy of "
        f"the file, start a new run with another --db path, and rescue what is left with "
        f"`sqlite3 {db} .recover | sqlite3 recovered.db`"
    ), result.stderr
    assert "SELECT" not in result.stderr and "Traceback" not in result.stderr


def test_report_of_a_file_that_is_not_a_database_names_it(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("x" * 8192)
    result = report(notes, capture_output=True)
    assert result.returncode == 1
    assert result.stderr.startswith(
        f"kernelsmith report: '{notes}' is not a SQLite database, or its header is damaged (file is not a "
        f"database): give the --db path of a run store, or a new path to start one"
    ), result.stderr
    assert "SELECT" not in result.stderr
