"""Challenging a built-in strategy by name: the game starts at once with the platform playing
that seat, the challenger plays its own seat to the end; unknown names are refused."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from shared.app.loading import load
from tests.support.api import bearer
from tests.support.challenges import Arena


@pytest.fixture
def arena() -> Iterator[Arena]:
    built = Arena(max_games_per_bot=1)
    with built.client:
        built.setup()
        yield built


def play_seat(arena: Arena, bot: str, game_id: str, seat: int) -> int:
    """Plays `bot`'s seat with its token (the first legal action of each view) until the
    game is over; returns how many actions it posted."""
    headers = bearer(arena.tokens[bot])
    for posted in range(500):
        view = arena.client.get(
            f"/v1/games/{game_id}/view", params={"seat": seat}, headers=headers
        ).json()
        if view["status"] != "playing":
            return posted
        assert view["legal_actions"], view
        body = {
            "seat": seat,
            "action": view["legal_actions"][0],
            "expected_version": view["version"],
        }
        answer = arena.client.post(f"/v1/games/{game_id}/actions", json=body, headers=headers)
        assert answer.status_code == 200, answer.text
    raise AssertionError("the game did not end")


def test_a_bot_challenges_a_built_in_strategy_and_plays_the_game_to_its_end(
    arena: Arena,
) -> None:
    issued = arena.issue("alice", "heuristic")

    assert issued.status_code == 201, issued.text
    challenge = issued.json()
    assert (challenge["status"], challenge["pending"]) == ("started", [])
    assert challenge["bots"] == ["alice@1", "heuristic@1"]
    game_id = challenge["game_id"]
    seats = load(arena.store, game_id).created.seats
    assert (seats[0].kind, seats[0].bound_bot) == ("external", "alice@1")
    assert (seats[1].kind, seats[1].bot, seats[1].bound_bot) == ("bot", "heuristic", None)
    assert play_seat(arena, "alice", game_id, 0) > 0
    game = arena.client.get(f"/v1/games/{game_id}").json()
    assert game["status"] in {"finished", "capped"}  # RULES caps a game at 40 moves
    # A capped game ranks by the cards left: two seats holding as many share the first place.
    tied = [[1, 2], [1, 1]] if game["status"] == "capped" else [[1, 2]]
    assert sorted(game["result"]["places"]) in tied


def test_a_strategy_holds_no_cap_of_running_games(arena: Arena) -> None:
    first = arena.issue("alice", "heuristic").json()
    second = arena.issue("bob", "heuristic").json()

    assert (first["status"], second["status"]) == ("started", "started")
    refused = arena.issue("alice", "random")
    assert (refused.status_code, refused.json()["field"]) == (422, "bots[0]")


def test_a_host_matches_two_strategies_under_version_labels(arena: Arena) -> None:
    body: dict[str, Any] = {
        "game": "shithead",
        "ruleset": {"max_moves": 40},
        "opponents": [{"bot": "heuristic", "version": "a"}, {"bot": "random", "version": "b"}],
    }
    response = arena.client.post(
        "/v1/challenges", json=body, headers={"Authorization": "Bearer sesame-0123456789"}
    )

    assert response.status_code == 201, response.text
    assert response.json()["bots"] == ["heuristic@a", "random@b"]
    game = arena.client.get(f"/v1/games/{response.json()['game_id']}").json()
    assert game["status"] in {"finished", "capped"}
    assert [s["name"] for s in game["seats"]] == ["heuristic", "random"]


@pytest.mark.parametrize(("game", "name"), [("shithead", "turner"), ("shithead", "Heuristic")])
def test_an_unknown_strategy_names_the_field_and_the_valid_names(
    arena: Arena, game: str, name: str
) -> None:
    response = arena.issue("alice", "bob", name, game=game)

    assert response.status_code == 422, response.text
    problem = response.json()
    assert problem["field"] == "opponents[1]"
    for valid in ("random", "heuristic", "mc", "bob@1"):
        assert valid in problem["detail"]
    assert arena.challenge_streams() == 0
