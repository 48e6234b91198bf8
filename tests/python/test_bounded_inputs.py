"""Bounded parsers and contained paths, attacked as a hostile task, skill bank, run store or LLM endpoint would:
deep parentheses and long unary chains in plan expressions and skill predicates, deep JSON in a task manifest,
a skill bank, a stored row (a real SQLite run store) and an answer, and files named out of their folder. Each
gets an error that names where and the limit. The cases that used to overflow the C++ stack run in a child
Python, so that a SIGSEGV fails the test instead of killing pytest."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from contextlib import closing
from pathlib import Path

import pytest

import kernelsmith as ks
from kernelsmith import _inputs
from kernelsmith.kernelbench import runner
from kernelsmith.training import report as training_report
from loopback_llm import LoopbackLlmServer, Reply

EXPRESSION_LIMIT = "nested deeper than 256 levels"
JSON_LIMIT = f"nested deeper than {_inputs.MAX_JSON_DEPTH} levels"
REFERENCE = "// @launch scale<<<ceil_div(N, 64), 64>>>(x, y, N)\n__kernel void scale() {}\n"


def nested(depth: int) -> str:
    return "[" * depth + "1" + "]" * depth


def isolated(code: str, *args: str) -> str:
    """Runs `code` (with `args` in sys.argv[1:]) in a fresh Python and returns what it printed. A crash (a
    negative exit status: killed by a signal) or an exception fails the test."""
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, (f"the child exited with status {result.returncode} (negative: killed by that "
                                    f"signal)\n{result.stderr[-3000:]}")
    return result.stdout


def manifest_naming(reference: object) -> str:
    """A task manifest whose OpenCL reference is `reference` (a file name, or any JSON value)."""
    return json.dumps({
        "schema": "kernelsmith.task/1", "name": "scale", "sizes": {"N": 1024},
        "tensors": [{"name": "x", "dtype": "float32", "shape": ["N"], "role": "input"},
                    {"name": "y", "dtype": "float32", "shape": ["N"], "role": "output"}],
        "work": {"flops": "N", "bytes": "8 * N"},
        "references": {"opencl": reference}}, indent=1)


def skill_bank(skill: dict) -> str:
    return json.dumps({"schema": "kernelsmith.skills/1", "skills": [skill]})


# ------------------------------------------------------------------------------------------ plan expressions

def test_deep_parentheses_and_long_unary_chains_in_plans_are_errors_not_crashes():
    out = isolated("""
        import kernelsmith as ks
        attacks = {
            "parentheses": "(" * 5000 + "N" + ")" * 5000,
            "unary minus": "-" * 1000000 + "N",
            "plus chain": "N" + " + 1" * 200000,
            "calls": "max(1, " * 5000 + "N" + ")" * 5000,
        }
        for name, text in attacks.items():
            try:
                ks.evaluate_expression(text, {"N": 4})
                print(name, "accepted", sep="|")
            except ks.PlanError as error:
                print(name, "refused", len(str(error)), str(error)[-200:], sep="|")
        # A 12 KB plan line: the error names its line.
        for grid in ("(" * 6000 + "N" + ")" * 6000, "-" * 12000 + "N"):
            source = "__kernel void k() {}\\n// @launch k<<<" + grid + ", 64>>>(x, y, N)\\n"
            try:
                ks.LaunchPlan.parse(source, "opencl")
                print("plan", "accepted", sep="|")
            except ks.PlanError as error:
                print("plan", "refused", error.line, str(error)[:16] + "..." + str(error)[-200:], sep="|")
    """)
    lines = [line.split("|", 3) for line in out.splitlines()]
    assert len(lines) == 6, out
    for name, verdict, length, message in lines[:4]:
        assert verdict == "refused" and EXPRESSION_LIMIT in message, (name, message)
        assert int(length) < 600, name  # the expression is cut in the message, not repeated whole
    for name, verdict, line, message in lines[4:]:
        assert verdict == "refused" and line == "2", message
        assert message.startswith("line 2: @launch") and EXPRESSION_LIMIT in message, message
    # Just under the limit, an expression still evaluates.
    assert ks.evaluate_expression("(" * 255 + "N" + ")" * 255, {"N": 4}) == 4


def test_deep_skill_predicates_are_errors_not_crashes(tmp_path):
    bank = tmp_path / "skills.json"
    bank.write_text(skill_bank({"name": "a", "when": "(" * 5000 + "true" + ")" * 5000, "advice": "x"}))
    out = isolated("""
        import sys
        import kernelsmith as ks
        for text in ("not " * 100000 + "true", "(" * 5000 + "true" + ")" * 5000, "-" * 1000000 + "1 > 0",
                     "true" + " and true" * 100000):
            try:
                ks.Predicate(text)
                print("accepted")
            except ks.ValidationError as error:
                print("refused:", str(error)[-220:])
        try:
            ks.SkillBank.load(sys.argv[1])
            print("accepted")
        except ks.ValidationError as error:
            print("refused:", str(error)[:300])
    """, str(bank))
    lines = out.splitlines()
    assert len(lines) == 5, out
    for line in lines:
        assert line.startswith("refused:") and EXPRESSION_LIMIT in line, line
    assert f"{bank}: skills[0].when: predicate" in lines[4]


# ------------------------------------------------------------------------------------------ JSON in files

def test_deep_json_in_a_task_manifest_and_a_skill_bank_names_the_file_the_line_and_the_limit(tmp_path):
    task = tmp_path / "task"
    task.mkdir()
    manifest = manifest_naming("PLACEHOLDER")
    line = manifest[:manifest.index("PLACEHOLDER")].count("\n") + 1
    (task / "task.json").write_text(manifest.replace('"PLACEHOLDER"', nested(100000)))
    bank = tmp_path / "bank.json"
    bank.write_text(skill_bank({"name": "a", "when": "true", "advice": "PLACEHOLDER"}).replace('"PLACEHOLDER"',
                                                                                              nested(100000)))
    out = isolated("""
        import sys
        import kernelsmith as ks
        for load, path in ((ks.Task.load, sys.argv[1]), (ks.SkillBank.load, sys.argv[2])):
            try:
                load(path)
                print("accepted")
            except ks.ValidationError as error:
                print("refused:", error)
    """, str(task), str(bank))
    task_line, bank_line = out.splitlines()
    assert task_line.startswith(f"refused: {task / 'task.json'}: line {line}, column "), task_line
    assert bank_line.startswith(f"refused: {bank}: line 1, column "), bank_line
    for line in (task_line, bank_line):
        assert JSON_LIMIT in line


@pytest.fixture
def store_with_rows(tmp_path):
    """A real run store with a run, a program with an evaluation, a step with retrieved experience and an
    experience record; the tests then damage one column behind the library's back."""
    path = tmp_path / "runs.db"
    store = ks.RunStore(str(path))
    info = ks.RunInfo()
    info.task_name, info.config_json, info.task_json, info.language = "relu", "{}", "{}", "opencl"
    run = store.create_run(info)
    candidate = ks.Candidate("opencl", "__kernel void k() {}")
    store.add_program(run, "ref", candidate, "h0")
    step = ks.StepRecord()
    step.run, step.selection, step.mutation = run, "policy", "llm_diff"
    step_id = store.add_step(step)
    evaluation = ks.Evaluation()
    evaluation.candidate_id, evaluation.task, evaluation.status = "ref", "relu", ks.Status.ok
    store.add_evaluation(run, "ref", 0, evaluation)
    item = ks.ExperienceItem()
    item.task, item.skill, item.edit = "relu", "fuse_kernels", "llm_diff"
    store.add_experience(run, step_id, item)
    del store
    return path, run


