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
