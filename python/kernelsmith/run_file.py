"""Run files: one TOML (or YAML) file that describes a `kernelsmith evolve` run (docs/cli.md#run-files).

Its keys are the options of `kernelsmith evolve`, each spelled as its flag without the dashes and with '_' for '-'
(`--max-llm-calls` is `max_llm_calls`); the flags themselves are the one table of what a key means, takes and
defaults to. `load_run_file` reads and checks a file; `settings_from_store` reads back the effective settings a run
was started with, and `to_toml` writes them as a run file that starts the same run again.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Dict, Mapping, Optional

__all__ = ["load_run_file", "check_settings", "effective_settings", "settings_from_store", "to_toml"]

# Options of `kernelsmith evolve` that say how to invoke it rather than what the run is.
_INVOCATION = {
    "config": "it names the run file itself",
    "resume": "continuing a stored run is a choice made when starting it: pass --resume",
    "json": "the output format is a choice made when starting it: pass --json",
}


def _options() -> Dict[str, argparse.Action]:
    """The run file's keys, in the order `kernelsmith evolve --help` lists them, with the flag that defines each."""
    from kernelsmith.cli import evolve_parser

    return {action.dest: action for action in evolve_parser()._actions
            if action.dest not in _INVOCATION and action.dest != "help"}


def _kind(action: argparse.Action) -> str:
    if isinstance(action, argparse._StoreTrueAction):
        return "bool"
    if isinstance(action, argparse._AppendAction):
        return "list"
    return {int: "int", float: "float"}.get(action.type, "str")


_KIND_TEXT = {"bool": "true or false", "list": "a list of strings", "int": "an integer", "float": "a number",
              "str": "a string"}


def _flag(action: argparse.Action) -> str:
    return action.option_strings[0]


def _checked_value(key: str, value: Any, action: argparse.Action, origin: str) -> Any:
    kind = _kind(action)
    if value is None and action.default is None:
        return None  # YAML's null: the flag's own default (none)
    if kind == "bool":
        ok = isinstance(value, bool)
    elif kind == "int":
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif kind == "float":
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        value = float(value) if ok else value
    elif kind == "list":
        ok = isinstance(value, list) and all(isinstance(item, str) for item in value)
    else:
        ok = isinstance(value, str)
    if not ok:
        example = f" (as {_flag(action)} takes; e.g. {key} = {_example(action)})"
        raise _error(f"{origin}: key '{key}' must be {_KIND_TEXT[kind]}{example}, not {type(value).__name__} "
                     f"{value!r}")
    if action.choices is not None and value not in action.choices:
        raise _error(f"{origin}: key '{key}' is {value!r}; give one of {', '.join(map(repr, action.choices))}")
    return value


def _example(action: argparse.Action) -> str:
    kind = _kind(action)
    return {"bool": "true", "int": "8", "float": "2.5", "list": '["a", "b"]'}.get(
        kind, json.dumps(action.choices[0] if action.choices else "text"))


def _error(message: str) -> Exception:
    from kernelsmith import _core

    return _core.ValidationError(message)


def check_settings(settings: Mapping[str, Any], origin: str = "run settings") -> Dict[str, Any]:
    """The settings of a run file (keys as in the file), checked: an unknown key or a value of the wrong type is a
    ValidationError naming the key, `origin` and what is accepted. Returns a new dict, integers given for numbers
    made floats."""
    if not isinstance(settings, Mapping):
        raise _error(f"{origin}: a run file holds keys and values (a TOML table or a YAML mapping), not "
                     f"{type(settings).__name__}")
    options = _options()
    checked = {}
    for key, value in settings.items():
        if key not in options:
            why = f" ({_INVOCATION[key]})" if key in _INVOCATION else ""
            near = "-" in str(key) and str(key).replace("-", "_") in options
            hint = f" (did you mean '{str(key).replace('-', '_')}'?)" if near else ""
            raise _error(f"{origin}: unknown key '{key}'{why}{hint}; fix or remove it. The accepted keys (the flags "
                         f"of `kernelsmith evolve`, '_' for '-'): {', '.join(options)}")
        checked[key] = _checked_value(key, value, options[key], origin)
    return checked