def damage(path: Path, statement: str) -> None:
    with closing(sqlite3.connect(path)) as connection:
        connection.execute(statement)
        connection.commit()


@pytest.mark.parametrize("column, statement, read", [
    ("programs.parent_ids", "UPDATE programs SET parent_ids = '{deep}'", "programs"),
    ("evaluations.json", "UPDATE evaluations SET json = '{{\"status\": {deep}}}'", "evaluations"),
    ("steps.retrieved", "UPDATE steps SET retrieved = '{deep}'", "steps"),
    ("experience.task_features", "UPDATE experience SET task_features = '{deep}'", "experience"),
])
def test_deep_json_in_a_stored_row_is_an_error_not_a_crash(store_with_rows, column, statement, read):
    path, run = store_with_rows
    damage(path, statement.format(deep=nested(100000)))
    out = isolated(f"""
        import sys
        import kernelsmith as ks
        try:
            ks.RunStore(sys.argv[1], True).{read}({run})
            print("accepted")
        except ks.Error as error:
            print("refused:", error)
    """, str(path))
    assert out.startswith("refused:") and JSON_LIMIT in out, out


def test_python_readers_of_stored_rows_say_where_a_deep_document_is(store_with_rows):
    path, run = store_with_rows
    damage(path, f"UPDATE runs SET config = '{nested(100000)}'")
    with pytest.raises(_inputs.JsonTooDeep, match=rf"'{path}': run {run}: its config: JSON {JSON_LIMIT}.*line 1"):
        ks.Run.open(path).info()
    from kernelsmith.web.views import Stores

    damage(path, f"UPDATE evaluations SET json = '{{\"status\": {nested(100000)}}}'")
    page = Stores([str(path)]).program(0, run, "ref")
    assert page["evaluation"] is None  # shown as a program without a readable evaluation, not a server error


# ------------------------------------------------------------------------------------------ the Python reader

def test_loads_bounds_depth_and_names_the_source():
    limit = _inputs.MAX_JSON_DEPTH
    assert _inputs.loads(nested(limit)) == json.loads(nested(limit))
    # Just past the limit (which Python's own parser would take) and far past it (where it raises
    # RecursionError): both the same error, with the source, the line and the column.
    for depth in (limit + 1, 100000):
        with pytest.raises(_inputs.JsonTooDeep) as info:
            _inputs.loads('{\n "a":\n' + nested(depth) + "}", "row 7 of runs.db")
        assert str(info.value).startswith(f"row 7 of runs.db: JSON {JSON_LIMIT}")
        assert info.value.lineno == 3 and info.value.colno == limit  # the outer object is the first level
        assert isinstance(info.value, json.JSONDecodeError)  # what every reader already handles
    # Brackets inside strings are text, escaped quotes included.
    text = json.dumps(["[{" * 1000 + '"' + "[" * 1000])
    assert _inputs.loads(text) == json.loads(text)
    with pytest.raises(json.JSONDecodeError):
        _inputs.loads("{not json")


