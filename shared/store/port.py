"""The event store port: per-game streams with optimistic concurrency, and one global feed.

Every append names the version it expects the game's stream to be at; a stale version
writes nothing and raises `ConcurrencyConflict`. An append may carry an idempotency key:
a repeated key returns the first append's result and writes nothing.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence

import msgspec

SCHEMA_VERSION = 1
"""The envelope schema version written with every event; readers refuse any other."""


class NewEvent(msgspec.Struct, frozen=True):
    """An encoded event about to be appended: its type tag and its payload bytes."""

    type: str
    data: bytes


class RecordedEvent(msgspec.Struct, frozen=True):
    """An event as stored: game, version (1-based, gapless), type, payload and envelope."""

    game_id: str
    kind: str
    version: int
    type: str
    data: bytes
    schema: int = SCHEMA_VERSION
    recorded_at: int = 0
    """Milliseconds since the epoch, from the store's clock."""


class FeedEntry(msgspec.Struct, frozen=True):
    """One entry of the global feed: its position there, and the event."""

    position: str
    event: RecordedEvent


class AppendResult(msgspec.Struct, frozen=True):
    """The versions an append wrote, or, when `replayed`, those that the first append wrote."""

    first_version: int
    last_version: int
    replayed: bool = False


class StoreError(Exception):
    """Base of the event store's typed errors."""


class ConcurrencyConflict(StoreError):
    """The stream is not at the expected version; nothing was written."""

    def __init__(self, game_id: str, expected: int, actual: int) -> None:
        super().__init__(f"game {game_id} is at version {actual}, not {expected}")
        self.game_id = game_id
        self.expected = expected
        self.actual = actual


class IdempotencyKeyReused(StoreError):
    """The idempotency key was first used for a different request; nothing was written."""

    def __init__(self, game_id: str, key: str) -> None:
        super().__init__(f"idempotency key {key!r} was used for a different request on {game_id}")
        self.game_id = game_id
        self.key = key


class StoreUnavailable(StoreError):
    """The store could not be reached; the append may be retried with the same key."""


class EventStore(abc.ABC):
    """Per-game event streams and a global feed of every appended event."""

    @abc.abstractmethod
    def append(
        self,
        game_id: str,
        kind: str,
        expected_version: int,
        events: Sequence[NewEvent],
        idempotency_key: str | None = None,
        fingerprint: str = "",
    ) -> AppendResult:
        """Appends `events` atomically after `expected_version`, to the stream and the feed.

        Raises `ConcurrencyConflict` when the stream is at another version and
        `IdempotencyKeyReused` when the key was first used with another fingerprint.
        """

    @abc.abstractmethod
    def recall(
        self, game_id: str, idempotency_key: str, fingerprint: str = ""
    ) -> AppendResult | None:
        """Returns the first result of an append with this key (`replayed` set), None if unknown.

        Raises `IdempotencyKeyReused` when the key was first used with another fingerprint.
        """

    @abc.abstractmethod
    def read(self, game_id: str, after: int = 0, limit: int | None = None) -> list[RecordedEvent]:
        """Returns the events of `game_id` with version > `after`, in order."""

    @abc.abstractmethod
    def version(self, game_id: str) -> int:
        """Returns the version of the last event of `game_id`, 0 if it has none."""

    @abc.abstractmethod
    def read_feed(self, after: str = "0", count: int = 100) -> list[FeedEntry]:
        """Returns up to `count` feed entries after position `after`, oldest first."""

    def append_batches(
        self,
        game_id: str,
        kind: str,
        batches: Sequence[tuple[int, Sequence[NewEvent], str | None]],
    ) -> list[AppendResult | StoreError]:
        """Appends each (expected_version, events, key) batch in order, as independent appends.

        Each batch succeeds or fails on its own; adapters may send them in one round trip.
        """
        results: list[AppendResult | StoreError] = []
        for expected, events, key in batches:
            try:
                results.append(self.append(game_id, kind, expected, events, key))
            except StoreError as error:
                results.append(error)
        return results


class FeedConsumer(abc.ABC):
    """One member of a named group reading the global feed; each entry goes to one member.

    Entries stay pending until acknowledged; a reader that dies holding entries has them
    delivered again (to itself on restart, or claimed by another member once idle).
    """

    @abc.abstractmethod
    def read(self, count: int = 100, block_ms: int = 0) -> list[FeedEntry]:
        """Returns up to `count` entries: first this member's unacknowledged ones, then new ones.

        Waits up to `block_ms` for new entries when there are none (0: do not wait).
        """

    @abc.abstractmethod
    def ack(self, positions: Sequence[str]) -> None:
        """Marks the entries at `positions` as processed."""
