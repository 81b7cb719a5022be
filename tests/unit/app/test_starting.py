"""Starting a game (`shared.app.starting`): admission below the cap, create, confirm or cancel,
then the platform's play; the same for a creation, a retry and a failure."""

from __future__ import annotations

from typing import Any

import pytest

from shared.app.registry import register
from shared.app.starting import GameCap, NewGame, bind_seats, start_game
from shared.errors import InvalidRequest
from shared.messages.common import Seat
from shared.model.registry import BotSpec
from shared.ports.dispatch import BotTurnDispatcher
from shared.ports.game_slots import GameCapReached, InMemoryGameSlots
from shared.store.memory import InMemoryEventStore


class Recorder(BotTurnDispatcher):
    """Records the games it is asked to play instead of playing them."""

    def __init__(self) -> None:
        self.dispatched: list[str] = []

    def dispatch(self, game_id: str) -> None:
        self.dispatched.append(game_id)

    def start_tournament(self, definition: Any, tournament_id: str) -> None:
        raise AssertionError("no tournament here")


class Requested:
    """A seat as a client asks for it (the service's SeatSpec has these fields)."""

    def __init__(self, kind: Any, bot: str | None = None, version: str | None = None) -> None:
        self.kind, self.bot, self.name, self.version = kind, bot, None, version


def _alice_table(store: InMemoryEventStore) -> list[Seat]:
    register(store, BotSpec(name="alice", game="shithead", kind="external"))
    seats = bind_seats(store, "shithead", [Requested("external", "alice"), Requested("bot")])
    assert seats is not None
    return seats


def test_a_started_game_holds_its_bound_bots_slots_up_to_the_cap() -> None:
    store, slots, dispatcher = InMemoryEventStore(), InMemoryGameSlots(), Recorder()
    seats = _alice_table(store)
    started = start_game(store, GameCap(slots, 1), dispatcher, NewGame("shithead", seats=seats))
    assert slots.games("alice@1") == [started.outcome.game_id]
    assert started.game.game_id == started.outcome.game_id
    assert not started.outcome.replayed
    with pytest.raises(GameCapReached) as refused:
        start_game(store, GameCap(slots, 1), dispatcher, NewGame("shithead", seats=seats))
    assert refused.value.field == "seats[0]"


def test_a_creation_that_fails_gives_its_reservations_back() -> None:
    store, slots = InMemoryEventStore(), InMemoryGameSlots()
    seats = _alice_table(store)
    bad = NewGame("shithead", seats=seats, ruleset={"no_such_rule": 1})
    with pytest.raises(InvalidRequest):
        start_game(store, GameCap(slots, 1), Recorder(), bad)
    assert slots.games("alice@1") == []
    assert slots.reserve("alice@1", "probe", 1, 60_000)


def test_a_retry_with_the_key_of_a_created_game_is_not_refused_for_the_cap() -> None:
    store, slots, dispatcher = InMemoryEventStore(), InMemoryGameSlots(), Recorder()
    seats = _alice_table(store)
    request = NewGame("shithead", seats=seats, idempotency_key="host:k1")
    first = start_game(store, GameCap(slots, 1), dispatcher, request)
    again = start_game(store, GameCap(slots, 1), dispatcher, request)
    assert again.outcome.replayed
    assert again.outcome.game_id == first.outcome.game_id


def test_a_seat_naming_a_bot_of_an_unknown_game_names_the_game() -> None:
    with pytest.raises(InvalidRequest) as refused:
        bind_seats(InMemoryEventStore(), "chess", [Requested("external", "alice")])
    assert refused.value.field == "game"


def test_a_game_of_built_in_bots_is_handed_to_the_dispatcher_once_created() -> None:
    store, dispatcher = InMemoryEventStore(), Recorder()
    started = start_game(
        store, GameCap(InMemoryGameSlots(), 0), dispatcher, NewGame("shithead", players=2)
    )
    assert dispatcher.dispatched == [started.outcome.game_id]
