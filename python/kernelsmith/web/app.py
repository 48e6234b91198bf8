"""The Flask application of the web view: routes, templates, the JSON endpoints the pages poll, and the
server that `kernelsmith serve` runs (docs/web.md).

Safe by default: every store is opened read-only; templates escape everything they show (Jinja2's
autoescape), and the Content-Security-Policy header allows only the package's own scripts, so program text
or an LLM answer holding `<script>` is shown and never run; bound to a loopback address, the server also
answers only requests addressed to a loopback host name (a web page elsewhere cannot reach it through DNS
rebinding).
"""

from __future__ import annotations

import ipaddress
import math
import re
import time
from typing import Any, Dict, Optional, Sequence
from urllib.parse import urlencode

from flask import Flask, Response, abort, jsonify, render_template, request
from werkzeug.exceptions import HTTPException, SecurityError
from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server as werkzeug_make_server

from kernelsmith import _core as core
from kernelsmith.web import views
from kernelsmith.web.views import NotFound, Stores

#: Seconds between two polls of a page while its run is running, and while it is not.
POLL_RUNNING_SECONDS = 2
POLL_IDLE_SECONDS = 10

_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        "base-uri 'none'; form-action 'self'; frame-ancestors 'none'")

LOOPBACK_NAMES = ["localhost", "127.0.0.1", "::1", "[::1]"]

#: The largest integer SQLite holds: a query value beyond it is refused with a 400, never passed to a query.
SQLITE_MAX = 2**63 - 1
#: What an integer query value may look like: ASCII digits with an optional minus sign (not int()'s wider syntax:
#: other scripts' digits, underscores, spaces).
_DECIMAL = re.compile(r"-?[0-9]+")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _format_number(value: Any, digits: int = 3) -> str:
    number = None
    try:
        number = float(value)
    except (TypeError, ValueError):
        pass
    if number is None or not math.isfinite(number):
        return "–"
    return f"{number:.{digits}g}"


def _format_time(value: Any) -> str:
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(value)))
    except (TypeError, ValueError, OverflowError):
        return "–"


#: Viridis, sampled at nine points: the colour scale of the archive grid (dark: low fitness, light: high).
_VIRIDIS = ((68, 1, 84), (71, 44, 122), (59, 81, 139), (44, 113, 142), (33, 144, 141), (39, 173, 129),
            (92, 200, 99), (170, 220, 50), (253, 231, 37))


def _heat(value: Any, low: float, high: float) -> str:
    """The colour of `value` on the scale from low to high (the middle one when they are equal)."""
    try:
        share = (float(value) - low) / (high - low) if high > low else 0.5
    except (TypeError, ValueError):
        share = 0.0
    share = min(1.0, max(0.0, share if math.isfinite(share) else 0.0)) * (len(_VIRIDIS) - 1)
    index = min(int(share), len(_VIRIDIS) - 2)
    t = share - index
    r, g, b = (round(a + (c - a) * t) for a, c in zip(_VIRIDIS[index], _VIRIDIS[index + 1]))
    return f"#{r:02x}{g:02x}{b:02x}"


def _fragment_url() -> str:
    """This page's URL asking for its live part only (what the page's script fetches when the run moves on)."""
    arguments = request.args.to_dict()
    arguments["fragment"] = "1"
    return request.path + "?" + urlencode(arguments)


