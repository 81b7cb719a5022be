"""The game service's door (`services.game.http.pipeline.strict`), in process over the in-memory
store: the same guard the real stack runs (tests/reliability/test_poison_input.py attacks that
one)."""

from __future__ import annotations

from typing import Any

from tests.support.api import Client, problem


def running_game(client: Client) -> tuple[str, dict[str, Any]]:
    """Creates a two-seat Shithead game of external seats; returns its id and seat 0's view."""
    seats = [{"kind": "external"}, {"kind": "external"}]
    created = client.post("/v1/games", json={"game": "shithead", "seats": seats, "seed": 1})
    game_id: str = created.json()["game_id"]
    return game_id, client.get(f"/v1/games/{game_id}/view", params={"seat": 0}).json()


def test_a_body_is_converted_strictly_naming_the_field(client: Client) -> None:
    game_id, view = running_game(client)
    action, version = view["legal_actions"][0], view["version"]
    body = {"seat": "0", "action": action, "expected_version": version}
    assert problem(client.post(f"/v1/games/{game_id}/actions", json=body), 400)["field"] == "seat"
    nested = {"game": "shithead", "seats": [{"kind": 1}, {"kind": "external"}]}
    assert problem(client.post("/v1/games", json=nested), 400)["field"] == "seats[0].kind"
    missing = {"game": "beggar", "entrants": [{"bot": "turner"}]}
    assert problem(client.post("/v1/tournaments", json=missing), 400)["field"] == "table_size"
    good = {"seat": 0, "action": action, "expected_version": version}
    assert client.post(f"/v1/games/{game_id}/actions", json=good).status_code == 200


def test_a_nul_anywhere_in_a_body_is_a_422_naming_its_field(client: Client) -> None:
    seats = [{"kind": "external"}, {"kind": "external", "name": "x\x00"}]
    refused = problem(client.post("/v1/games", json={"game": "shithead", "seats": seats}), 422)
    assert refused["field"] == "seats[1].name"


def test_an_id_holding_a_nul_is_a_404_of_its_kind(client: Client) -> None:
    assert problem(client.get("/v1/games/%00/view?seat=0"), 404)["type"].endswith("unknown-game")
    tournament = problem(client.get("/v1/tournaments/a%00"), 404)
    assert (tournament["type"].rsplit(":", 1)[-1], tournament["field"]) == (
        "unknown-tournament",
        "tournament_id",
    )


def test_an_integer_parameter_is_a_plain_integer(client: Client) -> None:
    game_id, _ = running_game(client)
    assert problem(client.get(f"/v1/games/{game_id}/events?limit=1e3"), 400)["field"] == "limit"
    assert problem(client.get(f"/v1/games/{game_id}/events?after=-0.0"), 400)["field"] == "after"
    assert client.get(f"/v1/games/{game_id}/events?limit=1000&after=0").status_code == 200
