"""Run files (docs/cli.md#run-files): `kernelsmith evolve --config FILE` runs a real evolution on PoCL, flags given
beside it override it, an unknown key or a wrong type is refused naming the key, the file and what is accepted, the
effective settings are stored with the run, and `kernelsmith report --config` prints a file that starts the same run
again; `ks.evolve(config=...)` takes the same mapping."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import kernelsmith as ks
from backends import needs_opencl
from kernelsmith.cli import main
from kernelsmith.run_file import settings_from_store
from loopback_llm import LoopbackLlmServer, chat_reply

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def small_task(tmp_path_factory) -> Path:
    """The built-in relu on 2^16 elements, as a task manifest, so that PoCL times it quickly."""
    document = json.loads(ks.Task.load("relu").to_json())
    document["sizes"] = {"N": 1 << 16}
    path = tmp_path_factory.mktemp("task") / "relu_small.json"
    path.write_text(json.dumps(document))
    return path


def kernelsmith(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kernelsmith", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def stored_configs(db: Path) -> list:
    """The EvolutionConfig JSON of each run of the store, the run file's settings under 'run_file'."""
    return [json.loads(run.config_json) for run in ks.RunStore(str(db), True).runs()]


def toml_string(value: str) -> str:
    return json.dumps(value)  # a JSON string is a TOML basic string


