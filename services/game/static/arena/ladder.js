// The ladder page: a ladder's ranking, live games, queue and recent games (getLadder), each
// bot's recent results read from its games; read again every 5 s.
"use strict";

(() => {
  const { api, el, num, table } = Arena;
  const [, id] = Arena.segments();
  const page = document.querySelector('[data-testid="page"]');
  const part = (testid) => document.querySelector(`[data-testid="${testid}"]`);
  const REFRESH_MS = 5000;

  const botLink = (key) => el("a", { href: Arena.botHref(key), text: key });
  const gameLink = (gameId) => el("a", { href: Arena.gameHref(gameId), text: gameId.slice(0, 12) });
  const none = (testid, text) => el("p", { class: "note", testid, text });

  function games(testid, list, caption) {
    if (!list.length) return none(`${testid}-none`, "None.");
    const rows = list.map((game) =>
      el(
        "tr",
        { testid: `${testid}-${game.game_id}` },
        el("th", { scope: "row" }, gameLink(game.game_id)),
        el("td", { class: "text" }, ...game.bots.flatMap((key, i) => (i ? [" vs ", botLink(key)] : [botLink(key)]))),
        el("td", { text: new Date(game.paired_at).toLocaleString() }),
      ),
    );
    const headings = [["Game", undefined, "text"], ["Bots", "In seat order", "text"], "Paired"];
    return Arena.scrollBox(caption, table(testid, headings, rows, caption));
  }

  function draw(ladder) {
    part("ladder-game").textContent = ladder.game;
    part("ladder-status").textContent = `${ladder.open ? "open" : "closed"} · ${ladder.table_size} seats · ${ladder.games} games paired`;
    const ranking = ladder.ranking.map((entry, rank) =>
      el(
        "tr",
        { testid: `rank-${entry.key}`, data: { ordinal: entry.ordinal, games: entry.games } },
        el("td", { text: String(rank + 1) }),
        el("th", { scope: "row" }, botLink(entry.key)),
        el("td", { text: num(entry.ordinal) }),
        el("td", { text: String(entry.games) }),
      ),
    );
    part("ranking").replaceChildren(
      ranking.length
        ? Arena.scrollBox("Ranking", table("ranking-table", ["#", ["Bot", undefined, "text"], ["Rating", "mu − 3 sigma"], ["Rated games", "All its rated games of this game"]], ranking, "Leaderboard rating"))
        : none("ranking-none", "No rated game yet."),
    );
    part("live").replaceChildren(games("live", ladder.live, "Live games"));
    const queue = ladder.queue.map((bot) =>
      el("li", { testid: `queued-${bot.bot}` }, botLink(bot.bot), ` waiting since ${new Date(bot.since).toLocaleTimeString()}`),
    );
    part("queue").replaceChildren(queue.length ? el("ul", {}, ...queue) : none("queue-none", "Nobody waits."));
    part("recent").replaceChildren(games("recent", ladder.recent, "Recent games"));
  }

  async function refresh() {
    try {
      draw(await api(`/v1/ladders/${encodeURIComponent(id)}`));
      Arena.showError(null);
    } catch (error) {
      Arena.showError(error);
    }
    page.setAttribute("aria-busy", "false");
  }

  refresh();
  setInterval(refresh, REFRESH_MS);
})();
