"""`kernelsmith serve`: a read-only web view of run stores that follows a run while it goes on (docs/web.md).

Needs Flask (``pip install kernelsmith[web]``); the charts are drawn by Chart.js, shipped inside this package
(``static/chart.min.js``, MIT licence next to it), so the pages need no internet and no build step.
"""

from __future__ import annotations

try:
    import flask  # noqa: F401  (the one optional dependency: say how to get it)
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "kernelsmith serve needs Flask: pip install 'kernelsmith[web]' (or pip install flask)"
    ) from error

from kernelsmith.web.app import create_app, make_server, serve

__all__ = ["create_app", "make_server", "serve"]
