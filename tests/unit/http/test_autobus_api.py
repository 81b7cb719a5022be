"""Hospodský autobus through the API: bot and external seats, views, actions, redaction."""

from __future__ import annotations

from typing import Any

from shared.games.cards import HIDDEN
from tests.support.api import Client

SEATS = [{"kind": "external"}, {"kind": "bot", "bot": "random"}]


def create(client: Client, **ruleset: Any) -> str:
    """Creates a two-seat game (seat 0 external, seat 1 random); returns its id."""
    body = {"game": "autobus", "ruleset": ruleset or "classic", "seats": SEATS, "seed": 3}
    response = client.post("/v1/games", json=body)
    assert response.status_code == 201, response.text
    game_id: str = response.json()["game_id"]
    return game_id


def test_an_external_seat_plays_a_whole_game_through_its_view(client: Client) -> None:
    game_id = create(client, main_pile=3)
    for _ in range(2000):
        view = client.get(f"/v1/games/{game_id}/view", params={"seat": 0}).json()
        if view["status"] != "playing":
            break
        assert view["to_move"] == [0]
        body = {"seat": 0, "action": view["legal_actions"][0], "expected_version": view["version"]}
        response = client.post(f"/v1/games/{game_id}/actions", json=body)
        assert response.status_code == 200, response.text
    game = client.get(f"/v1/games/{game_id}").json()
    assert game["status"] in {"finished", "draw"}
    assert sorted(game["result"]["places"])[0] == 1


def test_the_view_shows_the_own_hand_and_only_public_cards(client: Client) -> None:
    game_id = create(client)
    view = client.get(f"/v1/games/{game_id}/view", params={"seat": 0}).json()
    assert len(view["view"]["hand"]) == 4
    assert view["view"]["hand_sizes"] == [4, 4]
    assert len(view["view"]["main_tops"]) == 2
    assert "hands" not in view["view"]
    assert any(a["type"] == "Discard" for a in view["legal_actions"])


def test_an_illegal_action_is_refused_with_its_rule_and_appends_nothing(client: Client) -> None:
    game_id = create(client)
    view = client.get(f"/v1/games/{game_id}/view", params={"seat": 0}).json()
    body = {
        "seat": 0,
        "action": {"type": "EndTurn"},
        "expected_version": view["version"],
    }
    response = client.post(f"/v1/games/{game_id}/actions", json=body)
    assert response.status_code == 422
    assert response.json()["rule"] == "hand_not_empty"
    again = client.get(f"/v1/games/{game_id}/view", params={"seat": 0}).json()
    assert again["version"] == view["version"]


def test_a_running_game_shows_no_hidden_card_in_its_events(client: Client) -> None:
    game_id = create(client)
    events = client.get(f"/v1/games/{game_id}/events", params={"seat": 0}).json()["events"]
    started = next(e["data"] for e in events if e["type"] == "GameStarted")
    assert started["hands"][1] == [HIDDEN] * 4
    assert started["hands"][0] != [HIDDEN] * 4
    assert set(started["draw"]) == {HIDDEN}
    assert started["shuffle_seed"] == ""
    assert all(set(main[1:]) == {HIDDEN} for main in started["mains"])