@needs_opencl
def test_a_run_file_runs_flags_override_it_and_report_prints_a_file_that_runs_it_again(tmp_path, small_task):
    (tmp_path / "run.toml").write_text(
        f"task = {toml_string(str(small_task))}\n"
        'backend = "opencl"\nmutator = "param"\nbudget = 3\nislands = 1\nseed = 4\ndb = "run.db"\n'
    )
    first = kernelsmith("evolve", "--config", "run.toml", "--budget", "4", "--json", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["evaluations"] == 4  # the flag's budget, not the file's 3
    (config,) = stored_configs(tmp_path / "run.db")
    assert (config["budget"], config["islands"], config["seed"]) == (4, 1, 4)
    settings = config["run_file"]
    assert settings["task"] == str(small_task) and settings["budget"] == 4 and settings["islands"] == 1
    assert settings["mutator"] == "param" and settings["backend"] == "opencl" and settings["db"] == "run.db"
    assert "resume" not in settings and "json" not in settings and "config" not in settings

    printed = kernelsmith("report", "--db", "run.db", "--config", cwd=tmp_path)
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout.startswith("# run 1 of relu, stored in run.db\n")
    assert tomllib.loads(printed.stdout) == settings
    (tmp_path / "again.toml").write_text(printed.stdout)

    again = kernelsmith("evolve", "--config", "again.toml", "--json", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["evaluations"] == 4
    first_config, second_config = stored_configs(tmp_path / "run.db")
    assert second_config == first_config  # the same effective configuration, the engine's settings included
    reprinted = kernelsmith("report", "--db", "run.db", "--config", cwd=tmp_path).stdout
    assert reprinted.replace("# run 2 ", "# run 1 ", 1) == printed.stdout


def relu_source(block: int) -> str:
    return (f"// @launch relu<<<ceil_div(N, {block}), {block}>>>(x, y, N)\n"
            "__kernel void relu(__global const float* x, __global float* y, int N) {\n"
            "  const int i = get_global_id(0);\n"
            "  if (i < N) y[i] = fmax(x[i], 0.0f);\n"
            "}\n")


@needs_opencl
def test_a_run_file_sets_the_model_endpoint_and_budgets_and_a_repeated_flag_replaces_its_list(
        tmp_path, small_task, capsys):
    """The LLM mutator, its endpoint (a loopback server reporting usage), a cap on calls and prices, all from the
    file; --llm-price on the command line replaces the file's prices instead of adding to them."""
    blocks = iter([32, 64, 128, 512, 1024, 16, 8])

    def responder(body, index):
        return chat_reply(f"```opencl\n{relu_source(next(blocks))}```\n", prompt_tokens=100, completion_tokens=20)

    db = tmp_path / "llm.db"
    with LoopbackLlmServer(responder=responder) as server:
        (tmp_path / "llm.toml").write_text(
            f"task = {toml_string(str(small_task))}\nbackend = \"opencl\"\nmutator = \"llm\"\n"
            f"llm_url = {toml_string(server.url)}\nmodel = \"file-model\"\napi_key_env = \"\"\n"
            'budget = 20\nislands = 1\nin_flight = 1\nmax_llm_calls = 2\nllm_price = ["*=1.0,2.0"]\n'
            f"db = {toml_string(str(db))}\n"
        )
        status = main(["evolve", "--config", str(tmp_path / "llm.toml"), "--llm-price", "file-model=0.5,0.25",
                       "--json"])
    assert status == 0, capsys.readouterr().err
    document = json.loads(capsys.readouterr().out)
    assert document["stop_reason"] == "llm_budget"
    assert [request.body["model"] for request in server.received] == ["file-model", "file-model"]
    (config,) = stored_configs(db)
    assert config["max_llm_calls"] == 2
    assert config["llm_prices"] == {"file-model": {"prompt_per_1k": 0.5, "completion_per_1k": 0.25}}
    assert config["run_file"]["llm_price"] == ["file-model=0.5,0.25"]
    assert config["run_file"]["llm_url"] == server.url and config["run_file"]["mutator"] == "llm"

    assert main(["report", "--db", str(db), "--json"]) == 0
    llm = json.loads(capsys.readouterr().out)["llm"]
    assert llm["calls"] == 2
    assert llm["cost"] == pytest.approx(2 * (100 * 0.5 + 20 * 0.25) / 1000)


def test_an_unknown_key_is_refused_naming_the_key_the_file_and_the_accepted_keys(tmp_path):
    (tmp_path / "run.toml").write_text('task = "relu"\nbudjet = 3\ndb = "never.db"\n')
    result = kernelsmith("evolve", "--config", "run.toml", cwd=tmp_path)
    assert result.returncode == 1
    message = result.stderr.strip()
    assert "\n" not in message and "Traceback" not in message
    assert message.startswith("kernelsmith evolve: run file 'run.toml': unknown key 'budjet'; fix or remove it. "
                              "The accepted keys (the flags of `kernelsmith evolve`, '_' for '-'): task, backend, ")
    accepted = message.split(": ")[-1].split(", ")
    for key in ("budget", "mutator", "model", "llm_url", "max_llm_calls", "max_llm_tokens", "max_llm_cost",
                "llm_price", "islands", "memory", "skills"):
        assert key in accepted
    assert not (tmp_path / "never.db").exists()  # refused before anything started

    (tmp_path / "dashes.toml").write_text('task = "relu"\nmax-llm-calls = 3\n')
    result = kernelsmith("evolve", "--config", "dashes.toml", cwd=tmp_path)
    assert "unknown key 'max-llm-calls' (did you mean 'max_llm_calls'?)" in result.stderr

    (tmp_path / "resume.toml").write_text('task = "relu"\nresume = true\n')
    result = kernelsmith("evolve", "--config", "resume.toml", cwd=tmp_path)
    assert "unknown key 'resume' (continuing a stored run is a choice made when starting it: pass --resume)" in \
        result.stderr


@pytest.mark.parametrize("line, expected", [
    ('islands = "two"', "key 'islands' must be an integer (as --islands takes; e.g. islands = 8), not str 'two'"),
    ("budget = 2.5", "key 'budget' must be an integer (as --budget takes; e.g. budget = 8), not float 2.5"),
    ('require_sandbox = "yes"', "key 'require_sandbox' must be true or false"),
    ('skills = "bank.json"', "key 'skills' must be a list of strings"),
    ('backend = "vulkan"', "key 'backend' is 'vulkan'; give one of 'auto', 'cuda', 'opencl', 'maca'"),
    ('task = "relu', "is not valid TOML"),
])
def test_a_value_of_the_wrong_type_is_refused_with_what_the_key_takes(tmp_path, capsys, line, expected):
    path = tmp_path / "run.toml"
    path.write_text(line + "\n")
    assert main(["evolve", "--config", str(path)]) == 1
    error = capsys.readouterr().err
    assert error.startswith(f"kernelsmith evolve: run file '{path}'")
    assert expected in error


def test_a_run_file_needs_a_task_and_a_known_format(tmp_path, capsys):
    (tmp_path / "run.toml").write_text("budget = 3\n")
    assert main(["evolve", "--config", str(tmp_path / "run.toml")]) == 1
    assert "no task: give --task" in capsys.readouterr().err
    (tmp_path / "run.ini").write_text("budget = 3\n")
    assert main(["evolve", "--config", str(tmp_path / "run.ini")]) == 1
    assert "name it .toml (or .yaml, .yml with PyYAML)" in capsys.readouterr().err


@needs_opencl
def test_evolve_in_python_takes_the_same_mapping_and_a_yaml_file(tmp_path, small_task, capsys):
    db = tmp_path / "python.db"
    mapping = {"task": str(small_task), "backend": "opencl", "budget": 3, "islands": 1, "seed": 2, "db": str(db)}
    run = ks.evolve(config=mapping, progress=False)
    assert run.result.evaluations == 3
    settings = settings_from_store(db)
    assert {key: settings[key] for key in mapping} == mapping
    assert settings["mutator"] == "param" and settings["experience"] == 3  # the command's defaults fill in
    assert main(["report", "--db", str(db), "--config"]) == 0
    assert tomllib.loads(capsys.readouterr().out) == settings

    with pytest.raises(ValueError, match="config= describes the whole run"):
        ks.evolve(config=mapping, mutator=ks.ParamMutator())
    with pytest.raises(ks.ValidationError, match=r"evolve\(config=...\): unknown key 'island'"):
        ks.evolve(config={**mapping, "island": 2})

    yaml = pytest.importorskip("yaml")
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(mapping))
    assert ks.load_run_file(tmp_path / "run.yaml") == mapping


def test_the_run_file_travels_in_the_evolution_config_json():
    config = ks.EvolutionConfig()
    assert json.loads(config.to_json())["run_file"] == {}
    config.run_file = json.dumps({"task": "relu", "budget": 4})
    assert json.loads(ks.EvolutionConfig.from_json(config.to_json()).run_file) == {"task": "relu", "budget": 4}
    config.run_file = "[1, 2]"
    with pytest.raises(ks.ValidationError, match="run_file must be a JSON object"):
        config.validate()


def test_report_config_of_a_run_without_a_run_file_says_so(tmp_path, capsys):
    db = tmp_path / "old.db"
    shutil.copyfile(ROOT / "tests" / "data" / "run_store_v1.db", db)
    assert main(["report", "--db", str(db), "--config"]) == 1
    error = capsys.readouterr().err
    assert "has no run file stored: it was started neither by `kernelsmith evolve` nor by evolve(config=...)" in error


def toml_blocks(text: str) -> list:
    return re.findall(r"^```toml\n(.*?)^```", text, flags=re.S | re.M)


@needs_opencl
def test_the_run_files_of_docs_cli_md_are_valid_and_the_first_runs(tmp_path, small_task, capsys):
    blocks = toml_blocks((ROOT / "docs" / "cli.md").read_text())
    assert len(blocks) >= 2
    for index, block in enumerate(blocks):
        path = tmp_path / f"block{index + 1}.toml"
        path.write_text(block)
        ks.load_run_file(path)  # every key known, every value of its type
    # The first, as written but on the small relu so that PoCL runs it in seconds.
    status = main(["evolve", "--config", str(tmp_path / "block1.toml"), "--task", str(small_task),
                   "--db", str(tmp_path / "docs.db"), "--json"])
    assert status == 0, capsys.readouterr().err
    document = json.loads(capsys.readouterr().out)
    assert document["evaluations"] == tomllib.loads(blocks[0])["budget"]
