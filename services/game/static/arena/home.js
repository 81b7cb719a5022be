// The home page: running and recent tournaments (listTournaments), recent games (listGames),
// each game's leaderboard (getLeaderboard). Refreshes every few seconds.
"use strict";

(() => {
  const { api, el, num, replace, table } = Arena;
  const page = document.querySelector('[data-testid="page"]');
  const part = (id) => document.querySelector(`[data-testid="${id}"]`);
  const REFRESH_MS = 5000;
  const RECENT = 20;
  const BOARD = 20;
  const GAMES = 20;

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
            text: `${tournament.game} ${tournament.format.replace("_", " ")}`,
          }),
        ),
        el("td", {}, el("span", { class: "badge", data: { status: tournament.status }, text: tournament.status })),
        el("td", { text: tournament.entrants.join(", ") }),
        el("td", { text: `${tournament.games_played} / ${tournament.games_scheduled}` }),
        el("td", { text: tournament.winner === null ? "–" : tournament.entrants[tournament.winner] }),
        el("td", { text: new Date(tournament.created_at).toLocaleString() }),
      ),
    );
  }

  function drawTournaments(box, testid, tournaments, empty) {
    const headings = ["Tournament", "Status", "Entrants", "Games", "Winner", "Created"];
    const drawn = tournaments.length
      ? table(testid, headings, tournamentRows(tournaments, testid))
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
        el("td", {}, el("span", { class: "badge", data: { status: game.status }, text: live ? "live" : game.status })),
        el("td", { text: game.seats.join(", ") }),
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
    const headings = ["Game", "Status", "Seats", "Tournament", "Created"];
    const drawn = games.length
      ? table("games", headings, gameRows(games))
      : el("p", { class: "note", testid: "games", text: "No game yet." });
    replace(box, JSON.stringify(games), drawn);
  }

  function drawBoard(board) {
    const heading = el("h3", { text: board.game });
    if (!board.rated || board.entries.length === 0) {
      const note = board.note || "No rated game yet.";
      return el("div", { testid: `leaderboard-${board.game}` }, heading, el("p", { class: "note", text: note }));
    }
    const rows = board.entries.map((entry, index) =>
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
    return el(
      "div",
      { testid: `leaderboard-${board.game}` },
      heading,
      table(`board-${board.game}`, ["#", "Bot", "Rating", "mu", "sigma", "Games"], rows),
    );
  }

  async function refresh() {
    try {
      const [running, recent, games, ...boards] = await Promise.all([
        api("/v1/tournaments?status=running&limit=50"),
        api(`/v1/tournaments?limit=${RECENT}`),
        api(`/v1/games?limit=${GAMES}`),
        ...(await Arena.games()).map((game) => api(`/v1/leaderboards/${game}?limit=${BOARD}`)),
      ]);
      drawTournaments(part("running-box"), "running", running.tournaments, "No tournament is running.");
      drawTournaments(part("recent-box"), "recent", recent.tournaments, "No tournament yet.");
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
