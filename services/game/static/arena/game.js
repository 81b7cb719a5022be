// The game page: while the game runs, a spectator's view over its event stream (streamGame,
// anonymous); once it is over, its result and the replay viewer. Reads getGame too.
"use strict";

(() => {
  const { api, el } = Arena;
  const [, gameId] = Arena.segments();
  const base = `/v1/games/${encodeURIComponent(gameId)}`;
  const page = document.querySelector('[data-testid="page"]');
  const part = (id) => document.querySelector(`[data-testid="${id}"]`);
  const LOGGED = 500;
  let stream = null;
  let pending = null;
  let over = false;

  function seatName(seat) {
    if (seat.kind === "bot" || !seat.kind) return `${seat.name || seat.bot}@${seat.version || "1"}`;
    return `${seat.name || seat.bot || "seat"}${seat.version ? "@" + seat.version : ""} (${seat.kind})`;
  }

  function drawGame(game) {
    part("game-name").textContent = game.game;
    part("game-id").textContent = game.game_id;
    document.title = `${game.game} game · cardarena arena`;
    const status = part("status");
    status.textContent = game.status;
    status.dataset.status = game.status;
    part("version").textContent = String(game.version);
    const seats = game.seats.map((seat, index) =>
      el(
        "li",
        { testid: `seat-${index}`, data: { toMove: game.to_move.includes(index), name: seatName(seat) } },
        `${index}: `,
        seat.kind === "bot" || !seat.kind
          ? el("a", { href: Arena.botHref(seatName(seat)), text: seatName(seat) })
          : seatName(seat),
        game.result ? ` · place ${game.result.places[index] ?? "–"}` : "",
      ),
    );
    Arena.replace(part("seats"), JSON.stringify([game.seats, game.to_move, game.result]), ...seats);
    // The public table: a spectator's (`table`, a game with decisions) or the whole one
    // (`view`, a game without decisions); the ruleset is in the definition, not here.
    const view = part("view");
    const shown = game.table || game.view;
    if (shown) {
      const items = Object.entries(shown)
        .filter(([name]) => name !== "ruleset")
        .flatMap(([name, value]) => [
          el("dt", { text: name.replaceAll("_", " ") }),
          el("dd", { testid: `view-${name}`, data: { json: JSON.stringify(value) }, text: told(value) }),
        ]);
      view.replaceChildren(...items);
      view.dataset.version = String(game.version);
      view.hidden = false;
    }
    page.dataset.version = String(game.version);
    page.dataset.status = game.status;
    if (game.result) finish(game);
  }

  /** Returns a table's value in words: cards by spaces, a list per seat as `seat: ...`. */
  function told(value) {
    if (value === null || value === undefined) return "–";
    if (!Array.isArray(value)) return typeof value === "object" ? JSON.stringify(value) : String(value);
    if (value.length === 0) return "–";
    if (value.every(Array.isArray)) return value.map((item, seat) => `${seat}: ${told(item)}`).join(" · ");
    return value.map((item) => (typeof item === "object" && item !== null ? JSON.stringify(item) : String(item))).join(" ");
  }

  function finish(game) {
    over = true;
    if (stream) stream.close();
    stream = null;
    const result = part("result");
    if (!result.hidden) return;
    const places = game.result.places || [];
    result.dataset.status = game.result.status;
    result.dataset.places = places.join(" ");
    part("result-text").textContent =
      `${game.result.status}${game.result.reason ? ": " + game.result.reason : ""}` +
      (places.length ? ` · places ${places.join(", ")}` : "");
    part("replay-link").href = Arena.replayHref(game.game_id);
    part("replay-frame").src = Arena.replayHref(game.game_id);
    result.hidden = false;
  }

  function logEvent(item) {
    const log = part("log");
    const data = JSON.stringify(item.data);
    log.append(
      el("li", {
        value: String(item.version),
        data: { version: item.version, type: item.type, json: data },
        text: `${item.type} ${data.length > 160 ? data.slice(0, 157) + "…" : data}`,
      }),
    );
    while (log.children.length > LOGGED) log.firstElementChild.remove();
    log.scrollTop = log.scrollHeight;
    part("version").textContent = String(item.version);
  }

  /** Reads the game again soon (at most one read in flight): status, seats to move, result. */
  function reread(delay = 300) {
    if (pending !== null) return;
    pending = setTimeout(async () => {
      try {
        drawGame(await api(base));
        Arena.showError(null);
      } catch (error) {
        Arena.showError(error);
      }
      pending = null;
    }, delay);
  }

  /** Polls the game while its stream is refused (e.g. a sealed table, a busy service). */
  function poll() {
    if (over) return;
    reread(0);
    setTimeout(poll, Arena.POLL_MS);
  }

  function follow() {
    part("live").hidden = false;
    stream = new EventSource(`${base}/stream`);
    stream.addEventListener("snapshot", (message) => drawGame(JSON.parse(message.data)));
    stream.addEventListener("event", (message) => {
      const item = JSON.parse(message.data);
      logEvent(item);
      page.dataset.streamed = String(item.version);
      reread();
    });
    stream.addEventListener("error", () => {
      if (!over && stream && stream.readyState === EventSource.CLOSED) {
        Arena.showError(new Error("The game's stream was refused; reading the game every 2 s."));
        stream = null;
        poll();
      }
    });
  }

  async function start() {
    try {
      const game = await api(base);
      drawGame(game);
      if (!game.result) follow();
    } catch (error) {
      Arena.showError(error);
    }
    page.setAttribute("aria-busy", "false");
  }

  start();
})();
