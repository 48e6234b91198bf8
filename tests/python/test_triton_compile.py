"""Triton candidates, compiled ahead of time in a helper process (docs/triton.md): the gate that refuses a
file before it runs, the signature mapping from a task's dtypes and sizes, compiles for sm_90 and sm_80
with their metadata and parameter count, compile errors on the candidate's own line, and the helper
process `python -m kernelsmith.triton_compile` serving several requests. The compile tests need the
triton package (pip install kernelsmith[triton]) and skip without it; none needs a GPU."""

from __future__ import annotations

import base64
import json
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import time

import pytest

import kernelsmith as ks
from kernelsmith import triton_compile as tc

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "vector_add.py"

HAS_TRITON, TRITON_WHY = tc.availability()
needs_triton = pytest.mark.skipif(not HAS_TRITON, reason=f"needs triton: {TRITON_WHY}")

KERNEL = """\
# @launch add[ceil_div(N, BLOCK)](x, y, out, N, BLOCK=BLOCK)
import triton
import triton.language as tl


@triton.jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)
"""


def request(source: str = KERNEL, **fields):
    base = {"id": 7, "source": source, "kernel": "add", "signature": ["*fp32", "*fp32", "*fp32", "i32"],
            "constexprs": {"BLOCK": 1024}, "num_warps": 4, "num_stages": 3, "target": "sm_90",
            "aligned": [0, 1, 2]}
    base.update(fields)
    return base


# --- the gate -------------------------------------------------------------------------------------------


def refusal(source: str) -> tc.GateError:
    with pytest.raises(tc.GateError) as caught:
        tc.check_source(source)
    return caught.value


@pytest.mark.parametrize("source, line, what", [
    ("import triton\nimport os\n", 2, "`import os` is not allowed"),
    ("import torch\n", 1, "`import torch` is not allowed"),
    ("from triton import runtime\n", 1, "`from triton import runtime` is not allowed"),
    ("from subprocess import run\n", 1, "`from subprocess import run` is not allowed"),
    ("import triton\nprint('hello')\n", 2, "the top-level call `print('hello')` is not allowed"),
    ("import triton\nDATA = open('/etc/passwd').read()\n", 2, "the top-level call `open('/etc/passwd').read()`"),
    ("exec('import os')\n", 1, "the top-level call `exec('import os')` is not allowed"),
    ("import triton\n\n@triton.jit\ndef k(x):\n    exec('1')\n", 5, "the name `exec` is not allowed in a kernel"),
    ("import triton\n\n@triton.jit\ndef k(x):\n    y = x.__class__\n", 5, "the attribute .__class__ is not allowed"),
    ("import triton\n\n@triton.jit\ndef k(x):\n    triton.runtime.driver\n", 5, "names triton.runtime, which is not in"),
    ("import triton\n\n@triton.jit\ndef k(x, B=open('f')):\n    pass\n", 4, "the default value `open('f')`"),
    ("def helper(x):\n    return x\n", 1, "must be decorated with @triton.jit"),
    ("import triton\nclass K:\n    pass\n", 2, "a class (`class K:`) is not allowed at the top level"),
    ("import triton\nif True:\n    import os\n", 2, "an if statement"),
    ("import triton.language as tl\nB: tl.constexpr = 4\n", 2, "write NAME = tl.constexpr(value)"),
    ("import triton\nX = triton.compile(1)\n", 2, "the top-level call `triton.compile(1)` is not allowed"),
    ("def broken(:\n", 1, "syntax error"),
])
def test_the_gate_refuses_with_the_line_and_what_is_allowed(source, line, what):
    error = refusal(source)
    assert error.line == line
    assert what in str(error)
    assert str(error).startswith(f"line {line}: ")
    assert "may import only triton, triton.language (and its math and libdevice) and math" in str(error)
    reply = error.to_json()
    assert reply["ok"] is False and reply["stage"] == "gate" and reply["line"] == line


