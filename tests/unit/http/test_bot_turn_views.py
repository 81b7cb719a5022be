"""A bot's turns carry its seat's view (the bot stream's `your_turn` and the long poll), and
a bot lists its running games: each the seat's own view, never another seat's cards."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from shared.app.loading import load
from tests.support.api import ADMIN, bearer
from tests.support.streams import ALICE, BOB, SHORT, World, opened, parse

VIEW_FIELDS = ("version", "status", "to_move", "view", "legal_actions")


@pytest.fixture
def world() -> Iterator[World]:
    """Returns the service with alice and bob registered and short-lived streams."""
    with opened(SHORT) as built:
        yield built


def seat_view(world: World, game_id: str, seat: int, bot: str) -> dict[str, Any]:
    """Returns `getSeatView` of `seat` read with `bot`'s token."""
    response = world.client.get(
        f"/v1/games/{game_id}/view", params={"seat": seat}, headers=bearer(world.tokens[bot])
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def hidden_from(world: World, game_id: str, seat: int) -> list[str]:
    """Returns the cards in `seat`'s hand (hidden from every other seat in Shithead)."""
    loaded = load(world.store, game_id)
    hand: list[str] = list(loaded.spec.view(loaded.state, seat).hand)
    assert hand
    return hand


def test_a_long_polled_turn_is_the_seats_view_with_its_legal_actions(world: World) -> None:
    game_id = world.game(ALICE, BOB)

    (turn,) = world.client.get("/v1/bots/me/turns", headers=bearer(world.tokens["alice"])).json()[
        "turns"
    ]

    view = seat_view(world, game_id, 0, "alice")
    assert (turn["game_id"], turn["game"], turn["seat"]) == (game_id, "shithead", 0)
    assert {f: turn[f] for f in VIEW_FIELDS} == {f: view[f] for f in VIEW_FIELDS}
    assert turn["status"] == "playing"
    assert 0 in turn["to_move"]
    assert turn["legal_actions"]


def test_a_streamed_turn_is_the_seats_view_with_its_legal_actions(world: World) -> None:
    game_id = world.game(BOB, ALICE)
    world.play(game_id, moves=1)

    response = world.client.get("/v1/bots/me/events", headers=bearer(world.tokens["alice"]))

    (turn,) = [e.data for e in parse(response.text)[0] if e.event == "your_turn"]
    view = seat_view(world, game_id, 1, "alice")
    assert turn["seat"] == 1
    assert {f: turn[f] for f in VIEW_FIELDS} == {f: view[f] for f in VIEW_FIELDS}


def test_no_turn_of_a_bot_carries_another_seats_hidden_cards(world: World) -> None:
    game_id = world.game(ALICE, BOB)
    bobs_hand = hidden_from(world, game_id, 1)
    alices_hand = hidden_from(world, game_id, 0)

    polled = world.client.get("/v1/bots/me/turns", headers=bearer(world.tokens["alice"])).json()
    streamed = world.client.get("/v1/bots/me/events", headers=bearer(world.tokens["alice"]))
    bobs = world.client.get("/v1/bots/me/turns", headers=bearer(world.tokens["bob"])).json()

    for text in (json.dumps(polled), json.dumps([e.data for e in parse(streamed.text)[0]])):
        assert not [card for card in bobs_hand if f'"{card}"' in text]
        assert [card for card in alices_hand if f'"{card}"' in text] == alices_hand
    assert not [card for card in alices_hand if f'"{card}"' in json.dumps(bobs)]


def test_a_bot_holding_two_seats_gets_each_seats_own_view(world: World) -> None:
    game_id = world.game(ALICE, ALICE)

    turns = world.client.get("/v1/bots/me/turns", headers=bearer(world.tokens["alice"])).json()

    by_seat = {t["seat"]: t for t in turns["turns"]}
    assert set(by_seat) == {0, 1}
    for seat, turn in by_seat.items():
        view = seat_view(world, game_id, seat, "alice")
        assert {f: turn[f] for f in VIEW_FIELDS} == {f: view[f] for f in VIEW_FIELDS}
    assert by_seat[0]["view"] != by_seat[1]["view"]


def test_a_bot_lists_its_running_games_with_its_seats(world: World) -> None:
    first = world.game(ALICE, BOB)
    second = world.game(BOB, ALICE)
    both = world.game(ALICE, ALICE)
    world.game(BOB, BOB)
    over = world.game(ALICE, BOB)
    world.play(over)
    alice = bearer(world.tokens["alice"])

    listed = world.client.get("/v1/bots/me/games", params={"status": "playing"}, headers=alice)
    default = world.client.get("/v1/bots/me/games", headers=alice)

    assert listed.status_code == 200, listed.text
    games = listed.json()["games"]
    assert [(g["game_id"], g["seats"]) for g in games] == [
        (first, [0]),
        (second, [1]),
        (both, [0, 1]),
    ]
    assert default.json() == listed.json()
    for game in games:
        public = world.client.get(f"/v1/games/{game['game_id']}").json()
        assert (game["version"], game["to_move"], game["status"]) == (
            public["version"],
            public["to_move"],
            "playing",
        )
        assert (game["game"], game["created_at"]) == ("shithead", public["created_at"])


def test_a_bots_games_need_its_token_and_a_known_status(world: World) -> None:
    world.game(ALICE, BOB)
    url = "/v1/bots/me/games"
    alice = bearer(world.tokens["alice"])

    assert world.client.get(url).status_code == 401
    assert world.client.get(url, headers=bearer("cab_x.nope")).status_code == 401
    assert world.client.get(url, headers=ADMIN).status_code == 403
    for status in ("finished", "PLAYING", ""):
        bad = world.client.get(url, params={"status": status}, headers=alice)
        assert (bad.status_code, bad.json()["field"]) == (422, "status"), status
        assert "playing" in bad.json()["detail"]
    assert world.client.get(url, headers=bearer(world.tokens["bob"])).json()["games"] != []
