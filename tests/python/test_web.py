"""The web view (`kernelsmith serve`, docs/web.md) over real run stores.

The store is real: two short evolutions of relu on the OpenCL backend (PoCL runs them on the CPU), one with
the parameter mutator on two islands, one with the LLM mutator talking HTTP to a loopback server that
answers with scripted kernels, some of them hostile (`<script>` in the answer and in the kernel's source).
The server tests go through Flask's test client and through `kernelsmith serve` itself; the browser tests
load every page in headless Chromium (Debian's package), check that the charts and graphs are drawn, that
nothing hostile runs, that a page follows a live run, and keep screenshots in build/artifacts/web/.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from markupsafe import escape

import kernelsmith as ks
from backends import fast_opencl_evaluator, needs_opencl

pytest.importorskip("flask", reason="the web view needs Flask: pip install 'kernelsmith[web]'")
from kernelsmith import training  # noqa: E402
from kernelsmith.web import create_app, make_server, views  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("KERNELSMITH_ARTIFACTS", ROOT / "build" / "artifacts")) / "web"

HOSTILE_ANSWER = "Faster, trust me <script>window.__pwned = 'answer'</script><img src=x onerror=\"window.__pwned='img'\">"
HOSTILE_COMMENT = "// </pre><script>window.__pwned = 'source'</script> & <b>bold</b>"


def small_relu() -> "ks.Task":
    document = json.loads(ks.Task.load("relu").to_json())
    document["sizes"] = {"N": 1 << 16}
    document["check_sizes"] = [{"name": "odd_1023", "sizes": {"N": 1023}}]
    return ks.Task.from_json(json.dumps(document), "<relu, 2^16 elements>")


def relu_variant(k: int, comment: str = "") -> str:
    items = (1, 2, 4)[k % 3]
    block = (64, 128, 256)[(k // 3) % 3]
    return f"""// @launch relu<<<ceil_div(N, {block * items}), {block}>>>(x, y, N)
{comment}
__kernel void relu(__global const float* restrict x, __global float* restrict y, int N) {{
  const int base = get_group_id(0) * {block * items} + get_local_id(0);
  for (int item = 0; item < {items}; ++item) {{
    const int i = base + item * {block};
    if (i < N) y[i] = fmax(x[i], 0.0f);
  }}
}}
"""


def evaluator(cache_dir) -> "ks.Evaluator":
    return fast_opencl_evaluator(cache_dir)


def config(path, budget: int, islands: int) -> "ks.EvolutionConfig":
    result = ks.EvolutionConfig()
    result.budget = budget
    result.islands = islands
    result.seed = 5
    result.mutations_in_flight = 1
    result.db_path = str(path)
    return result


class HostileCoder:
    """Answers the LLM mutator with correct relu kernels; the first answer carries markup and script in its prose
    and in a comment of its kernel, the third has no code at all."""

    def __init__(self):
        self.count = 0

    def __call__(self, body, index):
        from loopback_llm import chat_reply

        self.count += 1
        if self.count == 1:
            text = f"{HOSTILE_ANSWER}\n\n```opencl\n{relu_variant(7, HOSTILE_COMMENT)}```\n"
        elif self.count == 3:
            text = "I would rather not write code today."
        else:
            text = f"Another shape of work-group.\n\n```opencl\n{relu_variant(self.count)}```\n"
        return chat_reply(text, prompt_tokens=900 + index, completion_tokens=120)


@pytest.fixture(scope="module")
def web_store(tmp_path_factory):
    """One store, two real runs: the parameter mutator on two islands, then the LLM mutator (hostile answers)."""
    if not ks.devices() or not any(b.name == "opencl" and b.available for b in ks.devices()):
        pytest.skip("no OpenCL device (install pocl-opencl-icd)")
    from kernelsmith.llm import make_llm_mutator
    from loopback_llm import LoopbackLlmServer

    folder = tmp_path_factory.mktemp("web")
    path = folder / "runs.db"
    evaluate = evaluator(folder / "cache")
    param_config = config(path, 8, 2)
    param_config.migration.interval = 3  # migrations, which the rebuilt archive replays too
    evolution = ks.Evolution(small_relu(), evaluate, ks.ParamMutator(), param_config)
    param = evolution.run()
    engine_cells = {(island, tuple(evolution.archive.cell_of(p))): p.id
                    for island in range(2) for p in evolution.archive.island_cells(island)}
    coder = HostileCoder()
    with LoopbackLlmServer(responder=coder) as server:
        mutator = make_llm_mutator(server.url, "scripted-coder", api_key_env=None, full_weight=1.0, diff_weight=0.0,
                                   crossover_weight=0.0, seed=3, timeout=30, max_retries=0)
        llm = ks.Evolution(small_relu(), evaluate, mutator, config(path, 6, 1)).run()
    return {"path": str(path), "param": param.run_id, "llm": llm.run_id, "folder": folder, "engine_cells": engine_cells}


@pytest.fixture(scope="module")
def client(web_store):
    return create_app([web_store["path"]]).test_client()


def get(client, url: str, status: int = 200):
    response = client.get(url, headers={"Host": "127.0.0.1:8050"})
    assert response.status_code == status, (url, response.status_code, response.get_data(as_text=True)[:2000])
    return response


def hostile_program(path: str, run: int) -> "ks.ProgramRecord":
    store = ks.RunStore(path, True)
    found = [p for p in store.programs(run) if "__pwned" in p.candidate.source]
    assert len(found) == 1, "the hostile answer's kernel should have become a program"
    return found[0]


# --------------------------------------------------------------------------------------------------
# the server


@needs_opencl
def test_the_runs_page_lists_every_run_with_its_counts(client, web_store):
    store = ks.RunStore(web_store["path"], True)
    page = get(client, "/").get_data(as_text=True)
    overview = get(client, "/api/runs").get_json()
    (entry,) = overview["stores"]
    assert entry["path"] == web_store["path"]
    assert [run["id"] for run in entry["runs"]] == [web_store["llm"], web_store["param"]]  # newest first
    for run in entry["runs"]:
        assert run["evaluations"] == store.evaluation_count(run["id"])
        assert run["steps"] == len(store.steps(run["id"]))
        best = store.best(run["id"], 1)
        assert run["best_program_id"] == best[0].program_id
        assert run["best_speedup"] == pytest.approx(best[0].evaluation.speedup)
        assert f'/store/0/run/{run["id"]}/' in page
    assert "finished" in page and "relu" in page
    assert overview["running"] is False


@needs_opencl
def test_the_progress_data_are_the_running_bests_per_island(client, web_store):
    run = web_store["param"]
    store = ks.RunStore(web_store["path"], True)
    island_of = {p.id: p.candidate.lineage.island for p in store.programs(run)}
    origin_of = {p.id: p.candidate.lineage.origin for p in store.programs(run)}
    expected = {"all": [], "0": [], "1": []}
    expected_fraction = {"all": [], "0": [], "1": []}
    for record in store.evaluations(run):  # an independent running maximum over what the C++ store reads
        evaluation = record.evaluation
        if not ks.store.is_confirmed(str(evaluation.status).split(".")[-1], json.loads(evaluation.to_json())):
            continue  # only a confirmed evaluation raises a curve
        fraction = evaluation.sol.fraction if evaluation.sol is not None else 0.0
        # The engine puts the reference and the seeds on every island: each island's curve starts from them.
        on_every_island = origin_of[record.program_id] in ("reference", "seed")
        islands = ("0", "1") if on_every_island else (str(island_of[record.program_id]),)
        for key in ("all",) + islands:
            if not expected[key] or evaluation.speedup > expected[key][-1][1]:
                expected[key].append([record.sequence, evaluation.speedup])
            if fraction > 0 and (not expected_fraction[key] or fraction > expected_fraction[key][-1][1]):
                expected_fraction[key].append([record.sequence, fraction])
    progress = get(client, f"/store/0/run/{run}/api/progress").get_json()
    assert progress["last_sequence"] == store.evaluation_count(run) - 1
    assert progress["islands"] == [0, 1]
    for key, points in expected.items():
        assert [p[0] for p in progress["speedup"][key]] == [p[0] for p in points]
        assert [p[1] for p in progress["speedup"][key]] == pytest.approx([p[1] for p in points])
    assert expected_fraction["all"], "PoCL reports the fraction of the hardware limit"
    for key, points in expected_fraction.items():
        assert [p[0] for p in progress["fraction"].get(key, [])] == [p[0] for p in points]
        assert [p[1] for p in progress["fraction"].get(key, [])] == pytest.approx([p[1] for p in points])
    # Polling with `since` gives only what came after.
    middle = progress["speedup"]["all"][0][0]
    later = get(client, f"/store/0/run/{run}/api/progress?since={middle}").get_json()
    assert all(p[0] > middle for points in later["speedup"].values() for p in points)
    assert later["speedup"]["all"] == progress["speedup"]["all"][1:]


@needs_opencl
def test_the_run_page_and_the_evaluations_pages(client, web_store, monkeypatch):
    run = web_store["param"]
    store = ks.RunStore(web_store["path"], True)
    page = get(client, f"/store/0/run/{run}/").get_data(as_text=True)
    assert 'id="chart-speedup"' in page and 'id="chart-fraction"' in page and "chart.min.js" in page
    assert page.count("<tr><td>") >= 2  # the islands table: two islands
    # Paged newest first; every evaluation on exactly one page.
    monkeypatch.setattr(views, "PAGE_ROWS", 3)
    seen, url = [], f"/store/0/run/{run}/evaluations"
    while url:
        text = get(client, url).get_data(as_text=True)
        seen.extend(int(n) for n in re.findall(r'<tr><td class="num">(\d+)</td>', text))
        older = re.search(r'href="([^"]*before=\d+)">older', text)
        url = older.group(1).replace("&amp;", "&") if older else None
    assert seen == list(range(1, store.evaluation_count(run) + 1))[::-1]  # numbered from 1, as `report` numbers them


@needs_opencl
def test_the_archive_page_draws_the_rebuilt_grid(client, web_store):
    run = web_store["param"]
    assert ks.RunStore(web_store["path"], True).migrations(run), "the run should have migrated programs"
    cells = ks.Run(web_store["path"], run).archive_cells()
    # The rebuilt grid is the engine's own at the end of the run: its cells, migrants and initial copies included.
    assert {(c["island"], tuple(c["bins"])): c["program_id"] for c in cells} == web_store["engine_cells"]
    page = get(client, f"/store/0/run/{run}/archive").get_data(as_text=True)
    # One grid for all islands, then one per island; each island's occupied cells drawn as links.
    assert page.count('class="archive-grid"') == 3
    for cell in cells:
        assert f"/store/0/run/{run}/program/{cell['program_id']}" in page
    island = get(client, f"/store/0/run/{run}/archive?island=1&x=0&y=1").get_data(as_text=True)
    assert island.count('class="archive-grid"') == 1
    assert get(client, f"/store/0/run/{run}/archive?x=1&y=1", 400).get_data(as_text=True).count("different") == 1
    get(client, f"/store/0/run/{run}/archive?island=9", 400)
    get(client, f"/store/0/run/{run}/archive?x=a", 400)


@needs_opencl
def test_the_lineage_page_is_the_stores_lineage_of_the_best(client, web_store):
    run = web_store["param"]
    store = ks.RunStore(web_store["path"], True)
    best = store.best(run, 1)[0].program_id
    parents = {p.id: p.candidate.lineage.parent_ids for p in store.programs(run)}
    lineage_ids, stack = set(), [best]  # every ancestor, through all parents (crossovers have two)
    while stack:
        current = stack.pop()
        if current not in lineage_ids:
            lineage_ids.add(current)
            stack.extend(parents[current])
    page = get(client, f"/store/0/run/{run}/lineage").get_data(as_text=True)
    shown = re.findall(r'class="node[^"]*" data-program="([0-9a-f]+)"', page)
    assert set(shown) == lineage_ids and shown[0] == best
    # The store's own first-parent chain is among them.
    assert {record.id for record in store.lineage(run, best)} <= set(shown)
    assert page.count("<circle") == len(lineage_ids)
    assert f'data-program="{best}"' in page.split('id="detail"')[1]  # the best's details beside the tree
    # Another node selected: its details; a limit of one shows only the program and offers more.
    other = shown[-1]
    selected = get(client, f"/store/0/run/{run}/lineage?selected={other}").get_data(as_text=True)
    assert f'<section class="program" data-program="{other}"' in selected
    if len(shown) > 1:
        one = get(client, f"/store/0/run/{run}/lineage?limit=1").get_data(as_text=True)
        assert one.count("<circle") == 1 and "show more" in one
    get(client, f"/store/0/run/{run}/lineage?program=0000000000000000", 404)


@needs_opencl
def test_the_program_page_shows_source_diff_evaluation_and_the_llm_step(client, web_store):
    run = web_store["llm"]
    store = ks.RunStore(web_store["path"], True)
    steps = [s for s in store.steps(run) if s.child_id and s.prompt]
    step = steps[-1]
    record = store.evaluation_of(run, step.child_id)
    page = get(client, f"/store/0/run/{run}/program/{step.child_id}").get_data(as_text=True)
    document = json.loads(record.evaluation.to_json())
    assert "The whole Evaluation (JSON)" in page
    assert f"{document['timing']['median_ms']:.4g} ms" in page  # timing with its noise
    assert "noise ±" in page and "Correctness: passed" in page and "Compile: ok" in page
    assert "Diff to parent" in page and 'class="add"' in page
    assert "Prompt" in page and "Response" in page and "scripted-coder" in page
    messages = json.loads(step.prompt)
    assert str(escape(messages[-1]["content"][:200])) in page  # escaped as the templates escape
    assert str(escape(step.response[:200])) in page
    get(client, f"/store/0/run/{run}/program/0000000000000000", 404)
    get(client, f"/store/0/run/{run + 99}/", 404)
    get(client, "/store/3/run/1/", 404)


@needs_opencl
def test_the_training_view_shows_the_exports_own_decisions(client, web_store):
    runs = ks.store.read_runs(web_store["path"], [web_store["llm"]])
    sft = training.build_sft(runs)
    rl = training.build_rl(runs)
    # Every step considered has one decision, and the decisions add up to the report.
    assert len(sft.decisions) == sft.report.considered
    assert sum(d.kept for d in sft.decisions) == sft.report.kept == len(sft.records)
    for reason, count in sft.report.dropped.items():
        assert sum(d.reason == reason for d in sft.decisions) == count
    kept_steps = {d.step for d in sft.decisions if d.kept}
    assert kept_steps == {record["metadata"]["step"] for record in sft.records}
    assert len(rl.decisions) == rl.report.considered
    assert sum(d.kept for d in rl.decisions) == rl.report.kept
    kept_states = {d.parent_id for d in rl.decisions if d.kept}
    assert kept_states == {record["extra_info"]["parent_id"] for record in rl.records}

    run = web_store["llm"]
    page = get(client, f"/store/0/run/{run}/training?kind=sft").get_data(as_text=True)
    assert f"<td>kept</td>" not in page  # the summary links each decision
    for reason, count in sft.report.dropped.items():
        assert re.search(rf'decision={reason}">{reason}</a></td><td class="num">{count}</td>', page)
    kept = get(client, f"/store/0/run/{run}/training?kind=sft&decision=kept").get_data(as_text=True)
    assert sorted(int(n) for n in re.findall(r'<tr class="kept"><td class="num">(\d+)</td>', kept)) == sorted(kept_steps)
    rl_page = get(client, f"/store/0/run/{run}/training?kind=rl").get_data(as_text=True)
    for decision in rl.decisions:
        assert decision.parent_id in rl_page
    param_page = get(client, f"/store/0/run/{web_store['param']}/training").get_data(as_text=True)
    assert 'decision=no_prompt">no_prompt</a>' in param_page  # the parameter mutator's steps have no prompt
    get(client, f"/store/0/run/{run}/training?kind=dpo", 400)
    get(client, f"/store/0/run/{run}/training?decision=nope", 400)


@needs_opencl
def test_hostile_program_text_is_shown_escaped(client, web_store):
    run = web_store["llm"]
    program = hostile_program(web_store["path"], run)
    urls = [f"/store/0/run/{run}/program/{program.id}", f"/store/0/run/{run}/lineage?selected={program.id}",
            f"/store/0/run/{run}/program/{program.id}?fragment=1"]
    for url in urls:
        response = get(client, url)
        text = response.get_data(as_text=True)
        assert "<script>window.__pwned" not in text and "<img src=x" not in text and "<b>bold</b>" not in text
        assert "&lt;script&gt;window.__pwned = &#39;source&#39;&lt;/script&gt;" in text
        assert "&lt;/pre&gt;" in text
        policy = response.headers["Content-Security-Policy"]
        assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    answer = get(client, urls[0]).get_data(as_text=True)
    assert "&lt;script&gt;window.__pwned = &#39;answer&#39;&lt;/script&gt;" in answer
    assert "onerror=&#34;" in answer or "onerror=&quot;" in answer


@needs_opencl
def test_the_server_reads_and_never_writes(web_store, tmp_path):
    import hashlib
    import shutil

    copy = tmp_path / "copy.db"
    store = ks.RunStore(web_store["path"], True)  # noqa: F841  (a reader while we copy)
    for suffix in ("", "-wal"):
        if os.path.exists(web_store["path"] + suffix):
            shutil.copyfile(web_store["path"] + suffix, str(copy) + suffix)
    before = {suffix: hashlib.sha256(Path(str(copy) + suffix).read_bytes()).hexdigest()
              for suffix in ("", "-wal") if os.path.exists(str(copy) + suffix)}
    os.chmod(copy, 0o444)  # a read-only file is served all the same
    app = create_app([str(copy)]).test_client()
    for run in (web_store["param"], web_store["llm"]):
        for page in ("/", "/api/runs", f"/store/0/run/{run}/", f"/store/0/run/{run}/archive",
                     f"/store/0/run/{run}/lineage", f"/store/0/run/{run}/training?kind=rl",
                     f"/store/0/run/{run}/api/progress"):
            get(app, page)
    after = {suffix: hashlib.sha256(Path(str(copy) + suffix).read_bytes()).hexdigest()
             for suffix in ("", "-wal") if os.path.exists(str(copy) + suffix)}
    assert after == before
    with pytest.raises(ks.StoreError, match="does not exist"):
        create_app([str(tmp_path / "missing.db")])
    (tmp_path / "other.db").write_bytes(b"not a database at all" * 100)
    with pytest.raises(ks.StoreError):
        create_app([str(tmp_path / "other.db")])


def test_a_version_1_store_is_served_as_it_is(tmp_path):
    """The committed version-1 store (tests/data/run_store_v1.db): every page, and the file stays as it was."""
    import shutil

    path = tmp_path / "old.db"
    shutil.copyfile(ROOT / "tests" / "data" / "run_store_v1.db", path)
    before = path.read_bytes()
    app = create_app([str(path)]).test_client()
    runs = get(app, "/api/runs").get_json()["stores"][0]["runs"]
    assert runs
    for run in runs:
        base = f"/store/0/run/{run['id']}"
        for page in ("/", "/evaluations", "/archive", "/lineage", "/training?kind=sft", "/training?kind=rl",
                     "/api/progress", "/api/state"):
            get(app, base + page)
        if run["best_program_id"]:
            get(app, f"{base}/program/{run['best_program_id']}")
    assert path.read_bytes() == before


@needs_opencl
def test_kernelsmith_serve_binds_loopback_and_refuses_other_hosts(web_store, tmp_path):
    command = [sys.executable, "-m", "kernelsmith", "serve", "--db", web_store["path"], "--db", web_store["path"],
               "--port", "0"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        line = process.stdout.readline()
        match = re.match(r"kernelsmith serve: (http://127\.0\.0\.1:(\d+)/) shows 1 run store\(s\), read-only", line)
        assert match, line + process.stderr.read() if process.poll() is not None else line
        url = match.group(1)
        with urllib.request.urlopen(url, timeout=30) as response:
            assert response.status == 200 and b"Runs" in response.read()
        # A request for another host name (DNS rebinding) is refused.
        request = urllib.request.Request(url, headers={"Host": "attacker.example:8050"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
        assert refused.value.code == 400 and b"localhost only" in refused.value.read()
        refused.value.close()
    finally:
        process.terminate()
        process.wait(30)
        process.stdout.close()
        process.stderr.close()
    bad = subprocess.run([sys.executable, "-m", "kernelsmith", "serve", "--db", str(tmp_path / "none.db")],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1 and "does not exist" in bad.stderr


@needs_opencl
def test_the_data_follow_a_live_run(tmp_path):
    path = tmp_path / "live.db"
    ks.RunStore(str(path))  # an empty store, so that the server can start before the run
    app = create_app([str(path)]).test_client()
    assert get(app, "/api/runs").get_json()["stores"][0]["runs"] == []
    evolution = ks.Evolution(small_relu(), evaluator(tmp_path / "cache"), ks.ParamMutator(), config(path, 10, 2))
    thread = threading.Thread(target=evolution.run)
    thread.start()
    try:
        counts, last_sequences, signatures = [], [], set()
        deadline = time.monotonic() + 120
        while thread.is_alive() and time.monotonic() < deadline:
            runs = get(app, "/api/runs").get_json()["stores"][0]["runs"]
            if runs:
                state = get(app, f"/store/0/run/{runs[0]['id']}/api/state").get_json()
                progress = get(app, f"/store/0/run/{runs[0]['id']}/api/progress").get_json()
                counts.append(state["evaluations"])
                last_sequences.append(progress["last_sequence"])
                signatures.add(state["signature"])
            time.sleep(0.2)
    finally:
        evolution.stop()
        thread.join(120)
    assert counts == sorted(counts) and last_sequences == sorted(last_sequences)
    assert len(set(counts)) >= 3, f"the state should move while the run goes on: {counts}"
    assert any(s.startswith("running/") for s in signatures)
    final = get(app, "/api/runs").get_json()
    assert final["running"] is False


# --------------------------------------------------------------------------------------------------
# in a real browser


def chromium():
    from browser import find_chromium

    path, why = find_chromium()
    if path is None:
        if os.environ.get("KERNELSMITH_REQUIRE_CHROMIUM"):
            pytest.fail(f"KERNELSMITH_REQUIRE_CHROMIUM is set, but {why}")
        pytest.skip(why)
    return path


@pytest.fixture(scope="module")
def served(web_store):
    server = make_server(create_app([web_store["path"]]), "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    from browser import Browser

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with Browser(chromium()) as instance:
        yield instance


# How much of a canvas is drawn: pixels that are not transparent.
CANVAS_INK = """Array.from(document.querySelectorAll('canvas')).map((canvas) => {
  const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  let ink = 0;
  for (let i = 3; i < data.length; i += 4) if (data[i] > 0) ink++;
  const chart = window.Chart && window.Chart.getChart(canvas);
  return {id: canvas.id, ink: ink, size: canvas.width * canvas.height,
          points: chart ? chart.data.datasets.map((d) => d.data.length) : []};
})"""


# The curves as drawn, read back from each chart: each dataset's path (the vertices Chart.js strokes, in data units:
# evaluation, value), whether the middle of each of its segments lies on what a redraw actually stroked on the canvas,
# the y axis's tick labels and the legend's entries.
DRAWN = """Array.from(document.querySelectorAll('canvas')).map((canvas) => {
  const chart = window.Chart.getChart(canvas);
  const ctx = chart.ctx;
  const strokes = [];
  const stroke = ctx.stroke;
  ctx.stroke = function (path) { strokes.push({path: path, color: ctx.strokeStyle}); return stroke.apply(this, arguments); };
  try { chart.draw(); } finally { ctx.stroke = stroke; }
  const datasets = chart.data.datasets.map((dataset, index) => {
    const pixels = [];
    const recorder = {moveTo: (x, y) => pixels.push([x, y]), lineTo: (x, y) => pixels.push([x, y]), closePath: () => {},
                      bezierCurveTo: () => { throw new Error('a curve where steps were expected'); }};
    chart.getDatasetMeta(index).dataset.path(recorder);
    const drawn = strokes.filter((s) => s.path instanceof Path2D && s.color === dataset.borderColor).map((s) => s.path);
    ctx.save();
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.lineWidth = 3;
    ctx.setLineDash([]);
    const stroked = pixels.slice(1).map(([x, y], i) => {
      const [px, py] = pixels[i];
      return drawn.some((path) => ctx.isPointInStroke(path, (x + px) / 2, (y + py) / 2));
    });
    ctx.restore();
    return {label: dataset.label, dash: dataset.borderDash, stroked: stroked,
            points: pixels.map(([x, y]) => [chart.scales.x.getValueForPixel(x), chart.scales.y.getValueForPixel(y)])};
  });
  return {id: canvas.id, datasets: datasets, ticks: chart.scales.y.ticks.map((t) => t.label),
          legend: chart.legend.legendItems.map((item) => ({text: item.text, pointStyle: item.pointStyle,
                                                         lineDash: item.lineDash}))};
})"""


def assert_drawn_as(chart, curves):
    """The chart's curves are drawn as step curves through `curves` ({label: [(evaluation, value), ...]}): each holds
    its value up to the evaluation that beat it and rises there, and the canvas holds every segment."""
    assert [d["label"] for d in chart["datasets"]] == list(curves), chart["id"]
    for dataset in chart["datasets"]:
        expected = step_curve(curves[dataset["label"]])
        assert len(dataset["points"]) == len(expected), (chart["id"], dataset["label"], dataset["points"], expected)
        for (x, y), (ex, ey) in zip(dataset["points"], expected):
            assert x == pytest.approx(ex, abs=1e-6) and y == pytest.approx(ey, rel=1e-6, abs=1e-9), \
                (chart["id"], dataset["label"], dataset["points"], expected)
        assert all(dataset["stroked"]), (chart["id"], dataset["label"], dataset["stroked"])


@needs_opencl
def test_every_page_renders_in_chromium(browser, served, web_store):
    run = web_store["param"]
    base = f"{served}/store/0/run/{run}"
    browser.open(f"{served}/")
    assert browser.evaluate("document.querySelectorAll('table.runs tbody tr').length") == 2
    browser.screenshot(str(ARTIFACTS / "runs.png"))

    browser.open(f"{base}/")
    browser.wait_for("document.getElementById('progress').dataset.lastSequence !== undefined")
    canvases = browser.evaluate(CANVAS_INK)
    assert [c["id"] for c in canvases] == ["chart-speedup", "chart-fraction"]
    for canvas in canvases:
        assert canvas["ink"] > 0.01 * canvas["size"], canvas  # axes, labels and curves drawn
        assert len(canvas["points"]) == 3 and all(n >= 2 for n in canvas["points"]), canvas  # run + 2 islands
    # What is drawn is the progress data: each curve rises at the evaluation that beat the best (numbered from 1).
    progress = json.loads(browser.evaluate(f"fetch('{base}/api/progress').then((r) => r.text())"))
    end = progress["last_sequence"] + 1
    for chart, series in zip(browser.evaluate(DRAWN), ("speedup", "fraction")):
        curves = {}
        for key, label in (("all", "run"), ("0", "island 0"), ("1", "island 1")):
            points = [(sequence + 1, value) for sequence, value in progress[series][key]]
            curves[label] = points + ([(end, points[-1][1])] if points[-1][0] < end else [])
        assert_drawn_as(chart, curves)
    browser.screenshot(str(ARTIFACTS / "progress.png"))

    browser.open(f"{base}/archive")
    assert browser.evaluate("document.querySelectorAll('svg.archive-grid').length") == 3
    assert browser.evaluate("document.querySelectorAll('svg.archive-grid rect.cell').length") > 0
    drawn = browser.evaluate("document.querySelector('svg.archive-grid rect.cell').getBBox().width")
    assert drawn > 10
    browser.screenshot(str(ARTIFACTS / "archive.png"))

    browser.open(f"{base}/lineage")
    nodes = browser.evaluate("Array.from(document.querySelectorAll('a.node')).map((n) => n.dataset.program)")
    assert nodes and browser.evaluate("document.querySelectorAll('svg.lineage circle').length") == len(nodes)
    # A click on the oldest node shows its program beside the tree, without leaving the page.
    browser.evaluate("document.querySelectorAll('a.node')[document.querySelectorAll('a.node').length - 1]"
                     ".dispatchEvent(new MouseEvent('click', {bubbles: true, button: 0}))")
    browser.wait_for(f"document.querySelector('#detail section.program')?.dataset.program === '{nodes[-1]}'")
    assert browser.evaluate("location.search").endswith(f"selected={nodes[-1]}")
    browser.screenshot(str(ARTIFACTS / "lineage.png"))

    browser.open(f"{served}/store/0/run/{web_store['llm']}/training?kind=sft")
    assert browser.evaluate("document.querySelectorAll('table.decisions tbody tr').length") > 0
    browser.screenshot(str(ARTIFACTS / "training.png"))
    browser.open(f"{served}/store/0/run/{web_store['llm']}/training?kind=rl")
    browser.open(f"{base}/evaluations")
    assert browser.problems() == []


@needs_opencl
def test_hostile_text_does_not_run_in_chromium(browser, served, web_store):
    run = web_store["llm"]
    program = hostile_program(web_store["path"], run)
    for url in (f"{served}/store/0/run/{run}/program/{program.id}",
                f"{served}/store/0/run/{run}/lineage?selected={program.id}"):
        mark = len(browser.events)
        browser.open(url)
        assert browser.evaluate("typeof window.__pwned") == "undefined"
        assert browser.evaluate("document.querySelectorAll('img').length") == 0
        # Only the package's own script is on the page; the hostile text is there as text.
        scripts = browser.evaluate("Array.from(document.scripts).map((s) => new URL(s.src).pathname)")
        assert scripts == ["/static/app.js"]
        text = browser.evaluate("document.body.innerText")
        assert "<script>window.__pwned = 'source'</script>" in text
        assert "<script>window.__pwned = 'answer'</script>" in text
        assert [p for p in browser.problems()[mark:] if "__pwned" in p] == []
    browser.screenshot(str(ARTIFACTS / "hostile.png"))


@needs_opencl
def test_a_page_follows_a_live_run_in_chromium(browser, tmp_path):
    path = tmp_path / "live.db"
    ks.RunStore(str(path))
    server = make_server(create_app([str(path)]), "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    evolution = ks.Evolution(small_relu(), evaluator(tmp_path / "cache"), ks.ParamMutator(), config(path, 12, 2))
    thread = threading.Thread(target=evolution.run)
    thread.start()
    try:
        reader = ks.store.RunStoreReader(str(path))
        deadline = time.monotonic() + 60
        while reader.latest_run_id() is None or reader.evaluation_count(reader.latest_run_id()) < 2:
            assert time.monotonic() < deadline and thread.is_alive(), "the run should have started"
            time.sleep(0.1)
        run = reader.latest_run_id()
        browser.open(f"http://127.0.0.1:{server.server_port}/store/0/run/{run}/")
        first = int(browser.wait_for("document.getElementById('progress').dataset.lastSequence"))
        first_text = browser.evaluate("document.querySelector('#live .state').innerText")
        # The page polls while the run goes on: its charts and its live part move on without a reload.
        later = int(browser.wait_for(
            f"Number(document.getElementById('progress').dataset.lastSequence) > {first} && "
            "document.getElementById('progress').dataset.lastSequence", timeout=90))
        assert later > first
        browser.wait_for(f"document.querySelector('#live .state').innerText !== {json.dumps(first_text)}", timeout=30)
    finally:
        evolution.stop()
        thread.join(120)
        server.shutdown()
        server.server_close()


# --------------------------------------------------------------------------------------------------
# bad query values: 400 with a short message, never a 500


@pytest.fixture(scope="module")
def small_store(tmp_path_factory):
    """A store the library's RunStore writes (no device needed): one run of five evaluations, one of them not
    confirmed (tests/python/test_confirmed_figures.py)."""
    from test_confirmed_figures import write_store

    path = tmp_path_factory.mktemp("bad-queries") / "run.db"
    write_store(path)
    return str(path)


HUGE = "9" * 30  # beyond any integer SQLite holds
BAD_QUERIES = {
    "/api/progress": ["since=abc", f"since={HUGE}", "since=-2", "since=1e3", "since=%EF%BC%91", "since=1_0",
                      "since=%201"],
    "/evaluations": ["before=abc", f"before={HUGE}", "before=-1", "before=0x10"],
    "/archive": ["x=9", "y=-1", f"x={HUGE}", "island=99", f"island={HUGE}", "island=-1", "x=a"],
    "/lineage": ["limit=0", "limit=-5", f"limit={HUGE}", "limit=5001", "limit=many"],
    "/training": ["page=-1", f"page={HUGE}", "page=x", "kind=ppo", "decision=nonsense"],
    "/": ["fragment=1&since=abc"],  # a parameter the page does not take is ignored, not an error
}


@pytest.mark.parametrize("route", sorted(BAD_QUERIES))
def test_every_route_answers_a_bad_query_value_with_a_400(small_store, route, caplog):
    app = create_app([small_store])
    client = app.test_client()
    if route == "/archive":  # the grid's own bounds are known once its worker has rebuilt it
        _, job = app.config["STORES"].archive(0, 1)
        job.thread.join(60)
    base = f"/store/0/run/1{route}" if route != "/" else "/store/0/run/1/"
    for query in BAD_QUERIES[route]:
        response = client.get(f"{base}?{query}", headers={"Host": "127.0.0.1:8050"})
        expected = 200 if route == "/" else 400
        assert response.status_code == expected, (query, response.status_code, response.get_data(as_text=True)[:500])
        if expected == 400:
            body = response.get_data(as_text=True)
            name = query.split("=", 1)[0]
            assert name in body and "Traceback" not in body
    assert "Traceback" not in caplog.text and "OverflowError" not in caplog.text


@pytest.mark.parametrize("path", [f"/store/0/run/{HUGE}/", f"/store/{HUGE}/run/1/", f"/store/0/run/{HUGE}/api/state",
                                  f"/store/0/run/{HUGE}/api/progress", f"/store/0/run/{HUGE}/program/abc"])
def test_a_run_or_store_number_out_of_range_is_a_400(small_store, path, caplog):
    client = create_app([small_store]).test_client()
    response = client.get(path, headers={"Host": "127.0.0.1:8050"})
    assert response.status_code == 400, (path, response.status_code)
    assert "out of range" in response.get_data(as_text=True)
    assert "Traceback" not in caplog.text


def test_good_query_values_still_work(small_store):
    client = create_app([small_store]).test_client()
    for url in ("/store/0/run/1/api/progress?since=-1", "/store/0/run/1/api/progress?since=2",
                "/store/0/run/1/evaluations?before=3", "/store/0/run/1/lineage?limit=5000",
                "/store/0/run/1/training?page=0&kind=rl", "/store/0/run/1/archive?x=0&y=1&island=0"):
        response = client.get(url, headers={"Host": "127.0.0.1:8050"})
        assert response.status_code == 200, (url, response.get_data(as_text=True)[:500])


# --------------------------------------------------------------------------------------------------
# a designed run: every figure known in advance (no device needed)

#: (origin, island, speedup, fraction of the limit, noise) of each evaluation, in order; each correct, strict and
#: unflagged (confirmed). The reference stands on every island; island 1 starts worse than it, island 0 rises at
#: evaluation 3 (to 138% of the device's limit, with a noise of 565.5%, as a CPU gives), the run at 3 and 4.
DESIGNED = [
    ("reference", 0, 1.0, 0.50, 0.02),
    ("param", 1, 0.8, 0.40, 0.03),
    ("param", 0, 1.5, 1.38, 5.655),
    ("llm_full", 1, 2.0, 0.90, 0.01),
    ("param", 0, 1.2, 0.20, 0.02),
]
#: Each drawn curve as (evaluation, value) change points, evaluations numbered from 1; the last one is the run's end.
DESIGNED_SPEEDUP = {"run": [(1, 1.0), (3, 1.5), (4, 2.0), (5, 2.0)], "island 0": [(1, 1.0), (3, 1.5), (5, 1.5)],
                    "island 1": [(1, 1.0), (4, 2.0), (5, 2.0)]}
DESIGNED_FRACTION = {"run": [(1, 0.5), (3, 1.38), (5, 1.38)], "island 0": [(1, 0.5), (3, 1.38), (5, 1.38)],
                     "island 1": [(1, 0.5), (4, 0.9), (5, 0.9)]}
#: The model calls of the run: (prompt tokens, completion tokens) of the step that made evaluation 4, and of a
#: step whose answer held no program; at 1 and 2 per 1,000 tokens, they cost 2.8.
DESIGNED_CALLS = [(1000, 500), (600, 100)]


def designed_evaluation(speedup: float, fraction: float, noise: float) -> "ks.Evaluation":
    result = ks.Evaluation()
    result.task = "relu"
    result.status = ks.parse_status("ok")
    result.message = f"{speedup:.3f}x the reference's speed (noise {noise * 100:.1f}%)"
    result.speedup = result.fitness = speedup
    timing = ks.TimingReport()
    timing.mode = "strict"
    timing.median_ms = 1.0 / speedup
    timing.noise = noise
    timing.samples = 100
    result.timing = timing
    sol = ks.SpeedOfLight()
    sol.fraction = sol.bandwidth_fraction = fraction
    result.sol = sol
    compile_report = ks.CompileReport()
    compile_report.ok = True
    compile_report.target = "pthread (PoCL)"
    kernel = ks.KernelResources()
    kernel.name = "relu"  # registers and spills left unknown (-1), as PoCL reports them
    kernel.shared_bytes = 0
    compile_report.kernels = [kernel]
    result.compile = compile_report
    return result


@pytest.fixture(scope="module")
def designed_store(tmp_path_factory):
    path = tmp_path_factory.mktemp("designed") / "run.db"
    store = ks.RunStore(str(path))
    info = ks.RunInfo()
    info.task_name = "relu"
    info.language = info.backend = "opencl"
    info.device = "pthread (PoCL)"
    info.mutator = "llm"
    config = ks.EvolutionConfig()
    config.islands = 2
    price = ks.LlmPrice()
    price.prompt_per_1k, price.completion_per_1k = 1.0, 2.0
    config.llm_prices = {"coder": price}
    info.config_json = config.to_json()
    run = store.create_run(info)
    reference = None
    for sequence, (origin, island, speedup, fraction, noise) in enumerate(DESIGNED):
        parents = [] if reference is None else [reference]
        candidate = ks.Candidate("opencl", f"// {sequence}\n__kernel void relu() {{}}\n",
                                 ks.Lineage(parent_ids=parents, island=island, generation=len(parents), origin=origin))
        store.add_program(run, candidate.id(), candidate, f"hash-{sequence}")
        step = ks.StepRecord()
        step.run, step.island, step.child_id, step.parent_ids = run, island, candidate.id(), parents
        step.selection, step.mutation = ("seed", "reference") if origin == "reference" else ("policy", origin)
        if origin == "llm_full":
            step.prompt = json.dumps([{"role": "user", "content": "make relu faster"}])
            step.response, step.model = "```opencl\n...\n```", "coder"
            step.prompt_tokens, step.completion_tokens = DESIGNED_CALLS[0]
        step_id = store.add_step(step)
        store.add_evaluation(run, candidate.id(), sequence, designed_evaluation(speedup, fraction, noise), step_id)
        reference = reference or candidate.id()
    failed = ks.StepRecord()  # a model call whose answer held no program: spent all the same
    failed.run, failed.island, failed.parent_ids, failed.selection, failed.mutation = run, 0, [reference], "policy", "llm_full"
    failed.prompt, failed.response, failed.model = json.dumps([{"role": "user", "content": "again"}]), "no code", "coder"
    failed.prompt_tokens, failed.completion_tokens = DESIGNED_CALLS[1]
    failed.failure = "no code block in the answer"
    store.add_step(failed)
    store.set_run_status(run, "finished", "budget")
    return {"path": str(path), "run": run}


def step_curve(points):
    """The vertices of a curve that holds each value up to the next point and rises there."""
    vertices = [points[0]]
    for (_, before), (x, y) in zip(points, points[1:]):
        vertices += [(x, before), (x, y)]
    return vertices


def test_the_reference_starts_every_islands_curve(designed_store):
    client = create_app([designed_store["path"]]).test_client()
    progress = get(client, f"/store/0/run/{designed_store['run']}/api/progress").get_json()
    for series, designed in (("speedup", DESIGNED_SPEEDUP), ("fraction", DESIGNED_FRACTION)):
        for key, name in (("all", "run"), ("0", "island 0"), ("1", "island 1")):
            points = designed[name][:-1]  # the API gives the change points; the page draws each curve on to the end
            assert [(sequence + 1, value) for sequence, value in progress[series][key]] == points, (series, key)


def test_the_pages_number_evaluations_as_report_does_and_explain_doubtful_figures(designed_store):
    path, run = designed_store["path"], designed_store["run"]
    client = create_app([path]).test_client()
    report = subprocess.run([sys.executable, "-m", "kernelsmith", "report", "--db", path, "--json"],
                            capture_output=True, text=True, timeout=300)
    assert report.returncode == 0, report.stderr
    document = json.loads(report.stdout)
    # The same numbers as `kernelsmith report`: the evaluations table, the best, the lineage, the program page.
    table = get(client, f"/store/0/run/{run}/evaluations").get_data(as_text=True)
    assert re.findall(r'<tr><td class="num">(\d+)</td>', table) == ["5", "4", "3", "2", "1"]
    best = document["best"][0]
    assert (best["evaluation"], best["speedup"]) == (4, 2.0)
    page = get(client, f"/store/0/run/{run}/").get_data(as_text=True)
    assert f"(evaluation {best['evaluation']})" in page
    lineage = get(client, f"/store/0/run/{run}/lineage").get_data(as_text=True)
    assert f"evaluation {best['evaluation']}</tspan>" in lineage and "evaluation 1</tspan>" in lineage
    assert f"evaluation {best['evaluation']})" in get(client, f"/store/0/run/{run}/program/{best['id']}").get_data(as_text=True)
    # The LLM spend, as report counts it.
    spend = get(client, f"/store/0/run/{run}/api/state").get_json()["llm"]
    assert {key: document["llm"][key] for key in spend} == pytest.approx(spend)
    assert spend == {"calls": 2, "prompt_tokens": 1600, "completion_tokens": 600, "cost": pytest.approx(2.8),
                     "priced": True}
    assert "LLM: 2 calls, 1600 prompt + 600 completion tokens, cost 2.8000" in page
    # Only the noisy evaluation is marked, with why; unknown resources are '?', as the CLI prints them.
    assert table.count('class="noisy"') == 1 and "not trustworthy" in table
    noisy_row = [row for row in table.split("<tr>") if 'class="noisy"' in row][0]
    assert noisy_row.startswith('<td class="num">3</td>')
    ids = {row["sequence"]: row["program_id"] for row in ks.store.RunStoreReader(path).evaluations_page(run)}
    noisy = get(client, f"/store/0/run/{run}/program/{ids[2]}").get_data(as_text=True)
    assert "Not trustworthy." in noisy and "On a CPU (PoCL)" in noisy
    assert "138% of the device's limit (an estimate)" in noisy and "Above 100%." in noisy
    header, body = noisy.split("<th>kernel</th>")[1].split("</table>")[0].split("</thead>")
    names = re.findall(r'<th class="num">(\w+)</th>', header)
    shown = dict(zip(names, re.findall(r'<td class="num">(.*?)</td>', body)))
    assert shown["registers"] == '<span class="unknown" title="unknown: the toolchain does not report it">?</span>'
    assert shown["shared_bytes"] == "0" and "-1" not in shown.values()
    quiet = get(client, f"/store/0/run/{run}/program/{ids[3]}").get_data(as_text=True)
    assert "Not trustworthy." not in quiet and "Above 100%." not in quiet and "(an estimate)" in quiet


def test_a_run_without_a_model_shows_no_llm_spend(small_store):
    client = create_app([small_store]).test_client()
    assert get(client, "/store/0/run/1/api/state").get_json()["llm"] is None
    assert "LLM:" not in get(client, "/store/0/run/1/").get_data(as_text=True)


@pytest.fixture(scope="module")
def designed_served(designed_store):
    server = make_server(create_app([designed_store["path"]]), "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/store/0/run/{designed_store['run']}"
    server.shutdown()
    server.server_close()


def test_the_charts_draw_each_improvement_where_it_happens_in_chromium(browser, designed_served):
    mark = len(browser.events)
    browser.open(f"{designed_served}/")
    browser.wait_for("document.getElementById('progress').dataset.lastSequence !== undefined")
    speedup, fraction = browser.evaluate(DRAWN)
    assert_drawn_as(speedup, DESIGNED_SPEEDUP)
    assert_drawn_as(fraction, DESIGNED_FRACTION)
    # The legend draws each curve's own line (the run's dashed), not a filled box.
    for chart in (speedup, fraction):
        assert [(item["text"], item["pointStyle"]) for item in chart["legend"]] == \
            [("run", "line"), ("island 0", "line"), ("island 1", "line")]
        assert chart["legend"][0]["lineDash"] and not chart["legend"][1]["lineDash"]
    assert fraction["ticks"][-1] == "140%"
    # Percent labels stay distinct however small the range.
    labels = {}
    for top in (0.012, 0.0003, 0.05, 1.4):
        labels[top] = browser.evaluate(
            "(() => { const chart = window.Chart.getChart(document.getElementById('chart-fraction'));"
            f" chart.options.scales.y.max = {top}; chart.update('none');"
            " return chart.scales.y.ticks.map((t) => [t.value, t.label]); })()")
        texts = [label for _, label in labels[top]]
        assert len(set(texts)) == len(texts), (top, texts)
        for value, label in labels[top]:
            assert float(label.rstrip("%")) == pytest.approx(value * 100, rel=1e-9, abs=1e-9), (top, value, label)
    assert "0.2%" in [label for _, label in labels[0.012]]  # where whole percents gave 0%, 0%, 0%, 1%, 1%, 1%
    # Notes that say what the figures mean, and the run's LLM spend.
    text = browser.evaluate("document.body.innerText")
    assert "The device's limit is an estimate" in text
    assert "LLM: 2 calls, 1600 prompt + 600 completion tokens, cost 2.8000" in text
    assert browser.problems()[mark:] == []
    browser.screenshot(str(ARTIFACTS / "designed-progress.png"))
