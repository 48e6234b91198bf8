"""The version without importing the compiled core (for `kernelsmith --version` on a broken install)."""

from importlib import metadata


def version() -> str:
    try:
        from kernelsmith._core import __version__

        return __version__
    except ImportError:
        try:
            return metadata.version("kernelsmith")
        except metadata.PackageNotFoundError:
            return "unknown"
