"""The event archive port: every event of a game, kept after its stream leaves the store.

The projection copies every event into PostgreSQL (`services.projection.archive`); a
finished game's stream may then be dropped from the event store (see
`services.projection.retention`). Readers take a game's log from the store while its
stream exists and from the archive after (`game_log`; a game folded so:
`shared.app.loading.load_logged`).
"""

from __future__ import annotations

import abc
import threading
from collections.abc import Iterable

from shared.catalog import get_game
from shared.errors import GameNotFound, UnknownGame
from shared.games.base import AnyGame
from shared.messages.common import Event, GameCreated
from shared.messages.envelope import RecordedEvent
from shared.store.port import EventStore


class EventArchive(abc.ABC):
    """Every archived event of every game, keyed by (game, version)."""

    @abc.abstractmethod
    def read(self, game_id: str) -> list[RecordedEvent]:
        """Returns the archived events of `game_id` in version order (empty when none)."""

    @abc.abstractmethod
    def holds(self, game_id: str, version: int) -> bool:
        """Returns whether the archive holds every event of `game_id` from 1 to `version`."""


def _holds(versions: Iterable[int], version: int) -> bool:
    """Returns whether `versions` (distinct) include every version from 1 to `version`."""
    return sum(1 for held in versions if 1 <= held <= version) == version


class InMemoryEventArchive(EventArchive):
    """An archive held in this process, filled with `add`: the twin of the PostgreSQL one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._games: dict[str, dict[int, RecordedEvent]] = {}

    def add(self, events: Iterable[RecordedEvent]) -> None:
        """Archives `events`; an event whose (game, version) is archived already is ignored."""
        with self._lock:
            for event in events:
                self._games.setdefault(event.game_id, {}).setdefault(event.version, event)

    def read(self, game_id: str) -> list[RecordedEvent]:
        with self._lock:
            held = self._games.get(game_id, {})
            return [held[version] for version in sorted(held)]

    def holds(self, game_id: str, version: int) -> bool:
        with self._lock:
            return _holds(self._games.get(game_id, {}), version)


class StoreArchive(EventArchive):
    """The event store as its own archive: the embedded default, which never drops a stream."""

    def __init__(self, store: EventStore) -> None:
        self._store = store

    def read(self, game_id: str) -> list[RecordedEvent]:
        return self._store.read(game_id)

    def holds(self, game_id: str, version: int) -> bool:
        return _holds((event.version for event in self._store.read(game_id)), version)


def game_log(store: EventStore, archive: EventArchive, game_id: str) -> list[RecordedEvent]:
    """Returns every event of `game_id` in version order: the store's stream while it holds
    one, else the archive's copy (empty when neither knows the game)."""
    return store.read(game_id) or archive.read(game_id)


def decoded_log(
    game_id: str, recorded: list[RecordedEvent]
) -> tuple[AnyGame, GameCreated, list[Event]]:
    """Returns the game's spec, its creation and its decoded events (the creation first);
    raises UnknownGame for an empty log or one that is not a game's (a tournament's)."""
    if not recorded:
        raise UnknownGame(game_id)
    try:
        spec = get_game(recorded[0].kind)
    except GameNotFound:
        raise UnknownGame(game_id) from None
    events = spec.codec.decode_all(recorded)
    created = events[0]
    if not isinstance(created, GameCreated):
        raise UnknownGame(game_id)
    return spec, created, events
