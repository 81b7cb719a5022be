// The game page: a running game live from its stream, then (or a finished game at once) its
// replay at any version from GET /v1/games/{id}/replay. Served at /replay/{id} and at
// /arena/games/{id}; `?embed=1` draws only the table and the last event (for an iframe).
//
// Plain ES modules, no build step. A game's table is drawn by its module (games/index.js),
// any other game's by the generic module. A spectator sees only the public table; a seat's
// view needs that seat's bot token, which the page keeps in this tab (sessionStorage) only.
import { catalog } from "./catalog.js";
import { describe } from "./events.js";
import { drawingOf } from "./games/index.js";
import { clockText, h, seatName } from "./kit.js";
import { follow } from "./live.js";

const PLAY_MS = 700;
const SLIDER_MS = 120;
const CACHED = 40;
const LOGGED = 12;
const TICK_MS = 250;
const POLL_MS = 2000;
const TOKEN = "cardarena.token";

const params = new URLSearchParams(location.search);
const page = {
  gameId: decodeURIComponent(location.pathname.split("/").filter(Boolean).pop() || ""),
  embed: params.get("embed") === "1",
  mode: "replay",
  version: null,
  last: null,
  seat: null,
  seats: [],
  over: false,
  playing: false,
  timer: null,
  ticket: 0,
  cache: new Map(),
  notice: "",
  titles: new Map(),
  events: [],
  game: null,
  reading: null,
  again: false,
  abort: null,
};

const byTestId = (id) => document.querySelector(`[data-testid="${id}"]`);
const titleOf = (name) => page.titles.get(name) || name;

// Fetching --------------------------------------------------------------------------------

class Problem extends Error {
  constructor(status, body) {
    super((body && (body.detail || body.title)) || `HTTP ${status}`);
    this.status = status;
    this.body = body || {};
  }
}

const token = () => sessionStorage.getItem(TOKEN) || "";
const credentials = () => (token() ? { authorization: `Bearer ${token()}` } : {});

async function getJson(url) {
  const response = await fetch(url, { headers: { accept: "application/json", ...credentials() } });
  const body = await response.json().catch(() => null);
  if (!response.ok) throw new Problem(response.status, body);
  return body;
}

const gameUrl = (rest = "") => `/v1/games/${encodeURIComponent(page.gameId)}${rest}`;

function replayAt(version, seat) {
  const key = `${version}:${seat === null ? "" : seat}`;
  if (page.cache.has(key)) return page.cache.get(key);
  const query = new URLSearchParams();
  if (version !== null) query.set("version", String(version));
  if (seat !== null) query.set("seat", String(seat));
  const promise = getJson(gameUrl(`/replay?${query}`));
  // Only a finished game's replays never change; keep a few of them for stepping back.
  if (page.over && version !== null) {
    page.cache.set(key, promise);
    promise.catch(() => page.cache.delete(key));
    if (page.cache.size > CACHED) page.cache.delete(page.cache.keys().next().value);
  }
  return promise;
}

/** Shows `error`, or (none) the page's standing notice if it has one. */
function showError(error) {
  const box = byTestId("error");
  if (!error) {
    box.hidden = !page.notice;
    box.textContent = page.notice || "";
    return;
  }
  box.hidden = false;
  box.textContent = error instanceof Problem ? `${error.status}: ${error.message}` : String(error);
}

// Drawing ---------------------------------------------------------------------------------

function drawEvent(events, game) {
  const box = byTestId("event");
  const event = events[events.length - 1];
  box.replaceChildren();
  if (!event) return;
  box.dataset.version = String(event.version);
  box.dataset.type = event.type;
  const data = { ...event.data };
  delete data.type;
  box.append(
    h("h2", {}, `Event ${event.version}: `, h("span", { "data-testid": "event-type" }, event.type)),
    h("p", { "data-testid": "event-text" }, describe(game, event, titleOf)),
    drawNote(events),
    h("details", {}, h("summary", {}, "data"), h("pre", {}, JSON.stringify(data, null, 1))),
  );
}

