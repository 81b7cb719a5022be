"""A Shithead round robin through the whole stack: the API, the workers, the projection.

The standings the projection writes to PostgreSQL must equal those of the same
definition run in this process on the in-memory store; the leaderboard the API serves
must equal the ratings folded from the real feed.
"""

from __future__ import annotations

from typing import Any

import httpx
import msgspec
import psycopg

from services.projection.views import PostgresTournamentViews
from shared.app.tournaments import run_in_process
from shared.model.tournaments.model import TournamentDefinition
from shared.model.tournaments.standings import standings
from shared.ports.views.memory import InMemoryTournamentViews
from shared.ports.views.port import TournamentStandings
from shared.store.memory import InMemoryEventStore
from tests.support import deals
from tests.support.stack import Stack, wait_for

BODY: dict[str, Any] = {
    "game": "shithead",
    "ruleset": "classic",
    "format": "round_robin",
    "entrants": [
        {"bot": "heuristic", "version": "h"},
        {"bot": "random", "version": "a"},
        {"bot": "random", "version": "b"},
        {"bot": "random", "version": "c"},
    ],
    "table_size": 4,
    "games_per_table": 4,
    "seed": "e2e",
}
"""One table of all four, played four times with the seats rotating."""
KEYS = {"heuristic@h", "random@a", "random@b", "random@c"}


def test_a_shithead_round_robin_on_the_workers_projects_the_in_process_standings(
    stack: Stack,
) -> None:
    views = PostgresTournamentViews(stack.database_url)
    with httpx.Client(base_url=stack.base_url, timeout=10) as http:
        created = http.post("/v1/tournaments", json=BODY)
        assert created.status_code == 201, created.text
        tournament_id = created.json()["tournament_id"]

        def projected_finished() -> TournamentStandings | None:
            try:
                projected = views.standings(tournament_id)
            except psycopg.Error:
                return None
            return projected if projected and projected.status == "finished" else None

        projected = wait_for(projected_finished, 180, "the tournament to finish and be projected")
        listed = http.get("/v1/tournaments", params={"game": "shithead"}).json()["tournaments"]
        from_store = http.get(f"/v1/tournaments/{tournament_id}/standings").json()
        board = http.get("/v1/leaderboards/shithead").json()

    definition = msgspec.convert(BODY, TournamentDefinition)
    same_deployment = deals.attached(InMemoryEventStore())  # the stack's deal secret
    in_process = run_in_process(same_deployment, definition, tournament_id)
    assert projected.standings == standings(in_process)
    assert [line.games for line in projected.standings] == [4, 4, 4, 4]
    assert from_store["standings"] == msgspec.to_builtins(projected.standings)

    assert [(t["tournament_id"], t["status"]) for t in listed] == [(tournament_id, "finished")]
    assert (listed[0]["games_scheduled"], listed[0]["games_played"]) == (4, 4)

    assert board["rated"] is True
    assert {entry["key"] for entry in board["entries"]} == KEYS
    assert [entry["games"] for entry in board["entries"]] == [4, 4, 4, 4]
    assert board["entries"] == msgspec.to_builtins(views.leaderboard("shithead"))
    from_feed = InMemoryTournamentViews(stack.store).leaderboard("shithead")
    assert board["entries"] == msgspec.to_builtins(from_feed)
