"""kernelsmith: evolutionary, LLM-driven GPU kernel optimization.

The compiled core (``kernelsmith._core``) holds the evaluator, the search and the run store; this
package re-exports it and adds the pure-Python layer: LLM clients, notebook helpers and the CLI.
"""

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
    TimeoutError,
    ValidationError,
)
from kernelsmith._core import *  # noqa: F401,F403  (every bound concept)
