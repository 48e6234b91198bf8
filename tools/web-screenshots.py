"""Screenshots of the web view (`kernelsmith serve`, docs/web.md) of a real run store, taken in headless Chromium.

    python tools/web-screenshots.py --db kernelsmith-main.db            # the README's main job (tools/main.sh)
    python tools/web-screenshots.py --db run.db --run 2 --out /tmp/shots

Serves the store on a loopback port, opens the runs list and the run's progress, archive, lineage and
training-data pages, waits until their charts are drawn and their background views are complete, and writes
web-<page>.png (the browser window, 1280 x 800) into --out (default docs/images). Needs Flask and Debian's
`chromium`; it uses the browser driver of the tests (tests/python/browser.py).
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "python"))

from browser import Browser, find_chromium  # noqa: E402

import kernelsmith as ks  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", required=True, help="the run store")
    parser.add_argument("--run", type=int, help="the run (default: the store's latest)")
    parser.add_argument("--out", default=str(ROOT / "docs" / "images"), help="folder for the PNG files")
    args = parser.parse_args(argv)
    try:
        from kernelsmith.web import create_app, make_server
    except ImportError as error:
        print(f"web-screenshots: {error}", file=sys.stderr)
        return 2
    executable, why = find_chromium()
    if executable is None:
        print(f"web-screenshots: {why}", file=sys.stderr)
        return 2
    run = args.run if args.run is not None else ks.store.RunStoreReader(args.db).latest_run_id()
    if run is None:
        print(f"web-screenshots: {args.db} holds no run", file=sys.stderr)
        return 1
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    server = make_server(create_app([args.db]), "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    views_done = ("Object.values(await (await fetch('{state}')).json().then((s) => s.views))"
                  ".every((v) => !v.busy)").format(state=f"{base}/store/0/run/{run}/api/state")
    try:
        with Browser(executable, width=1280, height=800) as browser:
            pages = [("runs", "/", None),
                     ("progress", f"/store/0/run/{run}/", "document.getElementById('progress').dataset.lastSequence"),
                     ("archive", f"/store/0/run/{run}/archive", "!!document.querySelector('svg.archive-grid')"),
                     ("lineage", f"/store/0/run/{run}/lineage", "!!document.querySelector('svg.lineage')"),
                     ("training", f"/store/0/run/{run}/training?kind=sft", "!!document.querySelector('table.summary')")]
            for name, path, ready in pages:
                browser.open(base + path)
                if ready:
                    # A page computed in the background fills in by itself; load it again once it is complete.
                    browser.wait_for(f"(async () => {views_done})()", timeout=600)
                    browser.open(base + path)
                    browser.wait_for(ready, timeout=60)
                target = out / f"web-{name}.png"
                browser.screenshot(str(target), full_page=False)
                print(f"wrote {target}")
            problems = browser.problems()
            if problems:
                print("web-screenshots: the pages reported errors:\n  " + "\n  ".join(problems), file=sys.stderr)
                return 1
    finally:
        server.shutdown()
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
