"""kernelsmith: evolutionary, LLM-driven GPU kernel optimization.

The compiled core (``kernelsmith._core``) holds the evaluator, the search and the run store; this
package re-exports it and adds the pure-Python layer: LLM clients, notebook helpers and the CLI.
"""

import sys as _sys

from kernelsmith._core import (  # noqa: F401  (re-exported API)
    __version__,
    BackendUnavailableError,
    DeviceError,
    DeviceFault,
    Error,
    LaunchError,
    LibraryLoadError,
    LibraryNotFoundError,
    NotFoundError,
    NotSupportedError,
    PlanError,
    StoreError,
    SymbolMissingError,
    TaskError,
    TimeoutError,
    ValidationError,
)
from kernelsmith._core import *  # noqa: F401,F403  (every bound concept)

# Triton candidates are compiled, and the PyTorch oracle of KernelBench tasks runs, in helper processes
# running this interpreter, where triton and torch are installed beside kernelsmith (docs/triton.md,
# docs/kernelbench.md); $KERNELSMITH_PYTHON overrides it.
if _sys.executable:
    set_helper_python(_sys.executable)  # noqa: F405

# The headers and CMake package of the C++ library in this package folder (`python -m kernelsmith --cmake-dir`).
from kernelsmith._cpp_package import get_cmake_dir, get_include  # noqa: E402,F401

# Notebook display and helpers (pure Python; tqdm, pandas and matplotlib are imported only when used).
from kernelsmith.notebook import Run, candidate_html, evaluation_html, evolve  # noqa: E402,F401
from kernelsmith.run_file import load_run_file  # noqa: E402,F401  (evolve(config=...), docs/cli.md#run-files)

Evaluation._repr_html_ = evaluation_html  # noqa: F405
Candidate._repr_html_ = candidate_html  # noqa: F405


def _task_from_kernelbench(path: str, level: "int | None" = None, out_dir: "str | None" = None,
                           **options) -> "Task":  # noqa: F405
    """Task.from_kernelbench(path, level=None, out_dir=None, *, timeout=300, python=None, device="auto"): the
    task of a KernelBench problem file, imported into `out_dir` (a temporary folder when None) by a helper
    process that runs the file (docs/kernelbench.md). The level comes from the file's folder (level1, ...)
    unless given. Raises TaskError with the reason when the problem cannot be imported."""
    from kernelsmith.kernelbench.importer import task_from_kernelbench

    return task_from_kernelbench(path, level, out_dir, **options)


Task.from_kernelbench = staticmethod(_task_from_kernelbench)  # noqa: F405
