"""Reading what others wrote: JSON from stored rows, files, helper processes and LLM endpoints, and files that
a document names relative to its own folder.

The C++ library has the same two rules (lib/detail/json_util.hpp, lib/detail/contained_path.hpp):

- JSON nests at most :data:`MAX_JSON_DEPTH` levels. Python's parser raises RecursionError on a deep document
  and the readers of a parsed value recurse too; both become a :class:`JsonTooDeep` that names the source,
  the line and the limit, never a traceback.
- A file named by a document lies inside that document's folder, after symbolic links are resolved.

This module imports only the standard library, so that pure-Python parts of the package can use it.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Optional

#: The deepest nesting of arrays and objects a document may have: kMaxJsonDepth of lib/detail/json_util.hpp.
MAX_JSON_DEPTH = 128

# A JSON string (escapes included), found so that the brackets inside strings are not counted.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NOT_BRACKET = re.compile(r"[^][{}]+")
_INNERMOST = re.compile(r"\[\]|\{\}")
_BRACKET = re.compile(r"[][{}]")


class JsonTooDeep(json.JSONDecodeError):
    """A JSON document nested deeper than :data:`MAX_JSON_DEPTH`. A JSONDecodeError, so that every reader that
    handles a malformed document handles this one the same way; its text says the source, line and column."""


def _too_deep_at(text: str) -> Optional[int]:
    """The offset of the bracket that passes :data:`MAX_JSON_DEPTH` in `text` (JSON, or JSON cut short); None when
    none does."""
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return None  # the common case, at the speed of str.count
    # The brackets alone, outside strings; each pass of the regular expression removes the innermost level, so
    # that a document of a few levels takes a few passes in C rather than a Python step per bracket.
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    for _ in range(MAX_JSON_DEPTH):
        brackets, removed = _INNERMOST.subn("", brackets)
        if not brackets or not removed:
            break
    else:
        if brackets:
            return _offset_past_limit(text)
    return None


def _offset_past_limit(text: str) -> Optional[int]:
    """Where the nesting passes the limit, by a walk over the brackets (strings blanked out, offsets kept)."""
    blanked = _STRING.sub(lambda match: " " * len(match.group()), text)
    depth = 0
    for match in _BRACKET.finditer(blanked):
        if match.group() in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                return match.start()
        elif depth > 0:
            depth -= 1
    return None


def _too_deep(text: str, source: str, position: int) -> JsonTooDeep:
    where = f"{source}: " if source else ""
    return JsonTooDeep(f"{where}JSON nested deeper than {MAX_JSON_DEPTH} levels (arrays and objects within each "
                       f"other); no document kernelsmith reads is nested that deep, so this one is damaged or hostile",
                       text, position)


def loads(text: Any, source: str = "") -> Any:
    """``json.loads(text)`` for text from elsewhere; `source` (a file, a column of a row, a process) names it in
    errors. Raises JsonTooDeep (a json.JSONDecodeError) for a document nested deeper than MAX_JSON_DEPTH, and
    json.JSONDecodeError for one that is not JSON."""
    if isinstance(text, (bytes, bytearray)):
        text = text.decode("utf-8")
    try:
        value = json.loads(text)
    except RecursionError:
        position = _too_deep_at(text)
        raise _too_deep(text, source, position if position is not None else 0) from None
    position = _too_deep_at(text)
    if position is not None:
        raise _too_deep(text, source, position)
    return value


class OutsideFolder(ValueError):
    """A document names a file outside its own folder."""


def path_inside(folder: "os.PathLike[str] | str", name: "os.PathLike[str] | str") -> str:
    """The file `name` names relative to `folder`, with symbolic links resolved. Raises OutsideFolder (without
    the document's name: the caller adds it) when `name` is empty or absolute, or resolves outside `folder` by
    ``..`` or through a symbolic link. The file need not exist."""
    name = os.fspath(name)
    if not name:
        raise OutsideFolder("the file name is empty")
    if os.path.isabs(name):
        raise OutsideFolder(f"'{name}' is an absolute path; name a file inside {os.fspath(folder)} by a path relative "
                            f"to it")
    root = os.path.realpath(folder)
    resolved = os.path.realpath(os.path.join(root, name))
    if os.path.commonpath([root, resolved]) != root:
        raise OutsideFolder(f"'{name}' leads out of the folder {root} (to {resolved}); a file named here must lie "
                            f"inside that folder: no '..' above it and no symbolic link out of it")
    return resolved
