// The tournament page: definition, live standings, crosstable, ratings chart, rounds.
// Reads getTournament, getTournamentStandings and getRatingHistory; polls while it runs.
"use strict";

(() => {
  const { api, el, num, replace, table } = Arena;
  const [, tournamentId] = Arena.segments();
  const base = `/v1/tournaments/${encodeURIComponent(tournamentId)}`;
  const page = document.querySelector('[data-testid="page"]');
  const part = (id) => document.querySelector(`[data-testid="${id}"]`);
  const LAG_POLLS = 60;
  let chartedAt = null;
  let lagging = 0;

  const keyOf = (entrant) => `${entrant.bot}@${entrant.version}`;

  function drawHeader(tournament) {
    part("tournament-id").textContent = tournament.tournament_id;
    const status = part("status");
    status.textContent = tournament.status === "running" ? "live" : tournament.status;
    status.dataset.status = tournament.status;
    document.title = `${tournament.definition.game} tournament · cardarena arena`;
  }

  function drawDefinition(tournament) {
    const definition = tournament.definition;
    const rows = [
      ["game", "Game", definition.game],
      ["format", "Format", definition.format.replace("_", " ")],
      ["table-size", "Table size", String(definition.table_size)],
    ];
    if (definition.format !== "swiss" && definition.format !== "knockout") {
      rows.push(["games-per-table", "Games per table", String(definition.games_per_table)]);
    }
    if (definition.format === "swiss") rows.push(["rounds", "Rounds", String(definition.rounds)]);
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
    const entrants = definition.entrants.map((entrant, index) =>
      el(
        "li",
        { testid: `entrant-${index}`, data: { key: keyOf(entrant) } },
        el("a", { href: Arena.botHref(keyOf(entrant)), text: tournament.entrants[index] }),
        entrant.kind && entrant.kind !== "builtin" ? ` (${entrant.kind})` : "",
      ),
    );
    replace(part("entrants"), JSON.stringify(tournament.entrants), ...entrants);
  }

  function drawStandings(tournament, standings) {
    const duplicate = tournament.definition.format === "duplicate";
    const headings = ["#", "Entrant", "Games", "Points", "Wins", "Mean place", "Win rate (95%)", "Rating"];
    if (duplicate) headings.push("Score");
    const rows = standings.standings.map((line, index) => {
      const key = keyOf(tournament.definition.entrants[line.entrant]);
      const data = {
        entrant: line.entrant,
        name: line.name,
        games: line.games,
        points: line.points,
        wins: line.wins,
        meanPlace: line.mean_place === null ? "" : line.mean_place,
        rating: line.rating === null ? "" : line.rating,
        score: line.score === null ? "" : line.score,
      };
      const cells = [
        el("td", { text: String(index + 1) }),
        el("th", { scope: "row" }, el("a", { href: Arena.botHref(key), text: line.name })),
        el("td", { text: String(line.games) }),
        el("td", { text: num(line.points, 1) }),
        el("td", { text: String(line.wins) }),
        el("td", { text: num(line.mean_place) }),
        el("td", {
          text:
            line.win_rate_low === null
              ? "–"
              : `${num(line.win_rate_low * 100, 0)}–${num(line.win_rate_high * 100, 0)}%`,
        }),
        el("td", {
          text: line.rating === null ? "unrated" : `${num(line.rating)} ± ${num(line.uncertainty)}`,
        }),
      ];
      if (duplicate) cells.push(el("td", { text: num(line.score) }));
      return el("tr", { testid: `standing-${index}`, data }, ...cells);
    });
    const drawn = table("standings", headings, rows, "Best first");
    replace(part("standings-box"), JSON.stringify(standings.standings), drawn);
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
    const drawn = table("crosstable", ["", ...names], rows);
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
      state === "over"
        ? el("a", { class: "replay", href: Arena.replayHref(game.game_id), text: "replay" })
        : null,
    );
  }

  function drawRounds(tournament) {
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

  async function drawRatings(tournament) {
    const played = new Set(tournament.rounds.flatMap((round) => round.games.map((g) => g.game_id)));
    const game = tournament.definition.game;
    const keys = [...new Set(tournament.definition.entrants.map(keyOf))];
    const histories = new Map(
      await Promise.all(keys.map(async (key) => [key, await api(Arena.historyPath(game, key))])),
    );
    const rated = [...histories.values()].every((history) => history.rated);
    const series = tournament.definition.entrants.map((entrant, index) => {
      const steps = histories.get(keyOf(entrant)).steps.filter((step) => played.has(step.game_id));
      return {
        label: tournament.entrants[index],
        key: keyOf(entrant),
        testid: `rating-line-${index}`,
        values: steps.map((step) => step.ordinal),
        games: steps.map((step) => step.game_id),
      };
    });
    const note = rated ? "No rated game yet." : `${game} is not rated: it has no decisions.`;
    Arena.ratingChart(part("ratings"), series, note);
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

  async function refresh() {
    let again = true;
    try {
      const [tournament, standings] = await Promise.all([api(base), api(`${base}/standings`)]);
      again = tournament.status === "running";
      drawHeader(tournament);
      drawDefinition(tournament);
      drawStandings(tournament, standings);
      drawCrosstable(tournament);
      drawRounds(tournament);
      // The rating history is the projection's, which may lag: chart again until it holds
      // every game over (a while after the tournament ends, on the real stack).
      const mark = `${tournament.status}:${tournament.games_played}`;
      if (chartedAt !== mark) {
        const complete = await drawRatings(tournament);
        chartedAt = complete ? mark : null;
        page.dataset.ratings = complete ? "complete" : "partial";
        if (!complete && !again) again = (lagging += 1) <= LAG_POLLS;
      }
      page.dataset.status = tournament.status;
      page.dataset.gamesPlayed = String(tournament.games_played);
      part("updated").textContent = again ? `updated ${new Date().toLocaleTimeString()}` : "";
      Arena.showError(null);
    } catch (error) {
      Arena.showError(error);
      again = !(error instanceof Arena.ApiError && error.status === 404);
    }
    page.setAttribute("aria-busy", "false");
    if (again) setTimeout(refresh, Arena.POLL_MS);
  }

  refresh();
})();
