// The bot page: a bot version from getBot (registered bots), its other versions (listBots),
// its line of each game's leaderboard (getLeaderboard), its rating over its games and its
// recent rated games (getRatingHistory).
"use strict";

(() => {
  const { api, el, num, table } = Arena;
  const [, name, version] = Arena.segments();
  const key = `${name}@${version}`;
  const page = document.querySelector('[data-testid="page"]');
  const part = (id) => document.querySelector(`[data-testid="${id}"]`);
  const RECENT = 20;
  const BOARD = 1000;

  /** Returns the bot from getBot when listBots lists it (a built-in strategy is not). */
  async function registered(bots) {
    const listed = bots.bots.some((bot) => bot.name === name && bot.version === version);
    const path = `/v1/bots/${encodeURIComponent(name)}/${encodeURIComponent(version)}`;
    return listed ? api(path) : null;
  }

  function drawAbout(bot, versions) {
    const rows = bot
      ? [
          ["kind", "Kind", bot.kind],
          ["game", "Game", bot.game],
          ["strategy", "Strategy", bot.strategy || "–"],
          ["description", "Description", bot.description || "–"],
          ["registered-at", "Registered", bot.registered_at],
        ]
      : [["kind", "Kind", "not a registered bot (a built-in strategy under a version label)"]];
    part("about").replaceChildren(
      ...rows.flatMap(([testid, label, value]) => [
        el("dt", { text: label }),
        el("dd", { testid: `about-${testid}`, text: value }),
      ]),
    );
    part("versions").replaceChildren(
      ...versions.map((other) =>
        el(
          "li",
          { testid: `version-${other}`, "data-current": String(other === version) },
          other === version
            ? el("strong", { text: `${name}@${other}` })
            : el("a", { href: Arena.botHref(`${name}@${other}`), text: `${name}@${other}` }),
        ),
      ),
    );
  }

  function drawGame(game, board, history) {
    const rank = board.entries.findIndex((entry) => entry.key === key);
    const entry = rank < 0 ? null : board.entries[rank];
    const summary = entry
      ? el("p", {
          testid: `rank-${game}`,
          data: { rank: rank + 1, ordinal: entry.ordinal, games: entry.games },
          text: `#${rank + 1} of ${board.entries.length} on the leaderboard: rating ${num(entry.ordinal)} (mu ${num(entry.mu)}, sigma ${num(entry.sigma)}) over ${entry.games} rated games`,
        })
      : el("p", { class: "note", testid: `rank-${game}`, text: board.note || "Not on this leaderboard." });
    const figure = el("figure", { class: "chart-box", testid: `chart-${game}` });
    const series = [
      {
        label: key,
        key,
        testid: `rating-line-${game}`,
        values: history.steps.map((step) => step.ordinal),
        games: history.steps.map((step) => step.game_id),
      },
    ];
    Arena.ratingChart(figure, series, "No rated game.");
    const recent = history.steps.slice(-RECENT).reverse();
    const rows = recent.map((step) =>
      el(
        "tr",
        { testid: `recent-${step.game_id}`, data: { place: step.place, ordinal: step.ordinal } },
        el("th", { scope: "row" }, el("a", { href: Arena.gameHref(step.game_id), text: step.game_id.slice(0, 12) })),
        el("td", { text: String(step.place) }),
        el("td", { text: num(step.ordinal) }),
        el("td", { text: new Date(step.finished_at).toLocaleString() }),
      ),
    );
    return el(
      "section",
      { testid: `game-${game}` },
      el("h3", { text: game }),
      summary,
      figure,
      rows.length
        ? Arena.scrollBox(
            `Recent rated ${game} games`,
            table(`recent-${game}`, [["Game", undefined, "text"], "Place", ["Rating after", "Leaderboard rating after the game"], "Finished"], rows, "Recent rated games"),
          )
        : null,
    );
  }

  async function start() {
    part("bot-key").textContent = key;
    document.title = `${key} · cardarena arena`;
    try {
      const bots = await api("/v1/bots");
      const bot = await registered(bots);
      const versions = bots.bots.filter((other) => other.name === name).map((other) => other.version);
      if (!versions.includes(version)) versions.push(version);
      drawAbout(bot, versions);
      const games = bot ? [bot.game] : await Arena.games();
      const sections = await Promise.all(
        games.map(async (game) => {
          const [board, history] = await Promise.all([
            api(`/v1/leaderboards/${game}?limit=${BOARD}`),
            api(Arena.historyPath(game, key)),
          ]);
          return bot || history.steps.length ? drawGame(game, board, history) : null;
        }),
      );
      const shown = sections.filter((section) => section !== null);
      part("ratings").replaceChildren(
        ...(shown.length ? shown : [el("p", { class: "note", testid: "unrated", text: "No rated game yet." })]),
      );
    } catch (error) {
      Arena.showError(error);
    }
    page.setAttribute("aria-busy", "false");
  }

  start();
})();