def test_the_gate_accepts_kernels_constexpr_globals_and_aliases():
    tc.check_source(EXAMPLE.read_text())
    tc.check_source(KERNEL)
    tc.check_source('"""doc"""\nimport math\nfrom triton import jit\nfrom triton import language as tl\n'
                    "SCALE = tl.constexpr(2 * 3)\nEPS = 1e-6\n\n@jit\ndef k(x, n, B: tl.constexpr = 128):\n"
                    "    tl.store(x, tl.load(x) * SCALE)\n")


def test_the_gate_does_not_execute_the_file(tmp_path):
    marker = tmp_path / "ran"
    with pytest.raises(tc.GateError):
        tc.check_source(f"import triton\nopen({str(marker)!r}, 'w')\n")
    assert not marker.exists()


# --- signatures ------------------------------------------------------------------------------------------


def test_signatures_from_dtypes_and_integer_ranges():
    assert tc.pointer_type("float32") == "*fp32"
    assert tc.pointer_type(ks.DType.float16) == "*fp16"
    assert tc.pointer_type("bfloat16") == "*bf16"
    assert tc.pointer_type(ks.DType.int32) == "*i32"
    assert tc.pointer_type("uint8") == "*u8"
    with pytest.raises(ValueError, match="no Triton pointer type for dtype 'complex64'"):
        tc.pointer_type("complex64")
    assert tc.integer_type([1, 2 ** 31 - 1]) == "i32"
    assert tc.integer_type([-(2 ** 31)]) == "i32"
    assert tc.integer_type([1024, 2 ** 31]) == "i64"
    with pytest.raises(ValueError):
        tc.integer_type([])
    assert tc.signature_for(["float32", ks.DType.bfloat16, [4096, 1 << 20], 3, range(2 ** 32, 2 ** 32 + 1)]) == \
        ["*fp32", "*bf16", "i32", "i32", "i64"]
    with pytest.raises(ValueError):
        tc.signature_for([True])


# --- compiling --------------------------------------------------------------------------------------------


def entry_params(ptx: str) -> int:
    return tc._ptx_param_count(ptx, "add")


@needs_triton
@pytest.mark.parametrize("target, arch", [("sm_90", "sm_90a"), ("sm_80", "sm_80")])
def test_compile_to_a_cubin_with_its_metadata(target, arch):
    reply = tc.handle(tc.Compiler(), request(target=target, want_ptx=True))
    assert reply["ok"], reply
    assert reply["id"] == 7
    cubin = base64.b64decode(reply["cubin"])
    assert cubin[:4] == b"\x7fELF"
    assert reply["name"] == "add"
    assert reply["num_warps"] == 4 and reply["num_ctas"] == 1
    assert reply["shared"] == 0
    assert reply["global_scratch_size"] == 0 and reply["profile_scratch_size"] == 0
    assert reply["global_scratch_align"] >= 1 and reply["profile_scratch_align"] >= 1
    assert reply["launch_cooperative_grid"] is False
    # The launch ABI: the non-constexpr arguments, then the global and the profile scratch pointers.
    assert reply["param_count"] == 4 + 2
    assert ".reqntid 128" in reply["ptx"]
    assert reply["registers"] > 0 and reply["spills"] == 0
    assert f"for '{arch}'" in reply["ptxas_log"]
    assert reply["triton_version"] == __import__("triton").__version__


@needs_triton
def test_compile_options_and_constexprs_reach_the_kernel():
    compiler = tc.Compiler()
    eight = tc.handle(compiler, request(num_warps=8, constexprs={"BLOCK": 2048}, want_ptx=True))
    assert eight["ok"], eight
    assert eight["num_warps"] == 8 and ".reqntid 256" in eight["ptx"]
    example = tc.handle(compiler, request(source=EXAMPLE.read_text(), constexprs={"BLOCK": 256}, num_warps=2))
    assert example["ok"], example
    assert example["param_count"] == 6
    assert "ptx" not in example  # sent only when asked for: it can be megabytes