/** Returns the box of the bot's note beside its move: at the note's event and at the move's
 * first event after it, when the reader may read it (the API sends its text only to the
 * seat's bot and the host once the game is over); else nothing. */
function drawNote(events) {
  const [before, at] = events.slice(-2);
  const note = [at, before].find((event) => event && event.type === "NoteTaken" && event.data.text);
  if (!note) return null;
  const seat = page.seats[note.data.seat];
  const who = seat ? seatName(seat, note.data.seat) : `Seat ${note.data.seat}`;
  return h(
    "aside",
    { class: "bot-note", "data-testid": "note", "data-seat": note.data.seat },
    h("strong", {}, `${who}'s note`),
    h("p", { class: "note-text", "data-testid": "note-text" }, note.data.text),
  );
}

function drawLog(events, current, game) {
  const items = events.slice(-LOGGED).reverse();
  const live = page.mode === "live";
  byTestId("log").replaceChildren(
    ...items.map((event) =>
      h(
        "li",
        {
          class: event.version === current ? "current" : null,
          value: event.version,
          "data-version": event.version,
          "data-type": event.type,
        },
        live
          ? h("span", { class: "log-type" }, event.type)
          : h(
              "button",
              {
                type: "button",
                class: "link",
                "data-version": event.version,
                title: `Go to event ${event.version}`,
              },
              event.type,
            ),
        " ",
        describe(game, event, titleOf),
      ),
    ),
  );
}

function drawResult(replay) {
  const box = byTestId("result");
  box.hidden = !replay.result;
  box.replaceChildren();
  if (!replay.result) {
    delete box.dataset.status;
    delete box.dataset.places;
    return;
  }
  const { status, places, reason } = replay.result;
  box.dataset.status = status;
  box.dataset.places = places.join(" ");
  box.append(
    h("h2", {}, `Result: ${status}`),
    reason ? h("p", {}, reason) : null,
    h(
      "ol",
      { class: "places" },
      places.map((place, i) => h("li", {}, `${seatName(replay.seats[i] || {}, i)}: place ${place}`)),
    ),
  );
}

function drawSeatChoice(replay) {
  const select = byTestId("seat-select");
  const wanted = replay.seat === null ? "" : String(replay.seat);
  const spectator = page.over ? "Spectator (every card)" : "Spectator (public cards)";
  if (select.options.length !== replay.seats.length + 1 || select.options[0].text !== spectator) {
    select.replaceChildren(
      h("option", { value: "" }, spectator),
      ...replay.seats.map((seat, i) => h("option", { value: String(i) }, seatName(seat, i))),
    );
  }
  select.value = wanted;
}

function drawTable(replay) {
  const table = byTestId("table");
  table.className = `table table-${replay.game}`;
  if ((replay.state || replay.view) === null || (replay.state || replay.view) === undefined) {
    table.replaceChildren(
      h(
        "p",
        { class: "undealt", "data-testid": "undealt" },
        "The game is created; the cards are not dealt yet. Step forward to see the deal.",
      ),
    );
  } else {
    table.replaceChildren(...drawingOf(replay.game).draw(replay));
  }
  table.dataset.game = replay.game;
  table.dataset.version = String(replay.version);
  table.dataset.seat = replay.seat === null ? "" : String(replay.seat);
  table.dataset.mode = page.mode;
  table.setAttribute("aria-busy", "false");
  tick();
}

function drawPosition(version, last) {
  const live = page.mode === "live";
  const slider = byTestId("slider");
  slider.max = String(last);
  slider.value = String(version);
  slider.disabled = live;
  slider.setAttribute("aria-valuetext", `event ${version} of ${last}`);
  const label = byTestId("version");
  label.textContent = live ? `Event ${version} · live` : `Event ${version} of ${last}`;
  label.dataset.version = String(version);
  label.dataset.last = String(last);
  byTestId("first").disabled = live || version <= 1;
  byTestId("back").disabled = live || version <= 1;
  byTestId("play").disabled = live;
  byTestId("forward").disabled = live || version >= last;
  byTestId("last").disabled = live || version >= last;
}

