"""The error classes (bindings/errors.cpp, docs/errors.md): the hierarchy mirrors the C++ one and PlanError
carries its line. A broken task raising TaskError through Evaluator.evaluate: test_evaluator.py."""

from pathlib import Path

import pytest

import kernelsmith as ks
from test_docs import python_blocks

ERRORS_DOC = Path(__file__).resolve().parents[2] / "docs" / "errors.md"


@pytest.mark.parametrize(
    "cls, bases",
    [
        (ks.ValidationError, (ks.Error, ValueError)),
        (ks.PlanError, (ks.ValidationError, ValueError)),
        (ks.TaskError, (ks.ValidationError, ValueError)),
        (ks.NotFoundError, (ks.Error, LookupError)),
        (ks.LaunchError, (ks.DeviceError, ks.Error)),
        (ks.Error, (RuntimeError,)),
    ],
)
def test_each_error_class_derives_as_in_cpp(cls, bases):
    for base in bases:
        assert issubclass(cls, base), f"{cls.__name__} should derive from {base.__name__}"
    assert cls.__module__ == "kernelsmith"
    assert cls.__doc__


def test_task_error_and_plan_error_are_distinct():
    assert not issubclass(ks.TaskError, ks.PlanError)
    assert not issubclass(ks.PlanError, ks.TaskError)


def test_plan_error_carries_its_line():
    with pytest.raises(ks.PlanError, match="line 2: @tune") as error:
        ks.LaunchPlan.parse("// @launch k<<<1, 1>>>()\n// @tune B = 3 in {1, 2}\n")
    assert error.value.line == 2
    with pytest.raises(ks.PlanError) as error:
        ks.evaluate_expression("1 +")
    assert error.value.line == 0  # an expression alone has no source line


def test_python_blocks_of_docs_errors_md_run(capsys):
    blocks = python_blocks(ERRORS_DOC.read_text())
    assert len(blocks) >= 2
    for index, block in enumerate(blocks):
        exec(compile(block, f"docs/errors.md block {index + 1}", "exec"), {"__name__": "docs_errors_md"})  # noqa: S102
    printed = capsys.readouterr().out
    assert printed.startswith("0 ")  # the PlanError's line
    assert "no-such-task" in printed
