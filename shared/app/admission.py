"""Admission of a new game: a slot per bound bot, reserved before the game is created and
confirmed (or cancelled) after; the slots themselves are the port `shared.ports.game_slots`.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from shared.app.loading import load
from shared.errors import UnknownGame
from shared.ports.game_slots import RESERVATION_MS, GameCapReached, GameSlots
from shared.store.port import EventStore


def _running(store: EventStore, game_id: str) -> bool:
    """Returns whether `game_id` is a game that is not over."""
    try:
        loaded = load(store, game_id)
    except UnknownGame:
        return False
    return not loaded.spec.is_over(loaded.state)


def prune(slots: GameSlots, store: EventStore, bot: str) -> None:
    """Drops the bot's slots of games that are over (or do not exist)."""
    over = [game_id for game_id in slots.games(bot) if not _running(store, game_id)]
    if over:
        slots.release(bot, over)


def full(slots: GameSlots, store: EventStore, bot: str, cap: int) -> bool:
    """Returns whether the bot sits in `cap` running games already (its slots pruned of games
    that are over first, when it seems full); `cap` 0: never full. Reserves nothing: `admit`
    still decides, atomically, when a game is created."""
    if cap == 0 or len(slots.games(bot)) < cap:
        return False
    prune(slots, store, bot)
    return len(slots.games(bot)) >= cap


class Admission:
    """Slots reserved for a game being created: `confirm` it once created, else `cancel`."""

    def __init__(self, slots: GameSlots, reservation: str, bots: Sequence[str]) -> None:
        self._slots = slots
        self._reservation = reservation
        self._bots = list(bots)

    def confirm(self, game_id: str) -> None:
        """Turns the reservations into slots of the created game `game_id`."""
        for bot in self._bots:
            self._slots.confirm(bot, self._reservation, game_id)

    def cancel(self) -> None:
        """Gives the reservations back: the game was not created."""
        for bot in self._bots:
            self._slots.cancel(bot, self._reservation)


def admit(
    slots: GameSlots,
    store: EventStore,
    bound: Sequence[tuple[str, str]],
    cap: int,
    ttl_ms: int = RESERVATION_MS,
) -> Admission:
    """Reserves a slot for each distinct bot of `bound` ((field, `name@version`) per seat).

    Raises GameCapReached naming the first seat whose bot holds `cap` running games (and
    reserves nothing); `cap` 0 admits everything and reserves nothing.
    """
    reservation = f"reserved:{uuid.uuid4().hex}"
    reserved: list[str] = []
    if cap == 0:
        return Admission(slots, reservation, reserved)
    for field, bot in bound:
        if bot in reserved:
            continue
        if not slots.reserve(bot, reservation, cap, ttl_ms):
            prune(slots, store, bot)
            if not slots.reserve(bot, reservation, cap, ttl_ms):
                Admission(slots, reservation, reserved).cancel()
                raise GameCapReached(
                    field, f"{bot} is in {cap} running games already, the most a bot may play"
                )
        reserved.append(bot)
    return Admission(slots, reservation, reserved)
