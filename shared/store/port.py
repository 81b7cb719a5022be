"""The event store port: streams with optimistic concurrency, and a partitioned feed.

A stream is a game's, a tournament's, a challenge's or the registry's; its id is the
`stream` every method takes. Every append names the version it expects the stream to be
at; a stale version writes nothing and raises `ConcurrencyConflict`. An append may carry
an idempotency key: a repeated key returns the first append's result and writes nothing.

The feed is split into a fixed number of partitions (`EventStore.partitions`); a stream
belongs to one (`partition_of`, a stable hash), and each append goes to that partition's
feed in the same atomic step as the stream. A partition's positions are its own
(`"<ms>-<seq>"`, increasing); `read_feed` and `wait_feed` read every partition at once
through a cursor: the positions of every partition, joined by commas (with one partition,
a cursor is that partition's position).
"""

from __future__ import annotations

import abc
import heapq
import time
import zlib
from collections.abc import Callable, Sequence
from typing import TypeVar

import msgspec

from shared.messages.envelope import NewEvent, RecordedEvent

_POLL_S = 0.02
"""How often the port's default waits look again (adapters override them with real waits)."""

T = TypeVar("T")


class FeedEntry(msgspec.Struct, frozen=True):
    """One entry of the feed: where a read resumes after it, the event, and its partition.

    `position` is of the kind the read took: a partition's position from a partition's
    read or consumer, a cursor (every partition's position) from `read_feed`/`wait_feed`.
    """

    position: str
    event: RecordedEvent
    partition: int = 0


def own_position(entry: FeedEntry) -> str:
    """Returns the position of `entry` in its partition (a merged read's entry carries the
    cursor after it: its partition's part of that)."""
    if "," not in entry.position:
        return entry.position
    return entry.position.split(",")[entry.partition]


def partition_of(stream: str, partitions: int) -> int:
    """Returns the partition of `stream` among `partitions`: a hash stable across processes,
    machines and versions (CRC-32 of the id)."""
    return zlib.crc32(stream.encode()) % partitions


def position_key(position: str) -> tuple[int, int]:
    """Returns the order key of a partition's position `"ms-seq"` (a bare `"ms"` is `"ms-0"`)."""
    ms, _, seq = position.partition("-")
    return int(ms), int(seq or 0)


class InvalidCursor(ValueError):
    """A feed cursor that is not one of this store's (another partition count, or garbage)."""


def cursor_positions(cursor: str, partitions: int) -> list[str]:
    """Returns the position of each partition in `cursor` ("0": the start of every one);
    raises InvalidCursor."""
    if cursor in ("", "0"):
        return ["0"] * partitions
    positions = cursor.split(",")
    if len(positions) != partitions:
        raise InvalidCursor(
            f"a feed cursor of this store names {partitions} partitions, not {len(positions)}"
        )
    for position in positions:
        try:
            position_key(position)
        except ValueError:
            raise InvalidCursor(f"{position!r} is not a feed position") from None
    return positions


