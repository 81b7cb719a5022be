"""Tournaments through the API, in the embedded default (in-memory store, in-process)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.api import Client

BODY: dict[str, Any] = {
    "game": "autobus",
    "entrants": [{"bot": "heuristic"}, {"bot": "random", "name": "r1"}, {"bot": "random"}],
    "table_size": 2,
    "format": "round_robin",
    "games_per_table": 2,
    "seed": "5",
}


def test_a_created_tournament_runs_and_reports_its_rounds_games_and_standings(
    client: Client,
) -> None:
    created = client.post("/v1/tournaments", json=BODY)
    assert created.status_code == 201, created.text
    tournament = created.json()
    assert created.headers["location"] == f"/v1/tournaments/{tournament['tournament_id']}"
    assert tournament["status"] == "finished"
    assert tournament["entrants"] == ["heuristic@1", "r1", "random@1"]
    games = tournament["rounds"][0]["games"]
    assert len(games) == 6
    assert all(game["places"] is not None for game in games)
    game = client.get(f"/v1/games/{games[0]['game_id']}").json()
    assert game["status"] in {"finished", "draw"}
    url = f"/v1/tournaments/{tournament['tournament_id']}"
    assert client.get(url).json() == tournament
    lines = client.get(f"{url}/standings").json()["standings"]
    assert lines[0]["name"] == "heuristic@1"
    assert sum(line["games"] for line in lines) == 12


def test_a_retried_creation_with_its_key_gives_the_same_tournament(client: Client) -> None:
    headers = {"Idempotency-Key": "cup-1"}
    first = client.post("/v1/tournaments", json=BODY, headers=headers).json()
    again = client.post("/v1/tournaments", json=BODY, headers=headers).json()
    assert again["tournament_id"] == first["tournament_id"]
    assert again["games_played"] == first["games_played"] == 6


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"table_size": 5}, "table_size"),
        ({"entrants": [{"bot": "random"}]}, "entrants"),
        ({"entrants": [{"bot": "random"}, {"bot": "genius"}]}, "entrants[1].bot"),
        ({"game": "chess"}, "game"),
        ({"games_per_table": 0}, "games_per_table"),
        ({"games_per_table": 10**9}, "games_per_table"),
    ],
)
def test_a_bad_definition_is_422_naming_the_field(
    client: Client, changes: dict[str, Any], field: str
) -> None:
    response = client.post("/v1/tournaments", json={**BODY, **changes})
    assert response.status_code == 422, response.text
    assert response.json()["field"] == field


def test_an_unknown_field_or_format_is_400(client: Client) -> None:
    assert client.post("/v1/tournaments", json={**BODY, "colour": 1}).status_code == 400
    assert client.post("/v1/tournaments", json={**BODY, "format": "league"}).status_code == 400


def test_an_unknown_tournament_is_404_naming_it(client: Client) -> None:
    for path in ("/v1/tournaments/nope", "/v1/tournaments/nope/standings"):
        response = client.get(path)
        assert response.status_code == 404
        assert response.json()["tournament_id"] == "nope"


def test_the_openapi_document_lists_the_tournament_operations(client: Client) -> None:
    schema = client.get("/schema/openapi.json").json()
    operations = {op["operationId"] for path in schema["paths"].values() for op in path.values()}
    assert {"createTournament", "getTournament", "getTournamentStandings"} <= operations
