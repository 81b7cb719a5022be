// The arena's shared helpers: reading the public API, building elements, the rating chart.
// Every page loads this script first; the pages send no credentials (public reads only).
"use strict";

const Arena = (() => {
  let catalog = null;
  /** Returns the API's catalogue of hosted games (read once per page). */
  const hosted = () => (catalog ??= api("/v1/catalog").then((body) => body.games));
  /** Returns the hosted games' names. */
  const games = async () => (await hosted()).map((g) => g.name);
  /** Returns a game's title from the catalogue (its name if the catalogue cannot be read or
   * does not hold it). */
  const title = async (name) => {
    try {
      return (await hosted()).find((g) => g.name === name)?.title ?? name;
    } catch (_) {
      catalog = null;
      return name;
    }
  };
  const POLL_MS = 2000;

  class ApiError extends Error {
    constructor(status, problem) {
      super(problem && problem.detail ? `${status}: ${problem.detail}` : `HTTP ${status}`);
      this.status = status;
      this.problem = problem;
    }
  }

  /** Returns the JSON answer of the public read `path`; throws an ApiError otherwise. */
  async function api(path) {
    const response = await fetch(path, {
      headers: { Accept: "application/json" },
      credentials: "omit",
    });
    if (!response.ok) {
      let problem = null;
      try {
        problem = await response.json();
      } catch (_) {
        problem = null;
      }
      throw new ApiError(response.status, problem);
    }
    return response.json();
  }

  /** Returns a new element: `attrs` sets `testid`, `text`, `class`, `data` and attributes. */
  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs)) {
      if (value === undefined || value === null) continue;
      if (name === "testid") node.dataset.testid = value;
      else if (name === "text") node.textContent = value;
      else if (name === "class") node.className = value;
      else if (name === "data") Object.assign(node.dataset, value);
      else node.setAttribute(name, value);
    }
    for (const child of children) {
      if (child !== null && child !== undefined) node.append(child);
    }
    return node;
  }

  /** Returns an SVG element with `attrs` as its attributes. */
  function svg(tag, attrs = {}) {
    const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
    return node;
  }

  /** Returns the address's path segments after `/arena`, decoded. */
  function segments() {
    return location.pathname.split("/").filter(Boolean).slice(1).map(decodeURIComponent);
  }

  const enc = encodeURIComponent;

  function tournamentHref(id) {
    return `/arena/tournaments/${enc(id)}`;
  }
  function gameHref(id) {
    return `/arena/games/${enc(id)}`;
  }
  function replayHref(id) {
    return `/replay/${enc(id)}`;
  }
  /** Returns the bot page of `key` (`name@version`; the version is after the last @). */
  function botHref(key) {
    const at = key.lastIndexOf("@");
    const [name, version] = at < 0 ? [key, "1"] : [key.slice(0, at), key.slice(at + 1)];
    return `/arena/bots/${enc(name)}/${enc(version)}`;
  }
  function historyPath(game, key) {
    const at = key.lastIndexOf("@");
    return `/v1/leaderboards/${enc(game)}/${enc(key.slice(0, at))}/${enc(key.slice(at + 1))}/history`;
  }

  const DASH = "–";

  /** Returns `value` with `digits` decimals, or an en dash for none. */
  function num(value, digits = 2) {
    return value === null || value === undefined ? DASH : Number(value).toFixed(digits);
  }

  /** Returns why a game is not rated, in words, when the API says so (its `unrated`: a code
   * and a message), else null (rated, or it may still be). */
  function unratedReason(game) {
    const reason = game.unrated ?? null;
    if (reason === null || reason === false) return null;
    if (typeof reason === "string") return reason.replaceAll("_", " ");
    return reason.message || (reason.code ? reason.code.replaceAll("_", " ") : "not rated");
  }

  /** Shows `error` in the page's alert (none: hides it). */
  function showError(error) {
    const box = document.querySelector('[data-testid="error"]');
    if (!box) return;
    box.hidden = !error;
    box.textContent = error ? String(error.message || error) : "";
  }

  /** Replaces `node`'s children, unless what they draw (`key`) is what it drew last. */
  function replace(node, key, ...children) {
    if (node.dataset.drawn === key) return false;
    node.replaceChildren(...children);
    node.dataset.drawn = key;
    return true;
  }

  /** Returns a <table> with a header row of `headings` and `rows` (each a <tr>). A heading
   * is its text, or [text, title, class] where the title explains it and the class `text` sets
   * a column of words (aligned left); a caption is text or a node. */
  function table(testid, headings, rows, caption) {
    const head = el(
      "tr",
      {},
      ...headings.map((heading) => {
        const [text, title, kind] = Array.isArray(heading) ? heading : [heading, undefined, undefined];
        return el("th", { scope: "col", title, class: kind }, text);
      }),
    );
    return el(
      "table",
      { testid },
      caption ? el("caption", {}, caption) : null,
      el("thead", {}, head),
      el("tbody", {}, ...rows),
    );
  }

  /** Returns `node` in a box that scrolls sideways on its own (so the page never does), a
   * keyboard stop named `label` so that the keyboard can scroll it too. */
  function scrollBox(label, node) {
    return el("div", { class: "scroll", role: "region", tabindex: "0", "aria-label": `${label} table` }, node);
  }

  /** Draws `series` (each {label, key, values, games, testid}) as lines over their own games
   * into `figure`; `values[i]` is the rating after the series' game i + 1. `title` names the
   * rating, `axisLabel` what the horizontal axis counts. */
  function ratingChart(figure, series, emptyNote, title = "Leaderboard rating (mu - 3 sigma)", axisLabel = "its rated games") {
    const drawn = series.filter((line) => line.values.length > 0);
    if (drawn.length === 0) {
      figure.replaceChildren(el("p", { class: "note", testid: "chart-empty", text: emptyNote }));
      return;
    }
    // As wide as its box (the page's, while the box is not on it yet), so that its text keeps
    // its size on a phone instead of shrinking with the drawing.
    const room = figure.clientWidth || document.documentElement.clientWidth - 32;
    const width = Math.round(Math.max(300, Math.min(640, room)));
    const height = 260;
    const pad = { left: 48, right: 16, top: 12, bottom: 30 };
    const all = drawn.flatMap((line) => line.values);
    let low = Math.min(...all);
    let high = Math.max(...all);
    if (high - low < 1e-9) {
      low -= 1;
      high += 1;
    }
    // Each line runs over its own entrant's games: its i-th point is that entrant's game i + 1.
    const most = Math.max(...drawn.map((line) => line.values.length));
    const x = (index) =>
      pad.left + (most <= 1 ? 0 : (index * (width - pad.left - pad.right)) / (most - 1));
    const y = (value) => pad.top + ((high - value) * (height - pad.top - pad.bottom)) / (high - low);
    const chart = svg("svg", {
      viewBox: `0 0 ${width} ${height}`,
      role: "img",
      class: "chart",
      "aria-label": `${title}, after each of ${axisLabel} (the legend says where each line ends)`,
    });
    chart.dataset.testid = "chart";
    chart.append(svg("line", { class: "axis", x1: pad.left, x2: pad.left, y1: pad.top, y2: height - pad.bottom }));
    chart.append(
      svg("line", { class: "axis", x1: pad.left, x2: width - pad.right, y1: height - pad.bottom, y2: height - pad.bottom }),
    );
    for (const value of [high, (high + low) / 2, low]) {
      const label = svg("text", { class: "tick", x: pad.left - 6, y: y(value) + 4, "text-anchor": "end" });
      label.textContent = value.toFixed(1);
      chart.append(label, svg("line", { class: "grid", x1: pad.left, x2: width - pad.right, y1: y(value), y2: y(value) }));
    }
    for (const index of most > 1 ? [0, most - 1] : [0]) {
      const anchor = index === 0 ? "start" : "end";
      const label = svg("text", { class: "tick", x: x(index), y: height - 10, "text-anchor": anchor });
      label.textContent = `game ${index + 1}`;
      chart.append(label);
    }
    const axis = svg("text", { class: "tick", x: (pad.left + width - pad.right) / 2, y: height - 10, "text-anchor": "middle" });
    axis.textContent = axisLabel;
    if (most > 2) chart.append(axis);
    const legend = el("ul", { class: "legend", testid: "legend" });
    series.forEach((line, position) => {
      const colour = `c${position % 8}`;
      const group = svg("g", { class: `series ${colour}` });
      group.dataset.testid = line.testid;
      group.dataset.key = line.key;
      group.dataset.values = line.values.map(String).join(" ");
      group.dataset.games = line.games.join(" ");
      const points = line.values.map((value, index) => `${x(index)},${y(value)}`).join(" ");
      if (line.values.length > 1) group.append(svg("polyline", { points }));
      line.values.forEach((value, index) => {
        const dot = svg("circle", { cx: x(index), cy: y(value), r: 3 });
        const title = svg("title");
        title.textContent = `${line.label}, game ${index + 1}: ${value.toFixed(2)}`;
        dot.append(title);
        group.append(dot);
      });
      chart.append(group);
      const last = line.values.length ? num(line.values[line.values.length - 1]) : "no rated game";
      legend.append(
        el("li", {}, el("span", { class: `swatch ${colour}`, "aria-hidden": "true" }), `${line.label}: ${last}`),
      );
    });
    figure.replaceChildren(chart, legend);
  }

  return {
    games,
    title,
    POLL_MS,
    DASH,
    ApiError,
    api,
    el,
    svg,
    segments,
    tournamentHref,
    gameHref,
    replayHref,
    botHref,
    historyPath,
    num,
    unratedReason,
    showError,
    replace,
    table,
    scrollBox,
    ratingChart,
  };
})();