def create_app(paths: Sequence[str], loopback_only: bool = True) -> Flask:
    """The web view of the run stores at `paths` (read-only). With loopback_only, requests must name a loopback
    host (localhost, 127.0.0.1, [::1]). Raises StoreError for a path that is not a readable run store."""
    stores = Stores(paths)
    app = Flask(__name__)
    app.config["STORES"] = stores
    app.json.sort_keys = False  # type: ignore[attr-defined]
    if loopback_only:
        app.config["TRUSTED_HOSTS"] = LOOPBACK_NAMES
    app.jinja_env.trim_blocks = True  # no blank lines where template tags stand (the SVG pages are long)
    app.jinja_env.lstrip_blocks = True
    app.jinja_env.filters["num"] = _format_number
    app.jinja_env.filters["when"] = _format_time
    app.jinja_env.filters["heat"] = _heat
    app.jinja_env.globals["fragment_url"] = _fragment_url
    app.jinja_env.globals.update(poll_running=POLL_RUNNING_SECONDS, poll_idle=POLL_IDLE_SECONDS,
                                 noisy=views.noisy, noisy_text=views.NOISY_TIMING_TEXT, limit_text=views.LIMIT_TEXT)

    @app.after_request
    def _headers(response):
        response.headers["Content-Security-Policy"] = _CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        if "/api/" in request.path:
            response.headers["Cache-Control"] = "no-store"
        return response

    @app.errorhandler(NotFound)
    def _not_found(error: NotFound):
        return render_template("error.html", title="Not found", message=str(error)), 404

    @app.errorhandler(core.StoreError)
    def _store_error(error: core.StoreError):
        return render_template("error.html", title="Cannot read the run store", message=str(error)), 503

    @app.errorhandler(HTTPException)
    def _http_error(error: HTTPException):
        if isinstance(error, SecurityError):  # an untrusted Host: no page, whose links would name that host
            message = f"{str(error.description).rstrip('.')}: this server answers requests for localhost only (--host)"
            return Response(message + "\n", 400, mimetype="text/plain")
        return render_template("error.html", title=error.name, message=error.description), error.code or 500

    def fragment() -> bool:
        return request.args.get("fragment") == "1"

    def int_argument(name: str, default: Optional[int], minimum: int = 0, maximum: int = SQLITE_MAX) -> Optional[int]:
        """The query parameter `name` as an integer from minimum to maximum (default when absent or empty); anything
        else (not plain decimal digits, out of range: a number SQLite cannot hold) answers 400 saying so."""
        text = request.args.get(name)
        if text is None or text == "":
            return default
        value = int(text) if _DECIMAL.fullmatch(text) and len(text) <= 20 else None
        if value is None or not minimum <= value <= maximum:
            abort(400, description=f"the parameter {name}={text[:40]!r} must be an integer from {minimum} to {maximum}")
        return value

    @app.before_request
    def _check_path_numbers():
        # A store or run number in the path beyond what SQLite holds would fail in the query: refuse it here.
        for name, value in (request.view_args or {}).items():
            if isinstance(value, int) and not 0 <= value <= SQLITE_MAX:
                abort(400, description=f"{name} {str(value)[:40]} is out of range (0 to {SQLITE_MAX})")

    def run_context(store: int, run: int) -> Dict[str, Any]:
        row = stores.run_row(store, run)
        row.pop("task", None)
        return {"store": store, "store_path": stores.paths[store], "run": row, "state": stores.state(store, run)}

    # -- pages --------------------------------------------------------------------------------------

    @app.route("/")
    def runs_page():
        context = stores.overview()
        if fragment():
            return render_template("runs_body.html", **context)
        return render_template("runs.html", **context)

    @app.route("/store/<int:store>/run/<int:run>/")
    def run_page(store: int, run: int):
        context = run_context(store, run)
        context.update(islands=stores.reader(store).island_rows(run),
                       evaluations=stores.evaluations(store, run, None))
        if fragment():
            return render_template("run_body.html", **context)
        return render_template("run.html", **context)

    @app.route("/store/<int:store>/run/<int:run>/evaluations")
    def evaluations_page(store: int, run: int):
        context = run_context(store, run)
        before = int_argument("before", None)  # keyset paging: the sequence numbers are 0 and up
        rows = stores.evaluations(store, run, before)
        context.update(evaluations=rows, before=before,
                       next_before=rows[-1]["sequence"] if len(rows) == views.PAGE_ROWS else None)
        return render_template("evaluations.html", **context)

    @app.route("/store/<int:store>/run/<int:run>/archive")
    def archive_page(store: int, run: int):
        context = run_context(store, run)
        # Checked before the grid is ready too: a value that is not a count is wrong whatever the run holds.
        for name in ("x", "y", "island"):
            int_argument(name, None)
        replay, job = stores.archive(store, run)
        context.update(job=job.status(), replay=replay, grids=[])
        if replay is not None:
            with job.lock:  # the worker adds programs while we read
                features = replay.features
                x = int_argument("x", 0, 0, max(len(features) - 1, 0))
                y = int_argument("y", len(features) - 1, 0, max(len(features) - 1, 0))
                island = int_argument("island", None, 0, max(replay.config.islands - 1, 0))
                if island is not None and not 0 <= island < replay.config.islands:
                    abort(400, description=f"island={island}: the run has islands 0 to {replay.config.islands - 1}")
                try:
                    replay.check_axes(x, y, "archive grid")
                except ValueError as error:
                    abort(400, description=str(error))
                for shown in ([island] if island is not None else [None] + list(range(replay.config.islands))):
                    grid, occupied = replay.grid(x, y, None if shown is None else [shown])
                    context["grids"].append({"island": shown, "rows": grid, "occupied": occupied,
                                             "coverage": None if shown is None else replay.archive.coverage(shown)})
                fitness = [cell.fitness for grid in context["grids"] for row in grid["rows"] for cell in row
                           if cell is not None]
                context.update(features=features, x=x, y=y, island=island, islands=replay.config.islands,
                               offered=replay.offered,
                               fitness_range=(min(fitness, default=0.0), max(fitness, default=0.0)))
        if fragment():
            return render_template("archive_body.html", **context)
        return render_template("archive.html", **context)

    @app.route("/store/<int:store>/run/<int:run>/lineage")
    def lineage_page(store: int, run: int):
        context = run_context(store, run)
        program_id = request.args.get("program") or None
        limit = int_argument("limit", views.LINEAGE_NODES, 1, views.LINEAGE_MAX)
        lineage = stores.lineage(store, run, program_id, limit)
        selected = request.args.get("selected") or lineage["root"]
        context.update(lineage=lineage, program_arg=program_id, selected=selected,
                       detail=stores.program(store, run, selected) if selected else None)
        if fragment():
            return render_template("lineage_body.html", **context)
        return render_template("lineage.html", **context)

    @app.route("/store/<int:store>/run/<int:run>/program/<program_id>")
    def program_page(store: int, run: int, program_id: str):
        context = run_context(store, run)
        context["detail"] = stores.program(store, run, program_id)
        if fragment():
            return render_template("program_body.html", **context)
        return render_template("program.html", **context)

    @app.route("/store/<int:store>/run/<int:run>/training")
    def training_page(store: int, run: int):
        from kernelsmith import training

        context = run_context(store, run)
        kind = request.args.get("kind", "sft")
        if kind not in ("sft", "rl"):
            abort(400, description=f"kind={kind!r}: the training view shows 'sft' or 'rl'")
        shown = request.args.get("decision", "")
        page = int_argument("page", 0)
        view, job = stores.training(store, run)
        reasons = training.SFT_DROP_REASON_TEXT if kind == "sft" else training.RL_DROP_REASON_TEXT
        if shown and shown != "kept" and shown not in reasons:
            abort(400, description=f"decision={shown!r}: give 'kept' or one of {', '.join(reasons)}")
        context.update(kind=kind, view=view, job=job.status(), reasons=reasons,
                       attempt_reasons=training.RL_COMPLETION_DROP_REASON_TEXT, decision=shown, page=page)
        if view is not None:
            export = view.sft if kind == "sft" else view.rl
            decisions = [d for d in export.decisions
                         if not shown or (d.kept if shown == "kept" else d.reason == shown)]
            context.update(export=export, report=export.report, steps_by_id=view.steps_by_id, total=len(decisions),
                           rows=decisions[page * views.PAGE_ROWS:(page + 1) * views.PAGE_ROWS],
                           pages=max(1, math.ceil(len(decisions) / views.PAGE_ROWS)))
        if fragment():
            return render_template("training_body.html", **context)
        return render_template("training.html", **context)

    # -- JSON that the pages poll -------------------------------------------------------------------

    @app.route("/api/runs")
    def runs_api():
        return jsonify(stores.overview())

    @app.route("/store/<int:store>/run/<int:run>/api/state")
    def state_api(store: int, run: int):
        return jsonify(stores.state(store, run))

    @app.route("/store/<int:store>/run/<int:run>/api/progress")
    def progress_api(store: int, run: int):
        stores.run_row(store, run)
        return jsonify(stores.progress(store, run, int_argument("since", -1, -1)))

    @app.route("/favicon.ico")
    def favicon():
        abort(404)

    return app


