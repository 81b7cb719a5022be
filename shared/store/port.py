"""The event store port: streams with optimistic concurrency, and one global feed.

A stream is a game's, a tournament's, a challenge's or the registry's; its id is the
`stream` every method takes. Every append names the version it expects the stream to be
at; a stale version writes nothing and raises `ConcurrencyConflict`. An append may carry
an idempotency key: a repeated key returns the first append's result and writes nothing.
"""

from __future__ import annotations

import abc
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

import msgspec

from shared.messages.envelope import NewEvent, RecordedEvent

_POLL_S = 0.02
"""How often the port's default waits look again (adapters override them with real waits)."""

T = TypeVar("T")


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
        stream: str,
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
        self, stream: str, idempotency_key: str, fingerprint: str = ""
    ) -> AppendResult | None:
        """Returns the first result of an append with this key (`replayed` set), None if unknown.

        Raises `IdempotencyKeyReused` when the key was first used with another fingerprint.
        """

    @abc.abstractmethod
    def read(self, stream: str, after: int = 0, limit: int | None = None) -> list[RecordedEvent]:
        """Returns the events of `stream` with version > `after`, in order."""

    @abc.abstractmethod
    def version(self, stream: str) -> int:
        """Returns the version of the last event of `stream`, 0 if it has none."""

    @abc.abstractmethod
    def drop(self, stream: str) -> bool:
        """Deletes `stream` (its events stay in the feed); returns whether
        there was one.

        The stream's version stays, so its id is never reused: an append at version 0
        conflicts. Only for a finished game that the archive holds whole (see
        `services.projection.retention`); readers then take its log from the archive.
        """

    @abc.abstractmethod
    def read_feed(self, after: str = "0", count: int = 100) -> list[FeedEntry]:
        """Returns up to `count` feed entries after position `after`, oldest first."""

    def wait(
        self, stream: str, after: int, timeout_ms: int, limit: int | None = None
    ) -> list[RecordedEvent]:
        """Returns the events of `stream` after version `after` (up to `limit`) as soon as
        there is one, waiting up to `timeout_ms` for one (0: not at all); empty if none came.

        This default polls `read`; adapters wait on the store itself.
        """
        return _polled(lambda: self.read(stream, after, limit), timeout_ms)

    def wait_feed(self, after: str, timeout_ms: int, count: int = 100) -> list[FeedEntry]:
        """Returns up to `count` feed entries after position `after` as soon as there is one,
        waiting up to `timeout_ms` for one (0: not at all); empty if none came.

        This default polls `read_feed`; adapters wait on the store itself.
        """
        return _polled(lambda: self.read_feed(after, count), timeout_ms)

    def feed_position(self) -> str:
        """Returns the position of the feed's last entry ("0" for an empty feed): reading or
        waiting after it returns only entries appended later.

        This default pages through the whole feed; adapters ask the store.
        """
        position = "0"
        while page := self.read_feed(position, 1000):
            position = page[-1].position
        return position

    def append_batches(
        self,
        stream: str,
        kind: str,
        batches: Sequence[tuple[int, Sequence[NewEvent], str | None]],
    ) -> list[AppendResult | StoreError]:
        """Appends each (expected_version, events, key) batch in order, as independent appends.

        Each batch succeeds or fails on its own; adapters may send them in one round trip.
        """
        results: list[AppendResult | StoreError] = []
        for expected, events, key in batches:
            try:
                results.append(self.append(stream, kind, expected, events, key))
            except StoreError as error:
                results.append(error)
        return results


def _polled(read: Callable[[], list[T]], timeout_ms: int) -> list[T]:
    """Returns the first non-empty result of `read`, calling it until `timeout_ms` passed."""
    deadline = time.monotonic() + max(timeout_ms, 0) / 1000
    while True:
        found = read()
        remaining = deadline - time.monotonic()
        if found or remaining <= 0:
            return found
        time.sleep(min(_POLL_S, remaining))


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