function drawHeading(game, version, last) {
  const live = page.mode === "live";
  const title = titleOf(game);
  document.title = live
    ? `${title} · live at event ${version} · cardarena`
    : `${title} · event ${version} of ${last} · cardarena`;
  byTestId("title").textContent = `${title} ${live ? "live" : "replay"}`;
  byTestId("game-id").textContent = page.gameId;
  const mode = byTestId("mode");
  mode.textContent = live ? "live" : "replay";
  mode.dataset.mode = page.mode;
  document.body.dataset.mode = page.mode;
  byTestId("replay-link").href = `/replay/${encodeURIComponent(page.gameId)}`;
  byTestId("live-link").href = `/arena/games/${encodeURIComponent(page.gameId)}`;
  byTestId("embed-link").href = `/arena/games/${encodeURIComponent(page.gameId)}`;
}

function remember(version, seat) {
  const query = new URLSearchParams();
  if (version !== null) query.set("version", String(version));
  if (seat !== null) query.set("seat", String(seat));
  if (page.embed) query.set("embed", "1");
  const search = query.toString();
  history.replaceState(null, "", `${location.pathname}${search ? `?${search}` : ""}`);
}

function draw(replay) {
  page.version = replay.version;
  page.last = replay.last_version;
  page.seat = replay.seat;
  page.seats = replay.seats;
  drawHeading(replay.game, replay.version, replay.last_version);
  drawTable(replay);
  drawPosition(replay.version, replay.last_version);
  drawSeatChoice(replay);
  drawEvent(replay.events, replay.game);
  drawResult(replay);
  drawLog(replay.events, replay.version, replay.game);
  document.body.dataset.status = page.over ? "over" : "playing";
  remember(replay.version, replay.seat);
}

// Clocks: every seat's clock counts down between events ---------------------------------------

function tick() {
  const now = Date.now();
  for (const clock of document.querySelectorAll(".clock[data-deadline]")) {
    const left = Number(clock.dataset.deadline) - now;
    const bank = Number(clock.dataset.bankMs);
    const move = left - bank;
    clock.dataset.leftMs = String(Math.max(0, left));
    clock.querySelector(".clock-move").textContent = `move ${clockText(Math.max(0, move))}`;
    clock.querySelector(".clock-bank").textContent = clockText(move > 0 ? bank : left);
    clock.classList.toggle("banking", move <= 0);
  }
}

// A running game, live ----------------------------------------------------------------------

/** Draws the live table: the game's public resource (and a seat's view when it holds one). */
function drawLive(game, seatView) {
  page.game = game;
  const version = Math.max(game.version, seatView ? seatView.version : 0);
  const replay = {
    game: game.game,
    game_id: game.game_id,
    version,
    last_version: version,
    seats: game.seats,
    seat: seatView ? seatView.seat : null,
    state: null,
    view: seatView ? seatView.view : game.table || game.view || null,
    events: page.events.filter((event) => event.version <= version),
    result: game.result,
    to_move: game.to_move,
    clocks: game.clocks,
  };
  page.version = version;
  page.last = version;
  page.seats = game.seats;
  drawHeading(game.game, version, version);
  drawTable(replay);
  drawPosition(version, version);
  drawSeatChoice(replay);
  drawResult(replay);
  document.body.dataset.status = game.status;
  remember(null, replay.seat);
}

/** Reads the game (and the seat's view) again; at most one read runs, a later one follows. */
async function reread() {
  if (page.reading) {
    page.again = true;
    return page.reading;
  }
  page.reading = (async () => {
    do {
      page.again = false;
      try {
        const seat = page.seat;
        const [game, view] = await Promise.all([
          getJson(gameUrl()),
          seat === null ? null : getJson(gameUrl(`/view?seat=${seat}`)),
        ]);
        if (page.mode !== "live" || seat !== page.seat) return;
        drawLive(game, view);
        showError(null);
        if (game.result) page.over = true;
      } catch (error) {
        showError(error);
      }
    } while (page.again && page.mode === "live");
  })();
  try {
    await page.reading;
  } finally {
    page.reading = null;
  }
}