@needs_triton
def test_compile_errors_point_at_the_candidates_line():
    broken = KERNEL.replace("mask = offsets < n", "mask = offsets < tl.arange(0, 3)")
    reply = tc.handle(tc.Compiler(), request(source=broken))
    assert reply["ok"] is False and reply["stage"] == "compile"
    assert reply["line"] == 9, reply
    assert reply["message"].startswith("line 9: ") and "power of 2" in reply["message"]

    # An error in a @triton.jit helper is reported on the helper's line, not on its call.
    helper = KERNEL.replace("@triton.jit\ndef add", "@triton.jit\ndef twice(v):\n    return v * tl.arange(0, 3)\n\n\n"
                            "@triton.jit\ndef add").replace("mask=mask) + tl.load", "mask=mask) + twice(tl.load")
    helper = helper.replace("mask=mask), mask=mask)", "mask=mask)), mask=mask)")
    reply = tc.handle(tc.Compiler(), request(source=helper))
    assert reply["ok"] is False, reply
    assert reply["line"] == 8 and "power of 2" in reply["message"], reply

    # A name the file does not define is refused before the file runs, on its line.
    reply = tc.handle(tc.Compiler(), request(source=KERNEL.replace("offsets < n", "offsets < missing_name")))
    assert reply["stage"] == "gate" and reply["line"] == 9 and "`missing_name`" in reply["message"], reply


@needs_triton
def test_signature_mistakes_are_refused_with_what_the_kernel_takes():
    compiler = tc.Compiler()
    few = tc.handle(compiler, request(signature=["*fp32", "i32"]))
    assert few["stage"] == "signature"
    assert "takes 4 non-constexpr argument(s) (x_ptr, y_ptr, out_ptr, n) but the launch passes 2" in few["message"]
    assert few["line"] == 7  # the def line
    unknown = tc.handle(compiler, request(constexprs={"BLOCK": 128, "TILE": 4}))
    assert "has no tl.constexpr parameter TILE" in unknown["message"]
    missing = tc.handle(compiler, request(constexprs={}))
    assert "needs the tl.constexpr parameter BLOCK: pass it by keyword" in missing["message"]
    other = tc.handle(compiler, request(kernel="mul"))
    assert "no @triton.jit function of that name (it has: add)" in other["message"]
    gate = tc.handle(compiler, request(source="import os\n"))
    assert gate["stage"] == "gate" and gate["line"] == 1
    target = tc.handle(compiler, request(target="hopper"))
    assert "expected a compute capability" in target["message"]


@needs_triton
def test_the_helper_process_serves_requests_over_json_lines(tmp_path):
    """The helper as the library runs it, from its own folder: it answers every request, and writes
    nothing outside that folder (the confinement it will run under allows no more): no triton cache in
    HOME, no temporary file in TMPDIR, and no request's folder left in its own."""
    workdir, home, temporary = tmp_path / "helper", tmp_path / "home", tmp_path / "tmp"
    for folder in (workdir, home, temporary):
        folder.mkdir()
    requests = [request(id=1), {"id": 2, "oops": True}, request(id=3, source="import torch\n"),
                request(id=4, target="sm_80"), {"id": 5, "op": "status"}]
    lines = "\n".join(json.dumps(r) for r in requests) + "\nnot json\n"
    environment = dict(os.environ, HOME=str(home), TMPDIR=str(temporary))
    for variable in tc.WRITE_PATH_VARIABLES[:4]:
        environment.pop(variable, None)
    done = subprocess.run([sys.executable, "-m", "kernelsmith.triton_compile"], input=lines, capture_output=True,
                          text=True, timeout=300, cwd=workdir, env=environment)
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r.get("id") for r in replies] == [1, 2, 3, 4, 5, None]
    assert replies[0]["ok"] and replies[3]["ok"]
    assert replies[1]["stage"] == "request" and "KeyError" in replies[1]["message"]
    assert replies[2]["stage"] == "gate"
    assert replies[4]["available"] is True and replies[4]["version"] == __import__("triton").__version__
    assert replies[5]["stage"] == "request" and "malformed request" in replies[5]["message"]
    assert base64.b64decode(replies[0]["cubin"])[:4] == b"\x7fELF"
    for folder in (workdir, home, temporary):
        assert sorted(p.name for p in folder.rglob("*")) == [], folder


