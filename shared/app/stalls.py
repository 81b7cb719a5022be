"""Bounded platform loops: a loop that makes no progress stops after a few tries, says so
and leaves the game to the workers' reconciliation.

A loop of the platform (bot turns, a deadline, a webhook turn, a tournament's record)
appends at the version it loaded; an append that writes nothing and does not move the
game on (a replayed key whose first append was someone else's, say) is no progress. After
`MAX_IDLE_TRIES` such tries in a row the loop gives up and calls `report`: it logs a
warning and tells the observers (the services count it in `cardarena_platform_stalls`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

log = logging.getLogger(__name__)

MAX_IDLE_TRIES = 3
"""How many tries in a row without progress a platform loop makes before it gives up."""

Loop = Literal["bot_turns", "deadline", "webhook", "tournament"]


@dataclass(frozen=True)
class Stall:
    """A platform loop that gave up: which, on what stream, at what version, after how many
    tries."""

    loop: Loop
    stream: str
    version: int
    tries: int


Observer = Callable[[Stall], None]

_observers: list[Observer] = []
_lock = threading.Lock()


def subscribe(observer: Observer) -> Callable[[], None]:
    """Has `observer` told of every stall in this process; returns what unsubscribes it."""
    with _lock:
        _observers.append(observer)

    def unsubscribe() -> None:
        with _lock:
            if observer in _observers:
                _observers.remove(observer)

    return unsubscribe


def report(stall: Stall) -> None:
    """Logs `stall` and tells every observer (one that raises is logged, not re-raised)."""
    log.warning(
        "platform loop stalled: %s of %s made no progress at version %s in %s tries;"
        " left to reconciliation",
        stall.loop,
        stall.stream,
        stall.version,
        stall.tries,
    )
    with _lock:
        observers = list(_observers)
    for observer in observers:
        try:
            observer(stall)
        except Exception:
            log.exception("a stall observer failed")