class _QuietHandler(WSGIRequestHandler):
    """Logs failed requests only: a page that polls every few seconds would fill the terminal."""

    def log_request(self, code: Any = "-", size: Any = "-") -> None:
        if str(code).isdigit() and int(code) >= 500:
            super().log_request(code, size)


def make_server(app: Flask, host: str, port: int) -> BaseWSGIServer:
    """A threaded HTTP server for the app on host:port (port 0: a free one, see server.server_port)."""
    return werkzeug_make_server(host, port, app, threaded=True, request_handler=_QuietHandler)


def serve(paths: Sequence[str], host: str = "127.0.0.1", port: int = 8050, announce=print) -> None:
    """Serves the web view of the stores until interrupted (Ctrl-C)."""
    loopback = _is_loopback(host)
    app = create_app(paths, loopback_only=loopback)
    server = make_server(app, host, port)
    app.config["STORES"].warm_up()
    shown_host = f"[{host}]" if ":" in host else host
    announce(f"kernelsmith serve: http://{shown_host}:{server.server_port}/ shows {len(app.config['STORES'].paths)} "
             f"run store(s), read-only; Ctrl-C stops")
    if not loopback:
        announce(f"kernelsmith serve: listening on {host}, not a loopback address: anyone who can reach this machine "
                 "can read these run stores (there is no login)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
