"""The tournament list and the leaderboards through the API, on the in-memory views."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

from services.game.app import create_app
from shared.app.runtime import InProcessDispatcher
from shared.app.tournaments import run_in_process
from shared.model.tournaments.model import Entrant, TournamentDefinition
from shared.ports.views.memory import InMemoryTournamentViews
from shared.store.memory import InMemoryEventStore
from tests.support.api import Client, problem

AUTOBUS: dict[str, Any] = {
    "game": "autobus",
    "entrants": [
        {"bot": "heuristic", "version": "h1"},
        {"bot": "random", "version": "r1"},
        {"bot": "random", "version": "r2"},
    ],
    "table_size": 2,
    "seed": "5",
}
BEGGAR: dict[str, Any] = {
    "game": "beggar",
    "entrants": [{"bot": "turner", "version": "1"}, {"bot": "turner", "version": "2"}],
    "table_size": 2,
}


def create(client: Client, body: dict[str, Any]) -> str:
    """Creates (and, in-process, runs) a tournament; returns its id."""
    response = client.post("/v1/tournaments", json=body)
    assert response.status_code == 201, response.text
    tournament_id: str = response.json()["tournament_id"]
    return tournament_id


def test_the_tournament_list_shows_the_newest_first_with_their_progress(client: Client) -> None:
    first = create(client, AUTOBUS)
    second = create(client, BEGGAR)
    response = client.get("/v1/tournaments")
    assert response.status_code == 200, response.text
    listed = response.json()["tournaments"]
    assert [t["tournament_id"] for t in listed] == [second, first]
    autobus = listed[1]
    assert autobus["game"] == "autobus"
    assert autobus["status"] == "finished"
    assert autobus["entrants"] == ["heuristic@h1", "random@r1", "random@r2"]
    assert (autobus["games_scheduled"], autobus["games_played"]) == (3, 3)
    assert autobus["created_at"].endswith("Z")


def test_the_tournament_list_filters_by_status_and_game_and_limits(client: Client) -> None:
    first = create(client, AUTOBUS)
    second = create(client, BEGGAR)

    def ids(**params: Any) -> list[str]:
        response = client.get("/v1/tournaments", params=params)
        assert response.status_code == 200, response.text
        return [t["tournament_id"] for t in response.json()["tournaments"]]

    assert ids(game="autobus") == [first]
    assert ids(status="finished", game="beggar") == [second]
    assert ids(status="running") == []
    assert ids(limit=1) == [second]
    assert ids(limit=500) == [second, first]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"status": "paused"}, "status"),
        ({"game": "chess"}, "game"),
        ({"limit": 0}, "limit"),
        ({"limit": 501}, "limit"),
        ({"limit": "many"}, "limit"),
    ],
)
def test_a_bad_list_parameter_is_a_400_naming_it(
    client: Client, params: dict[str, Any], field: str
) -> None:
    body = problem(client.get("/v1/tournaments", params=params), 400)
    assert body["field"] == field


def test_a_leaderboard_ranks_bot_versions_by_mu_minus_three_sigma(client: Client) -> None:
    create(client, AUTOBUS)
    response = client.get("/v1/leaderboards/autobus")
    assert response.status_code == 200, response.text
    board = response.json()
    assert (board["game"], board["rated"]) == ("autobus", True)
    assert "note" not in board
    entries = board["entries"]
    assert {entry["key"] for entry in entries} == {"heuristic@h1", "random@r1", "random@r2"}
    assert [entry["games"] for entry in entries] == [2, 2, 2]
    assert [e["ordinal"] for e in entries] == sorted((e["ordinal"] for e in entries), reverse=True)
    for entry in entries:
        assert entry["ordinal"] == pytest.approx(entry["mu"] - 3 * entry["sigma"])
    top = client.get("/v1/leaderboards/autobus", params={"limit": 1}).json()["entries"]
    assert top == entries[:1]
    assert client.get("/v1/leaderboards/shithead").json()["entries"] == []


def test_beggar_my_neighbour_has_an_empty_leaderboard_that_says_it_is_never_rated(
    client: Client,
) -> None:
    create(client, BEGGAR)
    response = client.get("/v1/leaderboards/beggar")
    assert response.status_code == 200, response.text
    board = response.json()
    assert (board["rated"], board["entries"]) == (False, [])
    assert "never rated" in board["note"]


def test_the_leaderboard_of_an_unknown_game_is_a_404_naming_the_game(client: Client) -> None:
    body = problem(client.get("/v1/leaderboards/chess"), 404)
    assert body["type"] == "urn:cardarena:problem:unknown-game"
    assert body["field"] == "game"
    assert "chess" in body["detail"]
    assert "shithead" in body["detail"]


@pytest.mark.parametrize("limit", [0, 1001, "top"])
def test_a_bad_leaderboard_limit_is_a_400_naming_it(client: Client, limit: int | str) -> None:
    body = problem(client.get("/v1/leaderboards/autobus", params={"limit": limit}), 400)
    assert body["field"] == "limit"


def test_the_app_reads_the_views_it_is_given() -> None:
    elsewhere = InMemoryEventStore()
    definition = TournamentDefinition(
        game="autobus",
        entrants=[Entrant(bot="random", version="x"), Entrant(bot="random", version="y")],
        table_size=2,
    )
    run_in_process(elsewhere, definition, "cup")
    store = InMemoryEventStore()
    views = InMemoryTournamentViews(elsewhere)
    with TestClient(create_app(store, InProcessDispatcher(store), views=views)) as client:
        listed = client.get("/v1/tournaments").json()["tournaments"]
        board = client.get("/v1/leaderboards/autobus").json()["entries"]
    assert [t["tournament_id"] for t in listed] == ["cup"]
    assert {entry["key"] for entry in board} == {"random@x", "random@y"}
