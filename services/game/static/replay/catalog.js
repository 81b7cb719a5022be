// The hosted games, from the API's catalogue (GET /v1/catalog), read once per page.
let answer = null;

/** Returns the catalogue's games by name (a failed read: none, so pages show names). */
export function catalog() {
  if (answer === null) {
    answer = fetch("/v1/catalog", { headers: { accept: "application/json" } })
      .then((response) => (response.ok ? response.json() : { games: [] }))
      .then((body) => new Map(body.games.map((game) => [game.name, game])))
      .catch(() => new Map());
  }
  return answer;
}
