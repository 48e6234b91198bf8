"""Where a pip-installed kernelsmith keeps what a C++ program needs, as pybind11 and PyTorch do: the public
headers and the CMake package (kernelsmithConfig.cmake) whose imported target kernelsmith::kernelsmith is the
shared library of this package folder, the one the Python module uses (docs/install.md)."""

from __future__ import annotations

import os

# Not resolved: in a build tree's staged package the sources are symbolic links into the source folder.
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def get_cmake_dir() -> str:
    """The folder of kernelsmith's CMake package (kernelsmithConfig.cmake) in this installed package: pass it as
    -Dkernelsmith_DIR or CMAKE_PREFIX_PATH to a C++ project that calls find_package(kernelsmith). Raises
    FileNotFoundError, saying what to do, where this package was not installed from its wheel."""
    return _existing_folder(os.path.join(_PACKAGE_DIR, "share", "cmake", "kernelsmith"), "kernelsmithConfig.cmake")


def get_include() -> str:
    """The folder holding kernelsmith/kernelsmith.hpp and the other public headers in this installed package (the
    CMake package adds it to a consumer's include path by itself). Raises FileNotFoundError, saying what to do,
    where this package was not installed from its wheel."""
    return _existing_folder(os.path.join(_PACKAGE_DIR, "include"), os.path.join("kernelsmith", "kernelsmith.hpp"))


def _existing_folder(folder: str, marker: str) -> str:
    if not os.path.isfile(os.path.join(folder, marker)):
        raise FileNotFoundError(
            f"kernelsmith: no {marker} in {folder}: the kernelsmith package at {_PACKAGE_DIR} was not installed "
            "from its wheel (a build tree's staged package and the source folder carry no C++ package). "
            "Install it with `pip install .` (or tools/install.sh), or build the C++ library with CMake and "
            "`cmake --install` it (docs/install.md)")
    return folder
