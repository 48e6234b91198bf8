"""Which backends this machine runs, for the tests' skip marks (`from backends import needs_opencl`)."""

from __future__ import annotations

import pytest

import kernelsmith as ks


def backend_available(name: str) -> bool:
    """True when the backend `name` ('opencl', 'cuda') has a device here."""
    try:
        return any(b.name == name and b.available for b in ks.devices())
    except ks.Error:
        return False


needs_opencl = pytest.mark.skipif(not backend_available("opencl"), reason="no OpenCL device (install pocl-opencl-icd)")


def fast_opencl_evaluator(cache_dir, **overrides) -> "ks.Evaluator":
    """The evaluator on the OpenCL device with the protocol cut short (screen mode, one correctness trial, a
    50 ms timing budget): what tests that run real searches on PoCL need. `overrides` sets more
    EvaluatorOptions fields by name."""
    options = ks.EvaluatorOptions()
    options.backend = "opencl"
    options.mode = "screen"
    options.correctness_trials = 1
    options.screen_budget_seconds = 0.05
    options.min_samples = 5
    options.cache_dir = str(cache_dir)
    for name, value in overrides.items():
        setattr(options, name, value)
    return ks.create_evaluator(options)