# --- one process per request ---------------------------------------------------------------------------------
# The helper answers each request in a child forked from itself (tc.run_isolated); these tests give that
# function handlers that misbehave as a candidate's code could, and show that the next request sees none of it.

_STATE = {"counter": 0}


def tamper(request, folder):
    """Changes everything of its process a later request could see: this module's state, the gate, the
    environment, the working directory, tempfile's folder; and writes files in its folder."""
    _STATE["counter"] += 1
    tc.check_source = lambda source, filename="": None
    tc.ALLOWLIST["triton.language.core"] = "function"
    os.environ["KERNELSMITH_TAMPERED"] = "1"
    os.chdir("/")
    pathlib.Path(folder, "left.txt").write_text("x")
    return {"ok": True, "counter": _STATE["counter"]}


def observe(request, folder):
    """What a request sees of its process."""
    try:
        tc.check_source("import os\n")
        gate = "accepted"
    except tc.GateError:
        gate = "refused"
    return {"ok": True, "counter": _STATE["counter"], "gate": gate, "core": "triton.language.core" in tc.ALLOWLIST,
            "tampered": os.environ.get("KERNELSMITH_TAMPERED"), "cwd": os.getcwd(), "folder": folder,
            "files": sorted(os.listdir(folder)), "tmp": tempfile.gettempdir(),
            "paths": {v: os.environ.get(v) for v in tc.WRITE_PATH_VARIABLES}}


def test_a_request_that_changes_its_process_does_not_change_the_next(tmp_path):
    assert tc.run_isolated(tamper, {}, str(tmp_path)) == {"ok": True, "counter": 1}
    seen = tc.run_isolated(observe, {}, str(tmp_path))
    assert seen["counter"] == 0 and seen["gate"] == "refused" and seen["core"] is False
    assert seen["tampered"] is None
    # Its own fresh folder inside the working folder: the working directory, triton's cache, home, dump
    # and override folders, TMPDIR, HOME and tempfile's folder.
    folder = seen["folder"]
    assert pathlib.Path(folder).parent == tmp_path and seen["files"] == []
    assert seen["cwd"] == folder and seen["tmp"] == folder
    assert set(seen["paths"].values()) == {folder}
    # This process is untouched, and the requests' folders are gone.
    assert os.environ.get("KERNELSMITH_TAMPERED") is None and _STATE["counter"] == 0
    assert list(tmp_path.iterdir()) == []


def alive(pid: int) -> bool:
    """Whether a process still runs (a zombie does not) a moment after it was sent SIGKILL (which a
    process that is not this one's child may take a little while to act on)."""
    deadline = time.monotonic() + 2.0
    while True:
        try:
            with open(f"/proc/{pid}/stat") as handle:
                running = handle.read().rsplit(")", 1)[1].split()[0] != "Z"
        except OSError:
            running = False
        if not running or time.monotonic() > deadline:
            return running
        time.sleep(0.01)


def leave_processes(request, folder):
    """Starts processes that would outlive the request: a sleep in its group, one that left the group
    for a session of its own, and the grandchild of a double fork."""
    in_group = subprocess.Popen(["sleep", "60"])
    own_session = subprocess.Popen(["sleep", "61"], start_new_session=True)
    read_fd, write_fd = os.pipe()
    if os.fork() == 0:
        if os.fork() == 0:
            os.write(write_fd, str(os.getpid()).encode())
            time.sleep(60)
        os._exit(0)
    orphan = int(os.read(read_fd, 32))
    return {"ok": True, "pids": [in_group.pid, own_session.pid, orphan]}


def test_processes_a_request_leaves_are_killed_before_the_next(tmp_path):
    reply = tc.run_isolated(leave_processes, {}, str(tmp_path))
    in_group, own_session, orphan = reply["pids"]
    assert not alive(in_group) and not alive(orphan)
    os.kill(own_session, signal.SIGKILL)  # this process is no subreaper: the next test shows the helper's case


SUBREAPER_SCRIPT = """
import json, os, sys
sys.path.insert(0, sys.argv[2])
import test_triton_compile as t
from kernelsmith import triton_compile as tc
assert tc.become_subreaper()
tc.run_isolated(t.write_to_stdout, {}, sys.argv[1])
reply = tc.run_isolated(t.leave_processes, {}, sys.argv[1])
print(json.dumps({"pids": reply["pids"], "alive": [t.alive(pid) for pid in reply["pids"]]}))
"""


