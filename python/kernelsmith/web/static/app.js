// The web view's behaviour (docs/web.md): follow the run, draw the progress charts, show a lineage node in
// place. Only this file and chart.min.js run on the pages (the Content-Security-Policy allows nothing else);
// whatever comes from a run store reaches the page as text escaped by the server's templates or as JSON
// numbers and ids, never as script.
"use strict";

(function () {
  const body = document.body;
  const statusLine = document.getElementById("live-status");
  const pollRunning = 1000 * Number(body.dataset.pollRunning || 2);
  const pollIdle = 1000 * Number(body.dataset.pollIdle || 10);
  let signature = body.dataset.signature || "";
  let running = body.dataset.running === "1";

  function say(text) {
    if (statusLine) statusLine.textContent = text;
  }

  async function fetchOk(url) {
    const response = await fetch(url, {cache: "no-store"});
    if (!response.ok) throw new Error(url + " answered HTTP " + response.status);
    return response;
  }

  // The page's live part, rendered again by the server (escaped there) with the run's new state.
  async function refreshLive() {
    const live = document.getElementById("live");
    if (!live || !live.dataset.fragment) return;
    live.innerHTML = await (await fetchOk(live.dataset.fragment)).text();
  }

  // ---- progress charts: the best-so-far curves, extended with the change points after the last one seen.
  // The API counts evaluations by their sequence (from 0); the charts number them from 1, as `kernelsmith report`
  // and the tables do.

  const COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                  "#bcbd22", "#17becf"];
  const RUN_COLOR = "#3d444d";
  const charts = {};
  let lastSequence = -1;

  // A tick's percentage with as many decimals as the ticks need to differ (0.1%, 0.15%, 0.2%, never 0%, 0%, 0%).
  function percentLabel(value, index, ticks) {
    const values = ticks.map((tick) => tick.value * 100);
    const step = values.length > 1 ? Math.abs(values[1] - values[0]) : Math.abs(value * 100);
    let digits = 0;
    while (digits < 6 && values.some((v) => Math.abs(Number(v.toFixed(digits)) - v) > step * 1e-3 + 1e-12)) digits++;
    return (value * 100).toFixed(digits) + "%";
  }

  function lineLabels(chart) {
    return window.Chart.defaults.plugins.legend.labels.generateLabels(chart).map((item) => Object.assign(item, {
      pointStyle: "line", lineDash: chart.data.datasets[item.datasetIndex].borderDash}));
  }

  function makeChart(canvas, yTitle, percent) {
    return new window.Chart(canvas, {
      type: "line",
      data: {datasets: []},
      options: {
        animation: false,
        parsing: false,
        normalized: true,
        responsive: true,
        maintainAspectRatio: false,
        interaction: {mode: "nearest", intersect: false},
        elements: {point: {radius: 0, hitRadius: 6}, line: {borderWidth: 2}},
        scales: {
          x: {type: "linear", title: {display: true, text: "evaluation"}, min: 1, ticks: {precision: 0}},
          y: {title: {display: true, text: yTitle}, beginAtZero: true, ticks: percent ? {callback: percentLabel} : {}},
        },
        // Each legend entry is a short stretch of its curve (dashed for the run), not a filled box.
        plugins: {legend: {position: "bottom", labels: {usePointStyle: true, pointStyleWidth: 28, generateLabels: lineLabels}}},
      },
    });
  }

  function dataset(chart, key) {
    let found = chart.data.datasets.find((d) => d.key === key);
    if (!found) {
      const color = key === "all" ? RUN_COLOR : COLORS[Number(key) % COLORS.length];
      // The run's curve is dashed, so that the island holding the best shows beneath it. "before": the curve
      // keeps the old best up to the evaluation that beat it and rises there (Chart.js's "after" rises at the
      // evaluation before).
      found = {key: key, label: key === "all" ? "run" : "island " + key, data: [], stepped: "before",
               borderColor: color, backgroundColor: color, borderWidth: 2, borderDash: key === "all" ? [6, 4] : []};
      chart.data.datasets.push(found);
      chart.data.datasets.sort((a, b) => (a.key === "all" ? -1 : b.key === "all" ? 1 : Number(a.key) - Number(b.key)));
    }
    return found;
  }

  function extend(chart, series, last) {
    for (const [key, points] of Object.entries(series)) {
      const target = dataset(chart, key);
      if (target.data.length && target.data[target.data.length - 1].tail) target.data.pop();
      for (const [sequence, y] of points) target.data.push({x: sequence + 1, y: y});
    }
    // Each curve runs on to the last evaluation: a best holds until it is beaten.
    for (const target of chart.data.datasets) {
      const end = target.data[target.data.length - 1];
      if (end && end.tail) target.data.pop();
      const final = target.data[target.data.length - 1];
      if (final && final.x < last + 1) target.data.push({x: last + 1, y: final.y, tail: true});
    }
    chart.update("none");
  }

  async function refreshCharts() {
    const holder = document.getElementById("progress");
    if (!holder || !window.Chart) return;
    if (!charts.speedup) {
      charts.speedup = makeChart(document.getElementById("chart-speedup"), "best speedup (x)", false);
      charts.fraction = makeChart(document.getElementById("chart-fraction"), "best fraction of the limit", true);
    }
    const url = holder.dataset.url + "?since=" + encodeURIComponent(lastSequence);
    const progress = await (await fetchOk(url)).json();
    extend(charts.speedup, progress.speedup, progress.last_sequence);
    extend(charts.fraction, progress.fraction, progress.last_sequence);
    lastSequence = progress.last_sequence;
    holder.dataset.lastSequence = String(lastSequence);
    const note = document.getElementById("progress-note");
    if (note) {
      const view = progress.view;
      note.textContent = view.error ? "cannot read the evaluations: " + view.error
        : view.busy ? "reading the evaluations in the background: " + view.done + " of " + view.total + " so far" : "";
    }
  }

  // ---- following the run

  async function tick() {
    const url = body.dataset.stateUrl;
    try {
      if (url) {
        const state = await (await fetchOk(url)).json();
        running = state.status === "running" || state.running === true;
        if (state.signature !== signature) {
          signature = state.signature;
          await refreshLive();
          await refreshCharts();
        }
        say((running ? "live · " : "") + "checked " + new Date().toLocaleTimeString());
      }
    } catch (error) {
      say("cannot refresh: " + error.message);
    }
    if (url) window.setTimeout(tick, running ? pollRunning : pollIdle);
  }

  // ---- lineage: a click on a node shows its program next to the tree

  document.addEventListener("click", async (event) => {
    const link = event.target.closest ? event.target.closest("a.node[data-detail]") : null;
    if (!link || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey) return;
    if (!document.getElementById("detail")) return;
    event.preventDefault();
    const program = link.dataset.program;
    // From now on the page's live part follows the new selection (a refresh may come while we load it).
    const href = link.getAttribute("href");
    window.history.replaceState(null, "", href);
    const live = document.getElementById("live");
    if (live) {
      const next = new URL(href, window.location.href);
      next.searchParams.set("fragment", "1");
      live.dataset.fragment = next.pathname + next.search;
    }
    let html;
    try {
      html = await (await fetchOk(link.dataset.detail)).text();
    } catch (error) {
      say("cannot load the program: " + error.message);
      return;
    }
    const detail = document.getElementById("detail");  // looked up again: a refresh may have replaced it
    if (detail) detail.innerHTML = html;
    document.querySelectorAll("a.node").forEach((node) => {
      node.classList.toggle("selected", node.dataset.program === program);
    });
  });

  window.addEventListener("DOMContentLoaded", () => {
    refreshCharts().catch((error) => say("cannot draw the charts: " + error.message));
    if (body.dataset.stateUrl) window.setTimeout(tick, running ? pollRunning : pollIdle);
  });
})();
