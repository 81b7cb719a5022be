"""The cap on concurrent games per registered bot: the slots port and its twin.

Per bot (`name@version`) the slots hold the ids of the games it was seated in and short-
lived reservations of games being created. A creation reserves a slot for each bound bot
atomically (refused when the bot holds `cap` already), creates the game, then turns the
reservations into the game's id; a reservation whose creator died expires. Finished
games are dropped lazily, when a bot seems full: the event store says which are over
(`shared.app.admission`, which also reserves and confirms a creation's slots).
The Redis adapter (`shared.store.redis_limits.RedisGameSlots`) shares the slots between
server processes; the twin keeps them in this process.
"""

from __future__ import annotations

import abc
import math
import threading
import time
from collections.abc import Callable, Sequence

from shared.errors import InvalidRequest

RESERVATION_MS = 60_000
"""How long a reservation outlives a creator that never confirmed or cancelled it."""


class GameCapReached(InvalidRequest):
    """A bound bot already sits in as many running games as the cap allows."""


class GameSlots(abc.ABC):
    """Per bot: its games and its reservations, with an atomic reserve-below-cap."""

    @abc.abstractmethod
    def reserve(self, bot: str, reservation: str, cap: int, ttl_ms: int) -> bool:
        """Atomically drops the bot's expired reservations and, unless it holds `cap` games
        and reservations, adds `reservation` (expiring in `ttl_ms`); returns whether it did.
        """

    @abc.abstractmethod
    def confirm(self, bot: str, reservation: str, game_id: str) -> None:
        """Replaces the bot's `reservation` with the game `game_id`, which never expires."""

    @abc.abstractmethod
    def cancel(self, bot: str, reservation: str) -> None:
        """Drops the bot's `reservation`."""

    @abc.abstractmethod
    def games(self, bot: str) -> list[str]:
        """Returns the ids of the games the bot holds a slot for, in no particular order."""

    @abc.abstractmethod
    def release(self, bot: str, game_ids: Sequence[str]) -> None:
        """Drops the bot's slots of `game_ids`."""


class InMemoryGameSlots(GameSlots):
    """GameSlots held in this process: the embedded default. Thread-safe."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._slots: dict[str, dict[str, float]] = {}
        """Per bot: game id or reservation -> when it expires (games: never)."""

    def reserve(self, bot: str, reservation: str, cap: int, ttl_ms: int) -> bool:
        with self._lock:
            now = self._clock()
            held = {k: v for k, v in self._slots.get(bot, {}).items() if v > now}
            self._slots[bot] = held
            if len(held) >= cap:
                return False
            held[reservation] = now + ttl_ms / 1000
            return True

    def confirm(self, bot: str, reservation: str, game_id: str) -> None:
        with self._lock:
            held = self._slots.setdefault(bot, {})
            held.pop(reservation, None)
            held[game_id] = math.inf

    def cancel(self, bot: str, reservation: str) -> None:
        with self._lock:
            self._slots.get(bot, {}).pop(reservation, None)

    def games(self, bot: str) -> list[str]:
        with self._lock:
            return [k for k, v in self._slots.get(bot, {}).items() if v == math.inf]

    def release(self, bot: str, game_ids: Sequence[str]) -> None:
        with self._lock:
            held = self._slots.get(bot, {})
            for game_id in game_ids:
                held.pop(game_id, None)