function arrived(item) {
  page.events.push(item);
  drawEvent(page.events, page.game ? page.game.game : "");
  drawLog(page.events, item.version, page.game ? page.game.game : "");
  document.body.dataset.streamed = String(item.version);
  reread();
}

/** Polls the game's events when its stream is refused (busy, rate limited, sealed). */
async function poll() {
  while (page.mode === "live" && !page.over) {
    const after = page.events.length ? page.events[page.events.length - 1].version : 0;
    try {
      const body = await getJson(gameUrl(`/events?after=${after}`) + seatQuery("&"));
      body.events.forEach(arrived);
      await reread();
    } catch (error) {
      showError(error);
    }
    if (!page.over) await new Promise((done) => setTimeout(done, POLL_MS));
  }
}

const seatQuery = (joiner) => (page.seat === null ? "" : `${joiner}seat=${page.seat}`);

/** Follows the running game from its first event to its last, then shows its replay. */
async function goLive(game) {
  page.mode = "live";
  page.events = [];
  if (page.seat === null) drawLive(game, null);
  const ticket = ++page.ticket;
  const stopped = () => page.ticket !== ticket || page.over;
  if (page.abort) page.abort.abort();
  const abort = new AbortController();
  page.abort = abort;
  try {
    if (page.seat !== null) drawLive(game, await getJson(gameUrl(`/view?seat=${page.seat}`)));
    while (!stopped()) {
      const after = page.events.length ? page.events[page.events.length - 1].version : 0;
      await follow(page.gameId, {
        after,
        seat: page.seat,
        headers: credentials(),
        onEvent: (item) => page.ticket === ticket && arrived(item),
        stopped,
        signal: abort.signal,
      });
      await reread();
      if (!page.over && !stopped()) await new Promise((done) => setTimeout(done, POLL_MS));
    }
  } catch (error) {
    if (page.ticket !== ticket) return;
    page.notice = `The game's stream was refused (${error.message}); reading the game every 2 s.`;
    showError(null);
    await poll();
  }
  if (page.ticket === ticket && page.over) await becomeReplay();
}

/** The game is over: its whole log is public, so the page becomes its replay (no reload). */
async function becomeReplay() {
  page.mode = "replay";
  if (page.abort) page.abort.abort();
  page.notice = "";
  page.cache.clear();
  await show(null, page.seat);
}

// Replay ------------------------------------------------------------------------------------

/** Shows `version` (null: the last) as `seat` (null: a spectator); a newer call wins. */
async function show(version, seat) {
  const ticket = ++page.ticket;
  byTestId("table").setAttribute("aria-busy", "true");
  try {
    const replay = await replayAt(version, seat);
    if (ticket !== page.ticket) return;
    showError(null);
    draw(replay);
  } catch (error) {
    if (ticket !== page.ticket) return;
    stop();
    showError(error);
    byTestId("table").setAttribute("aria-busy", "false");
  }
}

const clamp = (version) => Math.min(Math.max(version, 1), page.last || 1);
const go = (version) => show(clamp(version), page.seat);

function stop() {
  page.playing = false;
  clearTimeout(page.timer);
  const button = byTestId("play");
  button.setAttribute("aria-pressed", "false");
  button.setAttribute("aria-label", "Play");
}

async function playNext() {
  if (!page.playing) return;
  if (page.version >= page.last) {
    stop();
    return;
  }
  await go(page.version + 1);
  if (page.playing) page.timer = setTimeout(playNext, PLAY_MS);
}