def test_a_subreaper_also_kills_processes_that_left_the_group(tmp_path):
    """As the helper runs (a subreaper, in a process of its own here): a process that started a session
    of its own is killed too; and what a request writes to its standard output does not reach the
    helper's replies (it goes to the helper's log, standard error)."""
    done = subprocess.run([sys.executable, "-c", SUBREAPER_SCRIPT, str(tmp_path), str(pathlib.Path(__file__).parent)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    [line] = done.stdout.splitlines()  # the script's own line only: no forged reply
    result = json.loads(line)
    assert result["alive"] == [False, False, False], result
    assert "forged" in done.stderr


def write_to_stdout(request, folder):
    os.write(1, b'{"id": 1, "ok": true, "forged": true}\n')
    print("forged by print", flush=True)
    return {"ok": True}


def crash(request, folder):
    os.kill(os.getpid(), signal.SIGSEGV)


def exit_early(request, folder):
    os._exit(3)


def raise_error(request, folder):
    raise SystemExit("no")


def close_and_hang(request, folder):
    os.closerange(3, 1 << 16)
    time.sleep(60)


@pytest.mark.parametrize("handler, words", [
    (crash, "killed by signal 11"), (exit_early, "exited with status 3"), (raise_error, "SystemExit: no"),
    (close_and_hang, "closed its pipe"),
])
def test_a_request_that_ends_badly_is_one_failure_reply(tmp_path, handler, words):
    started = time.monotonic()
    reply = tc.run_isolated(handler, {}, str(tmp_path))
    assert reply["ok"] is False and words in reply["message"], reply
    assert time.monotonic() - started < 30
    assert list(tmp_path.iterdir()) == []
    # And the next request is served.
    assert tc.run_isolated(lambda request, folder: {"ok": True, "n": request["n"]}, {"n": 2}, str(tmp_path)) == \
        {"ok": True, "n": 2}


@needs_triton
def test_an_isolated_compile_matches_one_in_this_process(tmp_path):
    isolated = tc.run_isolated(tc._compile_in, request(), str(tmp_path))
    direct = tc.handle(tc.Compiler(), request())
    assert isolated["ok"] and direct["ok"], (isolated, direct)
    # The same kernel (the cubins differ only in the file name of their line information).
    same = {k: v for k, v in isolated.items() if k not in ("cubin", "ptxas_log")}
    assert same == {k: v for k, v in direct.items() if k not in ("cubin", "ptxas_log")}
    assert base64.b64decode(isolated["cubin"])[:4] == b"\x7fELF"
    assert list(tmp_path.iterdir()) == []


def test_the_language_row_and_plan_of_a_triton_file():
    candidate = ks.Candidate.from_file(str(EXAMPLE))
    assert candidate.language == "triton"
    plan = ks.LaunchPlan.parse(candidate.source, "triton")
    launch = plan.launches[0]
    assert launch.kernel == "add"
    assert launch.constexprs == [("BLOCK", "BLOCK")]
    assert launch.num_warps == "WARPS" and launch.num_stages == "3"
    assert ks.evaluate_expression(launch.block[0], {"WARPS": 4}) == 128


def test_reversed_program_ids_for_the_schedule_check():
    reversed_source = tc.reverse_program_ids(KERNEL)
    assert "tl.program_id(0)" not in reversed_source.replace("kernelsmith_reversed_tl.program_id(0)", "")
    assert "kernelsmith_reversed_tl.num_programs(0) - 1 - kernelsmith_reversed_tl.program_id(0)" in reversed_source
    tc.check_source(reversed_source)  # still a candidate the gate accepts
    with pytest.raises(tc.GateError):
        tc.reverse_program_ids("import os\n" + KERNEL)


@needs_triton
def test_the_reversed_build_compiles():
    reply = tc.handle(tc.Compiler(), request(reverse_program_ids=True))
    assert reply["ok"], reply