def load_run_file(path: "str | os.PathLike") -> Dict[str, Any]:
    """The checked settings of a run file: TOML (.toml), or YAML (.yaml, .yml) when PyYAML is installed
    (`pip install 'kernelsmith[yaml]'`). Raises NotFoundError for a missing file, ValidationError for one that
    cannot be read or holds an unknown key or a value of the wrong type."""
    from kernelsmith import _core

    path = os.fspath(path)
    if not os.path.isfile(path):
        raise _core.NotFoundError(f"run file '{path}' does not exist: give the path of a .toml (or .yaml) file")
    extension = os.path.splitext(path)[1].lower()
    with open(path, "rb") as stream:
        data = stream.read()
    if extension in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError:
            raise _core.NotSupportedError(f"run file '{path}': YAML needs PyYAML (pip install 'kernelsmith[yaml]'), "
                                          "or write the file as TOML") from None
        try:
            settings = yaml.safe_load(data) or {}
        except yaml.YAMLError as error:
            raise _error(f"run file '{path}' is not valid YAML: {error}") from None
    elif extension == ".toml":
        try:
            import tomllib
        except ImportError:  # Python < 3.11
            import tomli as tomllib
        try:
            settings = tomllib.loads(data.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
            raise _error(f"run file '{path}' is not valid TOML: {error}") from None
    else:
        raise _error(f"run file '{path}': name it .toml (or .yaml, .yml with PyYAML) so that its format is known")
    return check_settings(settings, f"run file '{path}'")


def effective_settings(args: argparse.Namespace) -> Dict[str, Any]:
    """Every run-file key with the value an evolve run uses (the flags', the file's or the default), unset ones
    (None) left out: the mapping stored with the run (EvolutionConfig.run_file)."""
    values = {key: getattr(args, key, action.default) for key, action in _options().items()}
    return {key: value for key, value in values.items() if value is not None}


def namespace_of(settings: Mapping[str, Any]) -> argparse.Namespace:
    """The evolve options of checked `settings`, the defaults filling in what they leave out."""
    options = _options()
    values = {key: action.default for key, action in options.items()}
    values.update(settings)
    return argparse.Namespace(**values)


def settings_from_store(db: "str | os.PathLike", run_id: Optional[int] = None) -> Dict[str, Any]:
    """The effective settings stored with run `run_id` of the run store `db` (its latest run when None).
    NotFoundError when the run was not started from a run file's settings (`kernelsmith evolve`, or
    `evolve(config=...)`)."""
    from kernelsmith import _core

    path = os.fspath(db)
    if not os.path.isfile(path):
        raise _core.NotFoundError(f"no run store at {path}: give the --db file that `kernelsmith evolve` wrote")
    store = _core.RunStore(path, read_only=True)
    run = store.latest_run() if run_id is None else store.run(run_id)
    if run is None:
        raise _core.NotFoundError(f"the run store {path} holds no run yet")
    settings = json.loads(run.config_json).get("run_file") or {}
    if not settings:
        raise _core.NotFoundError(f"run {run.id} of {path} has no run file stored: it was started neither by "
                                  "`kernelsmith evolve` nor by evolve(config=...) (but by `kernelsmith kernelbench "
                                  "run`, by Python without config=, or by a kernelsmith older than run files); its "
                                  "EvolutionConfig is in RunInfo.config_json")
    return check_settings(settings, f"the run file stored with run {run.id} of {path}")


def to_toml(settings: Mapping[str, Any], header: str = "") -> str:
    """`settings` as a run file, in the order of `kernelsmith evolve --help`, after `header`'s lines as comments."""
    try:
        import tomli_w
    except ImportError:
        raise _error(f"printing a run file needs the tomli-w package, which {sys.executable} lacks: "
                           "`pip install tomli-w` (a dependency of kernelsmith, left out by a --no-deps "
                           "install)") from None

    order = list(_options())
    ordered = {key: settings[key] for key in sorted(settings, key=order.index)}
    comments = "".join(f"# {line}\n" for line in header.splitlines())
    return comments + tomli_w.dumps(ordered)
