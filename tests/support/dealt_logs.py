"""Logs of a dealt game to check and tamper with: an event replaced, a game a webhook seat lost
to its clock."""

from __future__ import annotations

from typing import Any

import msgspec

from shared.app.bot_turns import play_bot_turns
from shared.app.deadlines import enforce_deadline, record_webhook_failure, watch_of
from shared.app.games import create_game
from shared.app.loading import load
from shared.messages.common import Clock, Event, Seat
from shared.store.memory import InMemoryEventStore

SALT = "0" * 64
FAR_FUTURE = 10**15


def replaced(events: list[Event], index: int, **changes: Any) -> list[Event]:
    """Returns `events` with the event at `index` changed."""
    copy = list(events)
    copy[index] = msgspec.structs.replace(copy[index], **changes)
    return copy


def timed_out_game(store: InMemoryEventStore) -> str:
    """Returns a finished Shithead game whose seat 0 (a webhook bot) never answered: a
    failed call, three timeouts, a forfeit, then the platform's default actions."""
    seats = [Seat(kind="webhook", name="hook", version="1"), *[Seat(kind="bot", bot="random")] * 2]
    clock = Clock(move_seconds=1)
    game_id = create_game(store, "shithead", seats=seats, seed=11, clock=clock, salt=SALT).game_id
    play_bot_turns(store, game_id)
    record_webhook_failure(store, load(store, game_id), 0, "1:0", "timeout", "no answer")
    for _ in range(10):
        watch = watch_of(load(store, game_id))
        if watch is None:
            break
        assert watch.deadline_ms is not None
        assert enforce_deadline(store, game_id, watch.turn_version, FAR_FUTURE).status == (
            "timed_out"
        )
        play_bot_turns(store, game_id)
    assert load(store, game_id).spec.is_over(load(store, game_id).state)
    return game_id
