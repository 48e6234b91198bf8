"""The `kernelsmith` command's messages, through the real command in a subprocess: a reader that goes
away early (`kernelsmith report | head`), a damaged run store, and kernel languages (a Triton file on a
machine without CUDA, `devices` listing each backend's languages)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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
    # The fixture's evaluations were screenings: no confirmed figure, the correct ones listed apart with why.
    assert "no confirmed program yet" in whole.stdout and "): screen mode" in whole.stdout

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


# ---- kernel languages: Triton in eval, evolve and devices

TRITON_EXAMPLE = ROOT / "docs" / "examples" / "vector_add.py"


def kernelsmith(*args):
    return subprocess.run([sys.executable, "-m", "kernelsmith", *args], capture_output=True, text=True, timeout=300)


def cuda_available() -> bool:
    return any(backend.name == "cuda" and backend.available for backend in ks.devices())


def test_eval_of_a_triton_file_says_it_needs_the_cuda_backend(tmp_path):
    if cuda_available():
        pytest.skip("this machine has a CUDA device: the Triton candidate would be evaluated")
    cuda = next(backend for backend in ks.devices() if backend.name == "cuda")
    candidate = tmp_path / "k.py"
    shutil.copyfile(TRITON_EXAMPLE, candidate)
    expected = f"kernelsmith eval: Triton candidates need the cuda backend, and this machine has none: {cuda.reason}"
    for args in (["eval", "--task", "relu", str(candidate)],                  # the language from the extension
                 ["eval", "--task", "relu", "--candidate", str(candidate)],
                 ["eval", "--task", "relu", "--language", "triton", str(TRITON_EXAMPLE.with_suffix(".txt"))]):
        result = kernelsmith(*args)
        assert result.returncode == 1, result
        assert result.stderr.strip() == expected, result.stderr
        assert result.stdout == ""


def test_eval_names_a_language_it_cannot_place():
    result = kernelsmith("eval", "--task", "relu", "--backend", "opencl", str(TRITON_EXAMPLE))
    assert result.returncode == 1
    assert result.stderr.strip() == ("kernelsmith eval: triton runs on the cuda backend; --backend opencl was given "
                                     "(drop --backend, or give --backend cuda)")
    result = kernelsmith("eval", "--task", "relu", "notes.txt")
    assert result.returncode == 1
    assert result.stderr.startswith("kernelsmith eval: cannot tell the kernel language of 'notes.txt' from its "
                                    "extension; give --language (cuda, opencl, maca, triton, pytorch)")
    result = kernelsmith("eval", "--task", "relu", "--language", "fortran", "k.f90")
    assert result.returncode == 1
    assert "unknown kernel language 'fortran'; expected one of cuda, opencl, maca, triton, pytorch" in result.stderr
    result = kernelsmith("eval", "--task", "relu")
    assert result.returncode == 1
    assert "give a candidate FILE (or --candidate FILE), or --reference" in result.stderr


def test_evolve_in_triton_checks_the_language_first(tmp_path):
    db = tmp_path / "run.db"
    result = kernelsmith("evolve", "--task", "relu", "--language", "triton", "--backend", "opencl", "--db", str(db))
    assert result.returncode == 1
    assert result.stderr.strip() == ("kernelsmith evolve: triton runs on the cuda backend; --backend opencl was "
                                     "given (drop --backend, or give --backend cuda)")
    result = kernelsmith("evolve", "--task", "relu", "--language", "fortran", "--db", str(db))
    assert result.returncode == 1
    assert "unknown kernel language 'fortran'" in result.stderr
    if not cuda_available():
        result = kernelsmith("evolve", "--task", "relu", "--language", "triton", "--db", str(db))
        assert result.returncode == 1
        assert result.stderr.startswith("kernelsmith evolve: Triton candidates need the cuda backend, and this "
                                        "machine has none: ")
    assert not db.exists()  # refused before a store was made


def test_devices_lists_each_backends_languages_and_whether_triton_is_available():
    from kernelsmith import triton_compile

    triton_ok, triton_reason = triton_compile.availability()
    result = kernelsmith("devices")
    assert result.returncode == 0, result.stderr
    assert "  languages: cuda, triton\n" in result.stdout
    assert "  languages: opencl\n" in result.stdout
    cuda_ok = cuda_available()
    if not triton_ok:
        assert f"    triton: unavailable ({triton_reason})\n" in result.stdout
    elif not cuda_ok:
        assert f"    triton: unavailable ({triton_reason} is installed, but the cuda backend is unavailable)\n" \
            in result.stdout
    else:
        assert f"    triton: available ({triton_reason})\n" in result.stdout

    listed = kernelsmith("devices", "--json")
    assert listed.returncode == 0, listed.stderr
    backends = {entry["name"]: entry for entry in json.loads(listed.stdout)["backends"]}
    triton = {language["name"]: language for language in backends["cuda"]["languages"]}["triton"]
    assert triton["label"] == "Triton"
    assert triton["available"] == (triton_ok and cuda_ok)
    assert triton["reason"].startswith(triton_reason)
    assert [language["name"] for language in backends["opencl"]["languages"]] == ["opencl"]


def test_devices_lists_maca_with_the_reason_it_cannot_run():
    """Without a MetaX GPU the MACA backend is listed as unavailable, with why: the package built without the SDK
    says so; one built with it (the stand-in SDK, or a real one) names the missing runtime, plugin or device."""
    if any(backend.name == "maca" and backend.available for backend in ks.devices()):
        pytest.skip("the MACA backend runs here (KERNELSMITH_MACA_RUNTIME names a runtime that finds a device)")
    result = kernelsmith("devices")
    assert result.returncode == 0, result.stderr
    assert "\nmaca: unavailable" in result.stdout
    listed = kernelsmith("devices", "--json")
    maca = {entry["name"]: entry for entry in json.loads(listed.stdout)["backends"]}["maca"]
    assert maca["available"] is False
    assert [language["name"] for language in maca["languages"]] == ["maca"]
    reasons = ("when kernelsmith was built", "libmcruntime.so not found", "libkernelsmith_maca.so not found",
               "no MetaX device")
    assert any(reason in maca["reason"] for reason in reasons), maca["reason"]


def test_the_main_jobs_summary_tells_a_newcomer_what_the_run_found(tmp_path):
    """tools/main.sh ends with tools/main_summary.py over `kernelsmith report --json`: here after a real short
    run on PoCL, it names the task and device, the reference's own score (timed in this run), the best program
    or that nothing beat the reference, where the store is and what to try next."""
    from backends import backend_available

    if not backend_available("opencl"):
        pytest.skip("no OpenCL device (install pocl-opencl-icd)")
    db = tmp_path / "main.db"
    subprocess.run([sys.executable, "-m", "kernelsmith", "evolve", "--task", "relu", "--backend", "opencl",
                    "--mutator", "param", "--budget", "3", "--islands", "1", "--db", str(db)],
                   check=True, text=True, capture_output=True, timeout=600)
    document = subprocess.run([sys.executable, "-m", "kernelsmith", "report", "--db", str(db), "--json"],
                              check=True, text=True, capture_output=True, timeout=120).stdout
    shown = subprocess.run([sys.executable, str(ROOT / "tools" / "main_summary.py"), str(db), "42"], input=document,
                           check=True, text=True, capture_output=True, timeout=60).stdout
    assert "== main: done in 42 s" in shown
    assert "The run evolved 'relu' on opencl" in shown and "3 evaluations" in shown
    # Confirmed (then its own score, the noise) or kept apart on a machine too noisy to confirm it: said either way.
    reference_confirmed = any(entry["evaluation"] == 1 for entry in json.loads(document)["best"])
    assert ("The reference, evaluated as a candidate, scored" in shown) == reference_confirmed
    assert ("is not among the confirmed figures" in shown) == (not reference_confirmed)
    best = json.loads(document)["best"]
    if best and best[0]["evaluation"] != 1 and best[0]["speedup"] > 1.0:
        assert f"Best: program {best[0]['id']}, {best[0]['speedup']:.2f}x the reference's speed" in shown
    else:
        assert "Nothing beat the reference this time" in shown
    assert f"The run is stored in {db}" in shown and f"kernelsmith serve --db {db}" in shown
