"""Every public class, function, method and property of the compiled core and of the public Python
modules has a docstring (pybind11's generated signature line alone does not count). A failure lists
every public name that lacks one."""

from __future__ import annotations

import importlib
import inspect
import re

import kernelsmith._core as core

PUBLIC_MODULES = ["kernelsmith", "kernelsmith.notebook", "kernelsmith.llm", "kernelsmith.training", "kernelsmith.rl",
                  "kernelsmith.store", "kernelsmith.replay", "kernelsmith.web", "kernelsmith.web.views"]

# What pybind11 and the standard types add to every class: not ours to document.
INHERITED_NOISE = {"name", "value"}  # members pybind11 gives each enum


def is_public(name: str) -> bool:
    return not name.startswith("_")


def has_text(doc: str | None, name: str) -> bool:
    """True when the docstring says something beyond pybind11's signature lines."""
    if not doc:
        return False
    lines = []
    for line in doc.strip().splitlines():
        stripped = line.strip()
        if re.match(rf"^(\d+\. )?{re.escape(name)}\(.*\)( -> .*)?$", stripped):
            continue  # a signature line
        if stripped == "Overloaded function.":
            continue
        lines.append(stripped)
    return any(lines)


def undocumented_members(cls, qualified: str):
    missing = []
    for name, member in vars(cls).items():
        if not is_public(name) or name in INHERITED_NOISE:
            continue
        where = f"{qualified}.{name}"
        if isinstance(member, property):
            if not has_text(member.__doc__, name):
                missing.append(f"{where} (property)")
        elif isinstance(member, (staticmethod, classmethod)):
            if not has_text(member.__func__.__doc__, name):
                missing.append(f"{where} (method)")
        elif callable(member) and not inspect.isclass(member):
            if not has_text(getattr(member, "__doc__", None), name):
                missing.append(f"{where} (method)")
    return missing


def undocumented_in(module, names, prefix: str, own_module: str | None):
    missing = []
    for name in names:
        obj = getattr(module, name)
        if inspect.isclass(obj):
            if own_module is not None and not _defined_in_python_layer(obj):
                continue
            if not has_text(obj.__doc__, name):
                missing.append(f"{prefix}.{name} (class)")
            missing += undocumented_members(obj, f"{prefix}.{name}")
        elif inspect.isfunction(obj) or inspect.isbuiltin(obj) or type(obj).__name__ == "builtin_function_or_method":
            if own_module is not None and not _defined_in_python_layer(obj):
                continue
            if not has_text(obj.__doc__, name):
                missing.append(f"{prefix}.{name} (function)")
    return missing


def test_the_compiled_core_is_documented():
    names = [name for name in dir(core) if is_public(name)]
    check(undocumented_in(core, names, "kernelsmith._core", None), "kernelsmith._core.")


def test_the_python_modules_are_documented():
    missing = []
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        if not has_text(module.__doc__, module_name):
            missing.append(f"{module_name} (module)")
        names = getattr(module, "__all__", None) or [n for n in dir(module) if is_public(n)]
        # The compiled core's names are checked by the test above; the rest once, where first seen.
        missing += undocumented_in(module, names, module_name, module_name)
    check(list(dict.fromkeys(missing)), "kernelsmith", exclude="kernelsmith._core.")


def _defined_in_python_layer(obj) -> bool:
    module = getattr(obj, "__module__", None) or ""
    return module.startswith("kernelsmith") and not module.startswith("kernelsmith._core")


def check(missing: list[str], prefix: str, exclude: str | None = None) -> None:
    missing = [name for name in missing if name.startswith(prefix) and not (exclude and name.startswith(exclude))]
    assert not missing, "public names without a docstring (add one):\n  " + "\n  ".join(missing)
