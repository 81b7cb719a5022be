// The home page: TV (the running game of the highest-rated seats, and each running tournament's
// top game), running and recent tournaments (listTournaments), recent games (listGames), each
// game's leaderboard (getLeaderboard). Refreshes every few seconds.
"use strict";

(() => {
  const { api, el, num, replace, table } = Arena;
  const page = document.querySelector('[data-testid="page"]');
  const part = (id) => document.querySelector(`[data-testid="${id}"]`);
  const REFRESH_MS = 5000;
  const RECENT = 20;
  const BOARD = 20;
  const GAMES = 20;
  /** How many of a leaderboard's best entries the page reads: the first BOARD show, all of
   * them rate the seats of the running games for the TV (a seat below them counts 0, the
   * ordinal of a fresh OpenSkill rating). */
  const LOOKUP = 200;
  /** At most this many running games are weighed for the TV (listGames' largest page). */
  const RUNNING = 100;
  /** Whether the TV embeds the live game page (`/arena/games/{id}?embed=1`, its compact mode)
   * beside its link. */
  const EMBED = true;

  function tournamentRows(tournaments, prefix) {
    return tournaments.map((tournament) =>
      el(
        "tr",
        {
          testid: `${prefix}-${tournament.tournament_id}`,
          data: { status: tournament.status, gamesPlayed: tournament.games_played },
        },
        el(
          "th",
          { scope: "row" },
          el("a", {
            href: Arena.tournamentHref(tournament.tournament_id),
            text: tournament.name || `${tournament.game} ${tournament.format.replace("_", " ")}`,
          }),
        ),
        el("td", {}, el("span", { class: "badge", data: { status: tournament.status }, text: tournament.status })),
        el("td", { class: "text", text: tournament.entrants.join(", ") }),
        el("td", { text: `${tournament.games_played} / ${tournament.games_scheduled}` }),
        el("td", { class: "text", text: tournament.winner === null ? "–" : tournament.entrants[tournament.winner] }),
        el("td", { text: new Date(tournament.created_at).toLocaleString() }),
      ),
    );
  }

  function drawTournaments(box, testid, label, tournaments, empty) {
    const headings = [
      ["Tournament", undefined, "text"],
      ["Status", undefined, "text"],
      ["Entrants", undefined, "text"],
      ["Games", "Games played / scheduled"],
      ["Winner", undefined, "text"],
      "Created",
    ];
    const drawn = tournaments.length
      ? Arena.scrollBox(label, table(testid, headings, tournamentRows(tournaments, testid)))
      : el("p", { class: "note", testid, text: empty });
    replace(box, JSON.stringify(tournaments), drawn);
  }

  function gameRows(games) {
    return games.map((game) => {
      const live = game.status === "playing";
      return el(
        "tr",
        {
          testid: `games-${game.game_id}`,
          data: {
            gameId: game.game_id,
            game: game.game,
            status: game.status,
            live: String(live),
            seats: game.seats.join(" | "),
            tournament: game.tournament_id || "",
          },
        },
        el(
          "th",
          { scope: "row" },
          el("a", { href: Arena.gameHref(game.game_id), text: `${game.game} ${game.game_id.slice(0, 8)}` }),
        ),
        el(
          "td",
          {},
          el("span", { class: "badge", data: { status: game.status }, text: live ? "live" : game.status }),
          Arena.unratedReason(game)
            ? el("span", { class: "note unrated", testid: "unrated", text: `not rated: ${Arena.unratedReason(game)}` })
            : null,
        ),
        el("td", { class: "text", text: game.seats.join(", ") }),
        el(
          "td",
          {},
          game.tournament_id
            ? el("a", { href: Arena.tournamentHref(game.tournament_id), text: game.tournament_id.slice(0, 8) })
            : "–",
        ),
        el("td", { text: new Date(game.created_at).toLocaleString() }),
      );
    });
  }

  function drawGames(box, games) {
    const headings = [
      ["Game", undefined, "text"],
      ["Status", undefined, "text"],
      ["Seats", undefined, "text"],
      ["Tournament", undefined, "text"],
      "Created",
    ];
    const drawn = games.length
      ? Arena.scrollBox("Recent games", table("games", headings, gameRows(games)))
      : el("p", { class: "note", testid: "games", text: "No game yet." });
    replace(box, JSON.stringify(games), drawn);
  }

  function drawBoard(board) {
    const heading = el("h3", { text: board.game });
    if (!board.rated || board.entries.length === 0) {
      const note = board.note || "No rated game yet.";
      return el("div", { testid: `leaderboard-${board.game}` }, heading, el("p", { class: "note", text: note }));
    }
    const rows = board.entries.slice(0, BOARD).map((entry, index) =>
      el(
        "tr",
        { testid: `board-${board.game}-${index}`, data: { key: entry.key, games: entry.games, ordinal: entry.ordinal } },
        el("td", { text: String(index + 1) }),
        el("th", { scope: "row" }, el("a", { href: Arena.botHref(entry.key), text: entry.key })),
        el("td", { text: num(entry.ordinal) }),
        el("td", { text: num(entry.mu) }),
        el("td", { text: num(entry.sigma) }),
        el("td", { text: String(entry.games) }),
      ),
    );
    const headings = [
      "#",
      ["Bot", undefined, "text"],
      ["Rating", "OpenSkill ordinal: mu − 3 sigma, across all its rated games"],
      ["mu", "OpenSkill mean"],
      ["sigma", "OpenSkill uncertainty"],
      ["Games", "Rated games"],
    ];
    const caption = `${board.game}: leaderboard rating (OpenSkill ordinal across all rated games)`;
    return el(
      "div",
      { testid: `leaderboard-${board.game}` },
      heading,
      Arena.scrollBox(`${board.game} leaderboard`, table(`board-${board.game}`, headings, rows, caption)),
    );
  }

  // TV: of the running games, the one whose seats' leaderboard ratings sum highest (ties: the
  // newest), and each running tournament's top game by the same rule. The page picks them
  // from what it reads anyway (the leaderboards) and one list of running games: no endpoint
  // of its own, and no cost to the service beyond that list.

  /** Returns the leaderboards' ratings by game and seat label (`name@version`). */
  function ratingsOf(boards) {
    const ratings = new Map();
    for (const board of boards) {
      for (const entry of board.entries) ratings.set(`${board.game} ${entry.key}`, entry.ordinal);
    }
    return ratings;
  }

  /** Returns the sum of the leaderboard ratings of `game`'s seats (an unrated seat counts 0). */
  function strength(ratings, game) {
    return game.seats.reduce((sum, seat) => sum + (ratings.get(`${game.game} ${seat}`) ?? 0), 0);
  }

  /** Returns the game of `games` whose seats are rated highest (ties: the first, the newest). */
  function top(ratings, games) {
    let best = null;
    for (const game of games) {
      const score = strength(ratings, game);
      if (best === null || score > best.score) best = { game, score };
    }
    return best;
  }

  function screen(testid, title, best) {
    const { game, score } = best;
    const href = Arena.gameHref(game.game_id);
    const seats = game.seats.join(" vs ");
    return el(
      "article",
      { class: "screen", testid, data: { gameId: game.game_id, score } },
      el("h3", {}, title),
      el(
        "p",
        { class: "note" },
        el("a", { href, text: `${game.game}: ${seats}` }),
        ` · seats' ratings sum ${num(score)}`,
      ),
      EMBED
        ? el("iframe", {
            class: "tv-frame",
            src: `${href}?embed=1`,
            title: `Live ${game.game} game: ${seats}`,
            loading: "lazy",
          })
        : null,
    );
  }

  function drawTv(box, running, tournaments, ratings) {
    const best = top(ratings, running);
    const screens = [];
    if (best) screens.push(screen("tv-top", "Highest-rated seats", best));
    for (const tournament of tournaments) {
      const its = top(
        ratings,
        running.filter((game) => game.tournament_id === tournament.tournament_id),
      );
      if (!its) continue;
      const name = tournament.name || `${tournament.game} ${tournament.format.replace("_", " ")}`;
      screens.push(
        screen(
          `tv-${tournament.tournament_id}`,
          el("a", { href: Arena.tournamentHref(tournament.tournament_id), text: `${name}: top game` }),
          its,
        ),
      );
    }
    const drawn = screens.length
      ? el("div", { class: "tv", testid: "tv" }, ...screens)
      : el("p", { class: "note", testid: "tv", text: "No game is running." });
    const key = JSON.stringify(screens.map((node) => [node.dataset.testid, node.dataset.gameId]));
    replace(box, key, drawn);
  }

  async function refresh() {
    try {
      const [running, recent, games, playing, ...boards] = await Promise.all([
        api("/v1/tournaments?status=running&limit=50"),
        api(`/v1/tournaments?limit=${RECENT}`),
        api(`/v1/games?limit=${GAMES}`),
        api(`/v1/games?status=playing&limit=${RUNNING}`),
        ...(await Arena.games()).map((game) => api(`/v1/leaderboards/${game}?limit=${LOOKUP}`)),
      ]);
      drawTv(part("tv-box"), playing.games, running.tournaments, ratingsOf(boards));
      drawTournaments(part("running-box"), "running", "Running tournaments", running.tournaments, "No tournament is running.");
      drawTournaments(part("recent-box"), "recent", "Recent tournaments", recent.tournaments, "No tournament yet.");
      drawGames(part("games-box"), games.games);
      replace(part("boards"), JSON.stringify(boards), ...boards.map(drawBoard));
      part("updated").textContent = `updated ${new Date().toLocaleTimeString()}`;
      Arena.showError(null);
    } catch (error) {
      Arena.showError(error);
    }
    page.setAttribute("aria-busy", "false");
    page.dataset.loads = String(Number(page.dataset.loads || 0) + 1);
    setTimeout(refresh, REFRESH_MS);
  }

  refresh();
})();