def cursor_of(positions: Sequence[str]) -> str:
    """Returns the cursor of the partitions' `positions` (the inverse of `cursor_positions`)."""
    return ",".join(positions) if any(p != "0" for p in positions) else "0"


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

    def consumer(
        self,
        group: str,
        name: str,
        claim_idle_ms: int = 30000,
        partitions: Sequence[int] | None = None,
    ) -> FeedConsumer:
        """Returns member `name` of consumer group `group` on `partitions` (default: every
        one) of the feed, read as one in merged order: `shared.store.merged.consumer`, over
        `partition_consumer`."""
        raise NotImplementedError(f"{type(self).__name__} has no consumer groups")

    def partition_consumer(
        self, group: str, name: str, partition: int, claim_idle_ms: int = 30000
    ) -> FeedConsumer:
        """Returns member `name` of consumer group `group` on one partition of the feed."""
        raise NotImplementedError(f"{type(self).__name__} has no consumer groups")

    def wait(
        self, stream: str, after: int, timeout_ms: int, limit: int | None = None
    ) -> list[RecordedEvent]:
        """Returns the events of `stream` after version `after` (up to `limit`) as soon as
        there is one, waiting up to `timeout_ms` for one (0: not at all); empty if none came.

        This default polls `read`; adapters wait on the store itself.
        """
        return _polled(lambda: self.read(stream, after, limit), timeout_ms)

    @property
    def partitions(self) -> int:
        """Returns how many partitions the feed has (fixed for the life of a store)."""
        return 1

    def partition_of(self, stream: str) -> int:
        """Returns the partition that `stream`'s appends go to."""
        return partition_of(stream, self.partitions)

    @abc.abstractmethod
    def read_partition(self, partition: int, after: str = "0", count: int = 100) -> list[FeedEntry]:
        """Returns up to `count` entries of partition `partition` after its position `after`."""

    @abc.abstractmethod
    def partition_position(self, partition: int) -> str:
        """Returns the position of partition `partition`'s last entry ("0": empty)."""

    @abc.abstractmethod
    def trim_feed(self, older_than_ms: int) -> int:
        """Deletes from every partition's feed the entries that every consumer group of it
        has passed (delivered and acknowledged) and that were appended before
        `older_than_ms` (a time in ms since the epoch); returns how many. A partition that no
        group reads is kept whole. Streams are untouched."""

    @abc.abstractmethod
    def feed_trimmed(self, partition: int) -> str:
        """Returns the newest position `trim_feed` deleted from `partition` ("0": none): a
        cursor at or after it everywhere reads the feed without a gap."""

    def wait_partition(
        self, partition: int, after: str, timeout_ms: int, count: int = 100
    ) -> list[FeedEntry]:
        """Returns up to `count` entries of `partition` after `after` as soon as there is one,
        waiting up to `timeout_ms` (0: not at all). This default polls; adapters block."""
        return _polled(lambda: self.read_partition(partition, after, count), timeout_ms)

    @abc.abstractmethod
    def feed_clock(self) -> tuple[int, int]:
        """Returns a position key K such that every entry appended from now on, to any
        partition, has a key of at least K: the entries below K are final (no entry will be
        appended before them), so a merge of the partitions up to K is the order for good."""

    def read_feed(self, after: str = "0", count: int = 100) -> list[FeedEntry]:
        """Returns up to `count` entries of every partition after the cursor `after`, merged
        in position order (ties by partition); each entry's position is the cursor after it.

        Raises InvalidCursor."""
        positions = cursor_positions(after, self.partitions)
        if count <= 0:
            return []
        pages = self._read_partitions(positions, count)
        return _merged(positions, pages, count)

    def _read_partitions(self, positions: Sequence[str], count: int) -> list[list[FeedEntry]]:
        """Returns up to `count` entries of each partition after its position (adapters read
        them in one round trip)."""
        return [
            self.read_partition(partition, position, count)
            for partition, position in enumerate(positions)
        ]

    def wait_feed(self, after: str, timeout_ms: int, count: int = 100) -> list[FeedEntry]:
        """Returns up to `count` entries after the cursor `after` as soon as there is one,
        waiting up to `timeout_ms` for one (0: not at all); empty if none came.

        This default polls `read_feed` (one partition: `wait_partition`); adapters wait on
        the store itself."""
        if self.partitions == 1:
            cursor_positions(after, 1)
            return self.wait_partition(0, after, timeout_ms, count)
        return _polled(lambda: self.read_feed(after, count), timeout_ms)

    def feed_position(self) -> str:
        """Returns the cursor of every partition's last entry ("0" for an empty feed):
        reading or waiting after it returns only entries appended later."""
        return cursor_of([self.partition_position(p) for p in range(self.partitions)])

    def append_batches(
        self,
        stream: str,
        kind: str,
        batches: Sequence[tuple[int, Sequence[NewEvent], str | None]],
    ) -> list[AppendResult | StoreError]:
        """Appends the (expected_version, events, key) batches in order as one chain: each
        continues the one before it (a run of the platform's moves, each decided on the game
        as the batches before it leave it).

        A batch is written only when every batch before it in the call was written by this
        call: the first that is not (a conflict, an idempotent replay, an error) ends the
        chain, and every batch after it reports a `ConcurrencyConflict` at the stream's
        version without being written or looking up its key. A replay ends it too because a
        key names a move's version, not its content: the move recorded under it may differ
        from the one the later batches were decided after. Adapters may send the call in one
        round trip.
        """
        results: list[AppendResult | StoreError] = []
        for expected, events, key in batches:
            if results and not written(results[-1]):
                results.append(ConcurrencyConflict(stream, expected, self.version(stream)))
                continue
            try:
                results.append(self.append(stream, kind, expected, events, key))
            except StoreError as error:
                results.append(error)
        return results


def written(result: AppendResult | StoreError) -> bool:
    """Returns whether `result` is of a batch its `append_batches` call wrote: the chain
    goes on after it."""
    return isinstance(result, AppendResult) and not result.replayed


def _merged(
    positions: Sequence[str], pages: Sequence[Sequence[FeedEntry]], count: int
) -> list[FeedEntry]:
    """Returns the first `count` entries of the partitions' `pages` (each in its order) in
    position order, each with the cursor after it (from the cursor `positions`)."""
    entries = (entry for page in pages for entry in page)
    current = list(positions)
    merged = []
    for entry in heapq.nsmallest(count, entries, key=merge_key):
        current[entry.partition] = entry.position
        merged.append(FeedEntry(cursor_of(current), entry.event, entry.partition))
    return merged


def merge_key(entry: FeedEntry) -> tuple[int, int, str, int]:
    """Returns the order of `entry` (of a partition's read) among every partition's entries:
    by position, ties (entries of different partitions) by game and version."""
    ms, seq = position_key(entry.position)
    return ms, seq, entry.event.game_id, entry.event.version


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
    """One member of a named group reading a partition's feed (or several: see
    `shared.store.merged`); each entry goes to one member.

    Entries stay pending until acknowledged; a reader that dies holding entries has them
    delivered again (to itself on restart, or claimed by another member once idle).
    """

    @abc.abstractmethod
    def read(self, count: int = 100, block_ms: int = 0) -> list[FeedEntry]:
        """Returns up to `count` entries: first this member's unacknowledged ones, then new ones.

        Waits up to `block_ms` for new entries when there are none (0: do not wait).
        """

    @abc.abstractmethod
    def read_more(self, count: int = 100) -> list[FeedEntry]:
        """Returns up to `count` entries this member object has not handed out yet: the
        unacknowledged ones an earlier member of the same name left (after a restart), then
        entries claimed idle from other members, then new ones. Unlike `read`, never again
        an entry of this object's own earlier reads (a reader that keeps what it read, such
        as the merged consumer, reads each entry from the store once); an entry idle so long
        that it is claimed back may come again, so such a reader drops what it holds.

        Does not wait.
        """

    @abc.abstractmethod
    def ack(self, positions: Sequence[str]) -> None:
        """Marks the entries at `positions` as processed."""

    def ack_entries(self, entries: Sequence[FeedEntry]) -> None:
        """Marks `entries` (of this consumer's reads) as processed."""
        self.ack([entry.position for entry in entries])