def test_a_deep_llm_answer_is_a_request_error_naming_the_endpoint():
    from kernelsmith.llm import LlmRequestError
    from kernelsmith.llm.http_client import OpenAIChatClient

    with LoopbackLlmServer([Reply(200, '{"choices": ' + nested(100000) + "}")]) as server:
        client = OpenAIChatClient(server.url, "m", max_retries=0)
        with pytest.raises(LlmRequestError, match=rf"answered with a body that is not JSON \(JSON {JSON_LIMIT}"):
            client([{"role": "user", "content": "hi"}])


def test_a_deep_line_of_a_jsonl_file_names_the_file_and_line(tmp_path):
    path = tmp_path / "records.jsonl"
    path.write_text('{"a": 1}\n\n' + nested(100000) + "\n")
    with pytest.raises(_inputs.JsonTooDeep, match=rf"{path}: line 3: JSON {JSON_LIMIT}"):
        training_report.read_jsonl(str(path))


# ------------------------------------------------------------------------------------------ paths

def test_files_a_task_manifest_names_stay_in_the_task_folder(tmp_path):
    task = tmp_path / "task"
    (task / "sub").mkdir(parents=True)
    (tmp_path / "outside.cl").write_text(REFERENCE)
    (task / "sub" / "reference.cl").write_text(REFERENCE)
    (task / "link.cl").symlink_to(tmp_path / "outside.cl")
    (task / "up").symlink_to(tmp_path, target_is_directory=True)
    (task / "inside.cl").symlink_to(task / "sub" / "reference.cl")
    manifest = task / "task.json"
    where = f"{manifest}: references.opencl: "
    for name, message in (("../outside.cl", '"../outside.cl" leads out of the folder'),
                          (str(tmp_path / "outside.cl"), f'"{tmp_path / "outside.cl"}" is an absolute path'),
                          ("link.cl", '"link.cl" leads out of the folder'),
                          ("up/outside.cl", '"up/outside.cl" leads out of the folder'),
                          ("sub/../../outside.cl", '"sub/../../outside.cl" leads out of the folder')):
        manifest.write_text(manifest_naming(name))
        with pytest.raises(ks.ValidationError) as info:
            ks.Task.load(str(task))
        assert str(info.value).startswith(where + message), str(info.value)
    for name in ("sub/reference.cl", "inside.cl", "sub/../sub/reference.cl"):
        manifest.write_text(manifest_naming(name))
        assert "__kernel void scale" in ks.Task.load(str(task)).references["opencl"].source


def test_a_skill_bank_example_cannot_put_another_file_into_the_prompt(tmp_path):
    bank = tmp_path / "bank"
    bank.mkdir()
    (tmp_path / "secret.txt").write_text("the user's secret\n")
    (bank / "example.cu").symlink_to(tmp_path / "secret.txt")
    for name in ("../../../../../../../../etc/passwd", "/etc/passwd", "../secret.txt", "example.cu"):
        (bank / "skills.json").write_text(skill_bank({"name": "a", "when": "true", "advice": "x",
                                                      "examples": {"cuda": name}}))
        with pytest.raises(ks.ValidationError, match=r"skills\.json: skills\[0\]\.examples\.cuda: \""):
            ks.SkillBank.load(str(bank / "skills.json"))


def test_path_inside(tmp_path):
    (tmp_path / "relu").mkdir()
    (tmp_path / "relu2").mkdir()
    (tmp_path / "relu" / "out").symlink_to(tmp_path / "relu2", target_is_directory=True)
    root = os.path.realpath(tmp_path / "relu")
    assert _inputs.path_inside(tmp_path / "relu", "a/../x.cl") == os.path.join(root, "x.cl")
    for name in ("../relu2/x.cl", "out/x.cl", "/etc/passwd", ""):
        with pytest.raises(_inputs.OutsideFolder):
            _inputs.path_inside(tmp_path / "relu", name)


def test_a_seed_folder_is_not_left_by_the_task_name_or_a_link(tmp_path):
    seeds = tmp_path / "seeds"
    (seeds / "scale").mkdir(parents=True)
    (tmp_path / "seed.cl").write_text(REFERENCE)
    (seeds / "scale" / "seed.cl").symlink_to(tmp_path / "seed.cl")
    task = ks.Task.from_json(manifest_naming({"source": REFERENCE}))
    with pytest.raises(ks.ValidationError, match=r"the seed of task scale: .*leads out of the folder"):
        runner.add_seed_from(ks, task, "opencl", seeds)
    (seeds / "scale" / "seed.cl").unlink()
    (seeds / "scale" / "seed.cl").write_text(REFERENCE)
    assert runner.add_seed_from(ks, task, "opencl", seeds) == str(seeds / "scale" / "seed.cl")