function play() {
  if (page.playing) {
    stop();
    return;
  }
  if (page.version >= page.last) return;
  page.playing = true;
  const button = byTestId("play");
  button.setAttribute("aria-pressed", "true");
  button.setAttribute("aria-label", "Pause");
  page.timer = setTimeout(playNext, PLAY_MS);
}

function step(by) {
  stop();
  go(page.version + by);
}

/** Watches as `seat` (null: a spectator): live while the game runs, else its replay. */
async function watchAs(seat) {
  if (page.mode !== "live") {
    show(page.version, seat);
    return;
  }
  if (seat !== null) {
    try {
      await getJson(gameUrl(`/view?seat=${seat}`));
    } catch (error) {
      showError(error); // a spectator may not see a seat's cards: it stays a spectator
      byTestId("seat-select").value = page.seat === null ? "" : String(page.seat);
      return;
    }
  }
  page.seat = seat;
  goLive(page.game);
}

function wire() {
  const replaying = (then) => () => page.mode === "replay" && then();
  byTestId("first").addEventListener("click", replaying(() => (stop(), go(1))));
  byTestId("back").addEventListener("click", replaying(() => step(-1)));
  byTestId("play").addEventListener("click", replaying(play));
  byTestId("forward").addEventListener("click", replaying(() => step(1)));
  byTestId("last").addEventListener("click", replaying(() => (stop(), go(page.last))));

  const slider = byTestId("slider");
  let pending = null;
  slider.addEventListener("input", () => {
    stop();
    byTestId("version").textContent = `Event ${slider.value} of ${page.last}`;
    clearTimeout(pending);
    pending = setTimeout(() => go(Number(slider.value)), SLIDER_MS);
  });
  slider.addEventListener("change", () => {
    clearTimeout(pending);
    go(Number(slider.value));
  });

  byTestId("seat-select").addEventListener("change", (event) => {
    const value = event.target.value;
    watchAs(value === "" ? null : Number(value));
  });

  byTestId("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const field = byTestId("token");
    if (field.value) sessionStorage.setItem(TOKEN, field.value.trim());
    else sessionStorage.removeItem(TOKEN);
    field.value = "";
    byTestId("token-state").textContent = token() ? "A token is set for this tab." : "No token set.";
    page.cache.clear();
    watchAs(page.seat);
  });
  byTestId("token-state").textContent = token() ? "A token is set for this tab." : "No token set.";

  byTestId("log").addEventListener("click", (event) => {
    const target = event.target.closest("button[data-version]");
    if (!target) return;
    stop();
    go(Number(target.dataset.version));
  });

  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey || page.version === null) return;
    if (page.mode !== "replay" || event.target.closest("input, select, textarea")) return;
    const moves = {
      ArrowLeft: () => step(-1),
      ArrowRight: () => step(1),
      Home: () => (stop(), go(1)),
      End: () => (stop(), go(page.last)),
    };
    const move = moves[event.key];
    if (!move) return;
    event.preventDefault();
    move();
  });
  setInterval(tick, TICK_MS);
}

// Start: the game's public resource says whether it runs (live) or is over (its replay, at
// the position the address asks for, default the last event).
async function start() {
  if (page.embed) document.body.classList.add("embed");
  wire();
  const version = params.has("version") ? Number(params.get("version")) : null;
  const seat = params.has("seat") && params.get("seat") !== "" ? Number(params.get("seat")) : null;
  page.seat = Number.isInteger(seat) ? seat : null;
  try {
    const [titles, game] = await Promise.all([catalog(), getJson(gameUrl())]);
    page.titles = new Map([...titles].map(([name, entry]) => [name, entry.title]));
    page.game = game;
    page.over = game.result !== null && game.result !== undefined;
    page.last = game.version;
    if (!page.over) {
      await goLive(game);
      return;
    }
  } catch (error) {
    showError(error);
    byTestId("table").setAttribute("aria-busy", "false");
    return;
  }
  await show(Number.isInteger(version) ? clamp(version) : null, page.seat);
}

start();
