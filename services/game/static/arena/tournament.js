// The tournament page: definition, live standings, crosstable, ratings chart, rounds.
// Reads getTournament, getTournamentStandings and getRatingHistory once, then follows the
// tournament's public stream (streamTournament) while it runs.
"use strict";

(() => {
  const { api, el, num, replace, table } = Arena;
  const [, tournamentId] = Arena.segments();
  const base = `/v1/tournaments/${encodeURIComponent(tournamentId)}`;
  const page = document.querySelector('[data-testid="page"]');
  const part = (id) => document.querySelector(`[data-testid="${id}"]`);
  const LAG_POLLS = 60;
  let chartedAt = null;
  let lagMark = null;
  let lagging = 0;

  const keyOf = (entrant) => (entrant ? `${entrant.bot}@${entrant.version}` : "");

  /** Returns the tournament's name, description and warnings (in its answer or its definition;
   * a tournament made before they existed has none). */
  function labels(tournament) {
    const definition = tournament.definition;
    const name = tournament.name || definition.name || "";
    const description = tournament.description || definition.description || "";
    const warnings = tournament.warnings || definition.warnings || [];
    return { name, description, warnings };
  }

  /** Returns the text of a warning: a string, or an object with a message. */
  function warningText(warning) {
    if (typeof warning === "string") return warning;
    return warning.message || warning.detail || warning.text || JSON.stringify(warning);
  }

  function drawHeader(tournament) {
    const { name, description, warnings } = labels(tournament);
    const fallback = `${tournament.definition.game} ${tournament.definition.format.replace("_", " ")}`;
    part("tournament-name").textContent = name || fallback;
    part("tournament-id").textContent = tournament.tournament_id;
    const status = part("status");
    status.textContent = tournament.status === "running" ? "live" : tournament.status;
    status.dataset.status = tournament.status;
    const about = part("description");
    about.hidden = !description;
    about.textContent = description;
    const box = part("warnings");
    box.hidden = warnings.length === 0;
    replace(
      box,
      JSON.stringify(warnings),
      el("h2", { id: "warnings-heading", text: warnings.length === 1 ? "Warning" : "Warnings" }),
      el("ul", {}, ...warnings.map((warning, index) => el("li", { testid: `warning-${index}`, text: warningText(warning) }))),
    );
    document.title = `${name || fallback} · cardarena arena`;
  }

  function drawDefinition(tournament, gameTitle) {
    const definition = tournament.definition;
    const arena = definition.format === "arena";
    const rows = [
      ["game", "Game", gameTitle],
      ["format", "Format", definition.format.replace("_", " ")],
      ["table-size", "Table size", String(definition.table_size)],
    ];
    if (!arena) rows.push(["games-per-table", "Games per table", String(definition.games_per_table)]);
    if (definition.format === "swiss") rows.push(["rounds", "Rounds", String(definition.rounds)]);
    if (arena) {
      rows.push(["duration", "Duration", span((definition.duration_seconds || 0) * 1000)]);
      if (tournament.ends_at) rows.push(["ends", "Ends", new Date(tournament.ends_at).toLocaleString()]);
      rows.push(["time-left", "Time left", ""]); // kept current by showTimeLeft
    }
    const ruleset = definition.ruleset;
    rows.push([
      "ruleset",
      "Ruleset",
      ruleset === null ? "classic" : typeof ruleset === "string" ? ruleset : JSON.stringify(ruleset),
    ]);
    rows.push(["clock", "Clock", definition.clock ? JSON.stringify(definition.clock) : "untimed"]);
    if (tournament.status !== "running" && definition.seed) {
      rows.push(["seed", "Seed", definition.seed]); // withheld by the API while it runs
    }
    if (tournament.winner !== null) {
      rows.push(["winner", "Winner", tournament.entrants[tournament.winner]]);
    }
    const items = rows.flatMap(([testid, label, value]) => [
      el("dt", { text: label }),
      el("dd", { testid: `def-${testid}`, text: value }),
    ]);
    replace(part("definition"), JSON.stringify(rows), ...items);
    showTimeLeft();
    const withdrawn = tournament.withdrawn || [];
    const entrants = definition.entrants.map((entrant, index) =>
      el(
        "li",
        { testid: `entrant-${index}`, data: { key: keyOf(entrant) } },
        el("a", { href: Arena.botHref(keyOf(entrant)), text: tournament.entrants[index] }),
        entrant.kind && entrant.kind !== "builtin" ? ` (${entrant.kind})` : "",
        withdrawn.includes(index) ? " (withdrew)" : "",
      ),
    );
    replace(part("entrants"), JSON.stringify([tournament.entrants, withdrawn]), ...entrants);
  }

  /** Returns a span of `ms` as h:mm:ss or m:ss, never negative. */
  function span(ms) {
    const total = Math.max(0, Math.round(ms / 1000));
    const [h, m, sec] = [Math.floor(total / 3600), Math.floor((total % 3600) / 60), total % 60];
    const pad = (n) => String(n).padStart(2, "0");
    return h ? `${h}:${pad(m)}:${pad(sec)}` : `${m}:${pad(sec)}`;
  }

  /** Shows an arena's time left (its clock is the server's `ends_at`). */
  function showTimeLeft() {
    const cell = part("def-time-left");
    if (!cell || tournament === null || !tournament.ends_at) return;
    const left = Date.parse(tournament.ends_at) - Date.now();
    cell.textContent =
      tournament.status !== "running"
        ? "over"
        : left > 0
          ? span(left)
          : "time up: the games in progress finish and count";
  }

  /** The criteria a standings answer ranks by (its `order`), in words. */
  const CRITERIA = {
    stage: ["Stage", "Knockout: how many rounds it came through", "rounds came through"],
    score: ["Score", "Duplicate: its seat-by-seat score over the deals", "duplicate score"],
    points: ["Points", "At a table of k seats, place p earns k − p points (a bye k − 1)", "points"],
    buchholz: ["Buchholz", "Tie-break: the sum of its table mates' mean final points per round", "Buchholz"],
    median_buchholz: ["Median Buchholz", "Tie-break: Buchholz without its highest and lowest round (cut-1 under 5 rounds)", "median Buchholz"],
    sonneborn_berger: ["Sonneborn-Berger", "Tie-break: its result against each table mate times that mate's points", "Sonneborn-Berger"],
    direct_encounter: ["Direct encounter", "Tie-break: its results against the entrants tied with it (a dash: not applied)", "direct encounter"],
    wins: ["Wins", "Arena: the games it placed first in", "games won"],
    lot: ["Lot", "The last tie-break: its place in the drawing of lots seeded by the tournament's seed", "drawing of lots"],
  };
  /** What a tournament made before the standings answered their order ranks by. */
  const OLD_ORDER = ["points"];

  /** Returns a criterion's heading, its explanation and its name in a sentence. */
  function criterion(key) {
    if (CRITERIA[key]) return CRITERIA[key];
    const words = String(key).replaceAll("_", " ");
    return [words.charAt(0).toUpperCase() + words.slice(1), `Tie-break: ${words}`, words];
  }
  const heading = (key) => criterion(key).slice(0, 2);

  /** Returns the criteria the standings rank by, in their order (their `order`). */
  function orderOf(standings) {
    return Array.isArray(standings.order) && standings.order.length ? standings.order : OLD_ORDER;
  }

  /** Returns a line's value of a criterion of its standings' order. */
  function criterionValue(line, key) {
    if (key in line) return line[key];
    const values = line.tiebreaks || {};
    return values[key] ?? null;
  }

  /** Returns a value with `digits` decimals, a dash when the entrant has no game or none. */
  const played = (line, value, digits) => (line.games > 0 ? num(value, digits) : Arena.DASH);

  function winRate(line) {
    if (line.games === 0 || line.win_rate_low === null || line.win_rate_high === null) return Arena.DASH;
    return `${num(line.win_rate_low * 100, 0)}–${num(line.win_rate_high * 100, 0)}%`;
  }

  function drawStandings(tournament, standings) {
    const order = orderOf(standings);
    const duplicate = tournament.definition.format === "duplicate";
    // The points (and a duplicate's score) have their own columns; the other criteria follow
    // the win rate, in their order.
    const extra = order.filter((key) => key !== "points" && key !== "score");
    const headings = [
      ["#", "Its place in the standings"],
      ["Entrant", undefined, "text"],
      ["Games", "Games played in this tournament"],
      heading("points"),
      ["Wins", "Games it placed first in"],
      ["Mean place", "Its mean finishing place (a dash before its first game)"],
      ["Win rate (95%)", "The 95% interval of its win rate (a dash before its first game)"],
    ];
    if (duplicate) headings.push(heading("score"));
    headings.push(...extra.map(heading));
    headings.push(["Tournament rating", "OpenSkill ordinal (mu − 3 sigma) over this tournament's games only, ± sigma"]);
    const rows = standings.standings.map((line, index) => {
      const key = keyOf(tournament.definition.entrants[line.entrant]);
      const data = {
        entrant: line.entrant,
        name: line.name,
        games: line.games,
        points: line.points,
        wins: line.wins,
        meanPlace: line.mean_place ?? "",
        rating: line.rating ?? "",
        score: line.score ?? "",
        criteria: extra.map((name) => criterionValue(line, name) ?? "").join(" "),
      };
      const cells = [
        el("td", { text: String(line.rank || index + 1) }),
        el("th", { scope: "row" }, el("a", { href: Arena.botHref(key), text: line.name })),
        el("td", { testid: "games", text: String(line.games) }),
        el("td", { testid: "points", text: num(line.points, 1) }),
        el("td", { testid: "wins", text: String(line.wins) }),
        el("td", { testid: "mean-place", text: played(line, line.mean_place, 2) }),
        el("td", { testid: "win-rate", text: winRate(line) }),
      ];
      if (duplicate) cells.push(el("td", { testid: "score", text: num(line.score) }));
      cells.push(
        ...extra.map((name) => {
          const value = criterionValue(line, name);
          const digits = name === "lot" || name === "stage" ? 0 : 2;
          return el("td", { testid: `criterion-${name}`, text: num(value, digits) });
        }),
      );
      const rated = line.rating !== null && line.rating !== undefined;
      const unrated = line.games > 0 ? "unrated" : Arena.DASH;
      cells.push(el("td", { testid: "rating", text: rated ? `${num(line.rating)} ± ${num(line.uncertainty)}` : unrated }));
      return el("tr", { testid: `standing-${index}`, data }, ...cells);
    });
    const words = order.map((key) => criterion(key)[2]);
    const ranked = order === OLD_ORDER ? "points, then tie-breaks" : words.join(", then ");
    const caption = `Tournament standings (${ranked}), best first`;
    const drawn = Arena.scrollBox("Tournament standings", table("standings", headings, rows, caption));
    replace(part("standings-box"), JSON.stringify([order, standings.standings]), drawn);
  }

  /** Returns per pair of entrants [row][column] their head-to-head wins, draws and losses. */
  function crosstable(tournament) {
    const count = tournament.entrants.length;
    const cells = Array.from({ length: count }, () =>
      Array.from({ length: count }, () => ({ games: 0, wins: 0, draws: 0, losses: 0 })),
    );
    for (const round of tournament.rounds) {
      for (const game of round.games) {
        if (!game.places) continue;
        game.entrants.forEach((row, seat) => {
          game.entrants.forEach((column, other) => {
            if (seat === other || row === column) return;
            const cell = cells[row][column];
            const [mine, theirs] = [game.places[seat], game.places[other]];
            cell.games += 1;
            if (mine < theirs) cell.wins += 1;
            else if (mine === theirs) cell.draws += 1;
            else cell.losses += 1;
          });
        });
      }
    }
    return cells;
  }

  function drawCrosstable(tournament) {
    const cells = crosstable(tournament);
    const names = tournament.entrants;
    const rows = names.map((name, row) =>
      el(
        "tr",
        {},
        el("th", { scope: "row", text: name }),
        ...names.map((_, column) => {
          if (row === column) return el("td", { class: "self", testid: `cross-${row}-${column}`, text: "×" });
          const cell = cells[row][column];
          return el("td", {
            testid: `cross-${row}-${column}`,
            data: { games: cell.games, wins: cell.wins, draws: cell.draws, losses: cell.losses },
            text: cell.games ? `${cell.wins}–${cell.draws}–${cell.losses}` : "·",
            title: `${name} against ${names[column]}: ${cell.games} games`,
          });
        }),
      ),
    );
    const drawn = Arena.scrollBox("Crosstable", table("crosstable", [el("span", { class: "sr-only", text: "Entrant, against" }), ...names], rows));
    replace(part("crosstable-box"), JSON.stringify(cells), drawn);
  }

  function gameState(tournament, game) {
    if (game.status !== null) return game.places ? "over" : "sealed";
    return tournament.status === "running" ? "live" : "unfinished";
  }

  function drawGame(tournament, game) {
    const state = gameState(tournament, game);
    const seats = game.entrants.map((entrant, seat) => {
      const place = game.places ? ` (${game.places[seat]})` : "";
      return `${tournament.entrants[entrant]}${place}`;
    });
    return el(
      "li",
      {
        testid: `game-${game.game_id}`,
        class: `game ${state}`,
        data: {
          state,
          entrants: game.entrants.join(" "),
          places: game.places ? game.places.join(" ") : "",
          status: game.status || "",
        },
      },
      el("span", { class: `badge ${state}`, text: state === "over" ? game.status : state }),
      " ",
      el("a", { href: Arena.gameHref(game.game_id), text: seats.join(" vs ") }),
      game.deal ? el("span", { class: "note", text: ` deal ${game.deal}` }) : null,
      Arena.unratedReason(game)
        ? el("span", { class: "note unrated", testid: "unrated", text: ` not rated: ${Arena.unratedReason(game)}` })
        : null,
      state === "over"
        ? el("a", { class: "replay", href: Arena.replayHref(game.game_id), text: "replay" })
        : null,
    );
  }

  /** Draws an arena's games as they were paired, newest first (it has no rounds). */
  function drawArenaGames(tournament) {
    const games = tournament.rounds.flatMap((round) => round.games).reverse();
    document.getElementById("rounds-heading").textContent = "Games";
    const key = JSON.stringify([tournament.status, tournament.rounds]);
    const shown = el(
      "section",
      { testid: "arena-games", class: "round" },
      el("h3", { text: `Games as they were paired, newest first (${games.length})` }),
      el("ol", { class: "games" }, ...games.map((game) => drawGame(tournament, game))),
    );
    replace(part("rounds"), key, games.length ? shown : el("p", { text: "No game yet." }));
  }

  function drawRounds(tournament) {
    if (tournament.definition.format === "arena") return drawArenaGames(tournament);
    const rounds = tournament.rounds.map((round) =>
      el(
        "section",
        { testid: `round-${round.round}`, class: "round", data: { completed: round.completed } },
        el("h3", { text: `Round ${round.round}${round.completed ? "" : " (playing)"}` }),
        el("ol", { class: "games" }, ...round.games.map((game) => drawGame(tournament, game))),
        round.byes.length
          ? el("p", { class: "note", text: `Byes: ${round.byes.map((e) => tournament.entrants[e]).join(", ")}` })
          : null,
      ),
    );
    const key = JSON.stringify([tournament.status, tournament.rounds]);
    replace(part("rounds"), key, ...(rounds.length ? rounds : [el("p", { text: "No round yet." })]));
  }

  /** Returns the ids of the games entrant `index` sat at. */
  function gamesOf(tournament, index) {
    return new Set(
      tournament.rounds
        .flatMap((round) => round.games)
        .filter((game) => game.entrants.includes(index))
        .map((game) => game.game_id),
    );
  }

  async function drawRatings(tournament) {
    const played = new Set(tournament.rounds.flatMap((round) => round.games.map((g) => g.game_id)));
    const game = tournament.definition.game;
    const keys = [...new Set(tournament.definition.entrants.map(keyOf))];
    const histories = new Map(
      await Promise.all(keys.map(async (key) => [key, await api(Arena.historyPath(game, key))])),
    );
    const rated = [...histories.values()].every((history) => history.rated);
    const names = tournament.entrants;
    // One line per entrant over its own games: two entrants of one bot version share a history,
    // so each takes the steps of the games it sat at (such a pair's own game is never rated).
    const series = tournament.definition.entrants.map((entrant, index) => {
      const own = gamesOf(tournament, index);
      const steps = histories.get(keyOf(entrant)).steps.filter((step) => own.has(step.game_id));
      const twin = names.filter((other) => other === names[index]).length > 1;
      return {
        label: twin ? `${names[index]} (entrant ${index})` : names[index],
        key: keyOf(entrant),
        testid: `rating-line-${index}`,
        values: steps.map((step) => step.ordinal),
        games: steps.map((step) => step.game_id),
      };
    });
    const note = rated ? "No rated game yet." : `${game} is not rated: it has no decisions.`;
    const title = "Leaderboard rating (OpenSkill ordinal, mu − 3 sigma)";
    Arena.ratingChart(part("ratings"), series, note, title, "each entrant's own rated games");
    const charted = [...histories.values()]
      .flatMap((history) => history.steps)
      .filter((step) => played.has(step.game_id)).length;
    return !rated || charted >= ratedSeats(tournament);
  }

  /** Returns how many rating steps the games over so far make: a seat of each game with
   * places whose seats are all distinct bot versions (the leaderboard rates no other). */
  function ratedSeats(tournament) {
    const keys = tournament.definition.entrants.map(keyOf);
    const games = tournament.rounds.flatMap((round) => round.games).filter((game) => game.places);
    return games
      .filter((game) => new Set(game.entrants.map((entrant) => keys[entrant])).size === game.entrants.length)
      .reduce((sum, game) => sum + game.entrants.length, 0);
  }

  // Following the tournament --------------------------------------------------------------
  // The page reads the tournament and its standings once, then follows the public tournament
  // stream (streamTournament): a `standings` event carries the standings, every other event
  // makes it read the tournament again (never the standings). Where the stream is missing (a
  // service without it answers 404) or gives up, it polls both every POLL_MS instead.

  const STREAM_EVENTS = ["game_started", "game_finished", "round_started"];
  const END_EVENTS = ["tournament_finished", "tournament_cancelled"];
  const SETTLE_MS = 250;
  let tournament = null;
  let standings = null;
  let source = null;
  let pending = null;
  let ratingsTimer = null;

  /** Draws what the page holds; charts the ratings again when a game ended since. */
  async function draw() {
    drawHeader(tournament);
    drawDefinition(tournament, await Arena.title(tournament.definition.game));
    if (standings) drawStandings(tournament, standings);
    drawCrosstable(tournament);
    drawRounds(tournament);
    page.dataset.status = tournament.status;
    page.dataset.gamesPlayed = String(tournament.games_played);
    part("updated").textContent = tournament.status === "running" ? `updated ${new Date().toLocaleTimeString()}` : "";
    await chart();
  }

  /** Charts the ratings if a game ended since the last chart; the rating history is the
   * projection's, which may lag: it charts again (the histories only) until it holds every
   * game over. */
  async function chart() {
    const mark = `${tournament.status}:${tournament.games_played}`;
    if (chartedAt === mark) return;
    if (lagMark !== mark) [lagMark, lagging] = [mark, 0];
    const complete = await drawRatings(tournament);
    chartedAt = complete ? mark : null;
    page.dataset.ratings = complete ? "complete" : "partial";
    clearTimeout(ratingsTimer);
    if (!complete && (lagging += 1) <= LAG_POLLS) {
      ratingsTimer = setTimeout(() => chart().catch(Arena.showError), Arena.POLL_MS);
    }
  }

  const over = () => tournament !== null && tournament.status !== "running";

  /** Reads the tournament (and, when `withStandings`, its standings) and draws them. */
  async function load(withStandings) {
    const [read, ranked] = await Promise.all([api(base), withStandings ? api(`${base}/standings`) : null]);
    tournament = read;
    if (ranked) standings = ranked;
    await draw();
  }

  /** Reads the tournament again once a burst of events has settled. */
  function reload() {
    clearTimeout(pending);
    pending = setTimeout(async () => {
      try {
        await load(false);
        Arena.showError(null);
      } catch (error) {
        Arena.showError(error);
      }
    }, SETTLE_MS);
  }

  /** Returns the standings a `standings` event carries (its data: the standings' answer or
   * their list; what it leaves out, such as their order, kept from the last), or null. */
  function standingsOf(event) {
    try {
      const body = JSON.parse(event.data);
      if (Array.isArray(body)) return { ...(standings || {}), standings: body };
      if (body && Array.isArray(body.standings)) return { ...(standings || {}), ...body };
    } catch (_) {
      return null;
    }
    return null;
  }

  /** Follows the tournament's stream; falls back to polling when it is missing or gives up. */
  function follow() {
    if (!("EventSource" in window)) return poll();
    source = new EventSource(`${base}/stream`);
    let opened = false;
    source.addEventListener("open", () => {
      opened = true;
      page.dataset.live = "stream";
      reload(); // what happened between the first read and the connection
    });
    source.addEventListener("standings", async (event) => {
      const ranked = standingsOf(event);
      if (ranked === null) return reload();
      standings = ranked;
      // An arena's late joiner: the standings know it before the tournament read does.
      const known = tournament ? tournament.definition.entrants.length : 0;
      if (standings.standings.some((line) => line.entrant >= known)) return reload();
      if (tournament) drawStandings(tournament, standings);
      page.dataset.streamed = String(Number(page.dataset.streamed || 0) + 1);
    });
    for (const name of STREAM_EVENTS) source.addEventListener(name, reload);
    for (const name of END_EVENTS) {
      source.addEventListener(name, () => {
        source.close();
        page.dataset.live = "over";
        reload();
      });
    }
    source.addEventListener("error", () => {
      // EventSource retries by itself (sending Last-Event-ID) while CONNECTING; CLOSED means it
      // gave up: the stream is missing (404) or refused us.
      if (source.readyState !== EventSource.CLOSED || over()) return;
      page.dataset.live = opened ? "polling (the stream closed)" : "polling (no stream)";
      poll();
    });
  }

  /** Reads the tournament and its standings every POLL_MS while it runs. */
  async function poll() {
    let again = true;
    try {
      await load(true);
      again = !over();
      Arena.showError(null);
    } catch (error) {
      Arena.showError(error);
      again = !(error instanceof Arena.ApiError && error.status === 404);
    }
    if (again) setTimeout(poll, Arena.POLL_MS);
  }

  async function start() {
    try {
      await load(true);
      Arena.showError(null);
      if (!over()) follow();
    } catch (error) {
      Arena.showError(error);
      if (!(error instanceof Arena.ApiError && error.status === 404)) setTimeout(start, Arena.POLL_MS);
    }
    page.setAttribute("aria-busy", "false");
  }

  setInterval(showTimeLeft, 1000);
  start();
})();
