"""A replay's `over` says whether the game is over at the version shown, `finished` whether
it is over at its last version: for a game its seats played to the end, for one the
platform ended (a seat forfeited on its clock), and while it still runs."""

from __future__ import annotations

from typing import Any

import pytest

from shared.app.bot_turns import play_bot_turns
from shared.app.deadlines import enforce_deadline, watch_of
from shared.app.games import create_game
from shared.app.loading import load
from shared.catalog import game_names, get_game
from shared.messages.common import Clock, Seat
from shared.store.memory import InMemoryEventStore
from tests.support.api import Client

FAR_FUTURE = 2**62


def replay(client: Client, game_id: str, **params: Any) -> dict[str, Any]:
    """Returns the 200 body of a replay."""
    response = client.get(f"/v1/games/{game_id}/replay", params=params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def first_over(store: InMemoryEventStore, game_id: str) -> int:
    """Returns the first version at which the game's folded state is over."""
    spec = get_game(store.read(game_id)[0].kind)
    state: Any = None
    for item in store.read(game_id):
        state = spec.step(state, spec.codec.decode(item))
        if state is not None and spec.is_over(state):
            return item.version
    pytest.fail(f"game {game_id} is not over")


@pytest.mark.parametrize("game", game_names())
def test_over_is_false_before_the_ending_event_and_true_from_it(
    store: InMemoryEventStore, client: Client, game: str
) -> None:
    created = client.post("/v1/games", json={"game": game, "players": 2, "seed": 7})
    assert created.status_code == 201, created.text
    game_id, last = created.json()["game_id"], created.json()["version"]
    ending = first_over(store, game_id)

    at_last = replay(client, game_id)
    before = replay(client, game_id, version=ending - 1)
    at_end = replay(client, game_id, version=ending)
    as_seat = replay(client, game_id, version=ending - 1, seat=0)

    assert (at_last["version"], at_last["over"], at_last["finished"]) == (last, True, True)
    assert at_last["result"] == created.json()["result"]
    assert (before["over"], before["finished"], before["result"]) == (False, True, None)
    assert (at_end["over"], at_end["result"]) == (True, created.json()["result"])
    assert (as_seat["over"], as_seat["finished"]) == (False, True)
    assert replay(client, game_id, version=1)["over"] is False


def timed_out_game(store: InMemoryEventStore) -> str:
    """Returns a Shithead game whose client seat never moves: the platform strikes it three
    times, plays its default actions and writes the game's end, placing it last."""
    seats = [Seat(kind="external"), Seat(kind="bot", bot="random")]
    game_id = create_game(
        store, "shithead", seats=seats, seed=11, clock=Clock(move_seconds=1)
    ).game_id
    play_bot_turns(store, game_id)
    for _ in range(10):
        watch = watch_of(load(store, game_id))
        if watch is None:
            break
        enforce_deadline(store, game_id, watch.turn_version, FAR_FUTURE)
        play_bot_turns(store, game_id)
    return game_id


def test_a_game_the_platform_ended_is_over_at_its_last_version_and_not_before(
    store: InMemoryEventStore, client: Client
) -> None:
    game_id = timed_out_game(store)
    loaded = load(store, game_id)
    assert loaded.spec.is_over(loaded.state)
    types = [item.type for item in store.read(game_id)]
    assert "SeatForfeited" in types
    ending = first_over(store, game_id)
    assert types[ending - 1] == "GameFinished"

    at_last = replay(client, game_id)
    before = replay(client, game_id, version=ending - 1)

    assert (at_last["over"], at_last["finished"]) == (True, True)
    assert at_last["result"]["places"] == [2, 1]
    assert "forfeited: seat 0" in at_last["result"]["reason"]
    assert (before["over"], before["finished"], before["result"]) == (False, True, None)


def test_a_running_game_is_neither_over_nor_finished_at_any_version(
    store: InMemoryEventStore, client: Client
) -> None:
    seats = [Seat(kind="external"), Seat(kind="external")]
    game_id = create_game(store, "autobus", seats=seats, seed=3).game_id
    last = store.version(game_id)

    for version in range(1, last + 1):
        body = replay(client, game_id, version=version, seat=0)
        assert (body["over"], body["finished"], body["result"]) == (False, False, None)
