"""A seed's launch plan checked against a task without a device, for the seed tests (test_triton_seeds.py,
test_kernelbench_seeds.py)."""

from __future__ import annotations

import kernelsmith as ks
from kernelsmith import triton_compile as tc


def check_plan_fits(task: ks.Task, source: str, language: str) -> None:
    """The plan's requirements hold on every size configuration of the task (with an H100's attributes),
    every grid is at least one block and within the y and z limits, every workspace has an element, and
    every launch argument is a task tensor, a workspace or an expression over the sizes and tunables."""
    plan = ks.LaunchPlan.parse(source, language)
    tunes = {param.name: param.value for param in plan.tunables}
    tensors = {spec.name for spec in task.tensors}
    workspaces = {workspace.name for workspace in plan.workspaces}
    for config in task.all_size_configs():
        bindings = {**tc.H100_ATTRIBUTES, **tunes, **dict(config.sizes)}
        for requirement in plan.requirements:
            assert ks.evaluate_expression(requirement, bindings), f"{config.name}: {requirement}"
        for launch in plan.launches:
            grid = [ks.evaluate_expression(g, bindings) for g in launch.grid]
            assert all(g >= 1 for g in grid), f"{config.name}: {launch.kernel} grid {grid}"
            assert all(g <= 65535 for g in grid[1:]), f"{config.name}: {launch.kernel} grid {grid}"
            for arg in launch.args:
                if arg not in tensors and arg not in workspaces:
                    ks.evaluate_expression(arg, bindings)
        for workspace in plan.workspaces:
            assert ks.evaluate_expression(workspace.count, bindings) >= 1, f"{config.name}: {workspace.name}"
