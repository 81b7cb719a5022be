"""Waiting on a game's stream for a seat's turn: the wait that long polls and actions with a wait
share (blocking: callers run it in a worker thread)."""

from __future__ import annotations

import time
from collections.abc import Callable

from shared.app.loading import LoadedGame, caught_up
from shared.store.port import EventStore


def wait_ms(seconds: float) -> int:
    """Returns `seconds` in whole milliseconds, at least 1 (a wait on the store)."""
    return max(1, int(seconds * 1000))


def due(loaded: LoadedGame, seat: int) -> bool:
    """Returns whether the game is over or waits for `seat`."""
    return loaded.spec.is_over(loaded.state) or seat in loaded.spec.to_move(loaded.state)


def until_due(
    store: EventStore,
    loaded: LoadedGame,
    seat: int,
    wait_s: float,
    chunk_s: float,
    ended: Callable[[], bool] | None = None,
) -> LoadedGame:
    """Returns the game `loaded` as it stands once it waits for `seat` or is over, or after
    `wait_s` seconds, or (checked between waits) once `ended()`. Blocks (each wait on the
    store lasts at most `chunk_s`)."""
    deadline = time.monotonic() + wait_s
    while not due(loaded, seat) and (remaining := deadline - time.monotonic()) > 0:
        if ended is not None and ended():
            break
        batch = store.wait(loaded.game_id, loaded.version, wait_ms(min(remaining, chunk_s)))
        if batch:
            loaded = caught_up(store, loaded, batch)
    return loaded
