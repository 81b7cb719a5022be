// The evaluation page: a hosted evaluation from getEvaluation (public), its verdict and the
// LLR after each unit drawn between its bounds, polled while it runs.
"use strict";

(() => {
  const { api, el, num, svg } = Arena;
  const [, id] = Arena.segments();
  const page = document.querySelector('[data-testid="page"]');
  const part = (testid) => document.querySelector(`[data-testid="${testid}"]`);

  const VERDICTS = {
    H1: "H1: the candidate is better (by elo1 or more)",
    H0: "H0: the candidate is not better (than elo0)",
    inconclusive: "Inconclusive: its games ran out before a bound was crossed",
  };

  function drawSummary(e) {
    const d = e.definition;
    const rows = [
      ["candidate", "Candidate", `${d.candidate.bot}@${d.candidate.version} (${d.candidate.kind})`],
      ["baseline", "Baseline", `${d.baseline.bot}@${d.baseline.version} (${d.baseline.kind})`],
      ["game", "Game", `${d.game}, ${d.table_size} seats${d.ruleset ? `, ${d.ruleset}` : ""}`],
      ["test", "Test", `elo0 ${d.elo0}, elo1 ${d.elo1}, alpha ${d.alpha}, beta ${d.beta}`],
      ["llr", "LLR", `${num(e.llr)} (bounds ${num(e.bounds[0])}, ${num(e.bounds[1])})`],
      ["games", "Games", `${e.games} (${e.pairs} units) of at most ${d.max_games}`],
      ["elo", "Elo", `${num(e.elo, 1)} (95% interval ${num(e.elo_interval[0], 1)} to ${num(e.elo_interval[1], 1)})`],
    ];
    part("summary").replaceChildren(
      ...rows.flatMap(([testid, label, value]) => [
        el("dt", { text: label }),
        el("dd", { testid: `summary-${testid}`, text: value }),
      ]),
    );
    const verdict = part("verdict");
    verdict.dataset.verdict = e.verdict ?? "running";
    verdict.textContent = e.verdict ? VERDICTS[e.verdict] : "Running: no bound crossed yet.";
  }

  /** Draws the LLR after each unit as a line between the two bounds (dashed). */
  function drawChart(e) {
    const figure = part("llr-chart");
    const values = e.llr_history;
    const [lower, upper] = e.bounds;
    const width = Math.round(Math.max(300, Math.min(640, figure.clientWidth || 640)));
    const height = 260;
    const pad = { left: 48, right: 16, top: 12, bottom: 30 };
    const low = Math.min(lower, ...values) - 0.2;
    const high = Math.max(upper, ...values) + 0.2;
    const count = Math.max(values.length, 2);
    const x = (index) => pad.left + (index * (width - pad.left - pad.right)) / count;
    const y = (value) => pad.top + ((high - value) * (height - pad.top - pad.bottom)) / (high - low);
    const chart = svg("svg", {
      viewBox: `0 0 ${width} ${height}`,
      role: "img",
      class: "chart",
      "aria-label": `LLR after each of ${values.length} units, now ${num(e.llr)}, bounds ${num(lower)} and ${num(upper)}`,
    });
    chart.dataset.testid = "chart";
    for (const [value, testid] of [[upper, "upper"], [0, "zero"], [lower, "lower"]]) {
      const line = svg("line", { class: testid === "zero" ? "axis" : "grid bound", x1: pad.left, x2: width - pad.right, y1: y(value), y2: y(value) });
      line.dataset.testid = `bound-${testid}`;
      if (testid !== "zero") line.setAttribute("stroke-dasharray", "6 4");
      const label = svg("text", { class: "tick", x: pad.left - 6, y: y(value) + 4, "text-anchor": "end" });
      label.textContent = value.toFixed(2);
      chart.append(line, label);
    }
    const group = svg("g", { class: "series c0" });
    group.dataset.testid = "llr-line";
    group.dataset.values = values.map(String).join(" ");
    const points = [0, ...values].map((value, index) => `${x(index)},${y(value)}`).join(" ");
    group.append(svg("polyline", { points }));
    chart.append(group);
    const axis = svg("text", { class: "tick", x: (pad.left + width - pad.right) / 2, y: height - 10, "text-anchor": "middle" });
    axis.textContent = `units (${values.length})`;
    chart.append(axis);
    figure.replaceChildren(chart);
  }

  async function poll() {
    try {
      const e = await api(`/v1/evaluations/${encodeURIComponent(id)}`);
      Arena.showError(null);
      drawSummary(e);
      drawChart(e);
      page.setAttribute("aria-busy", "false");
      if (e.status === "running") setTimeout(poll, Arena.POLL_MS);
    } catch (error) {
      Arena.showError(error);
      page.setAttribute("aria-busy", "false");
      if (!(error instanceof Arena.ApiError) || error.status >= 500) setTimeout(poll, Arena.POLL_MS);
    }
  }

  part("evaluation-title").textContent = id;
  document.title = `Evaluation ${id} · cardarena arena`;
  poll();
})();
