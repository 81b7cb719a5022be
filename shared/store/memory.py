"""The in-memory event store: the embedded default and the store of unit tests."""

from __future__ import annotations

import bisect
import threading
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field

from shared.messages.envelope import SCHEMA_VERSION as SCHEMA
from shared.messages.envelope import NewEvent, RecordedEvent
from shared.store import merged
from shared.store.port import (
    AppendResult,
    ConcurrencyConflict,
    EventStore,
    FeedConsumer,
    FeedEntry,
    IdempotencyKeyReused,
    StoreError,
    cursor_positions,
    position_key,
    written,
)


class InMemoryEventStore(EventStore):
    """A thread-safe EventStore held in this process, its feed in `partitions` partitions;
    positions are `"<n>-0"`, n counting every appended event (so they order across
    partitions exactly as the events were appended)."""

    def __init__(self, partitions: int = 1) -> None:
        if partitions < 1:
            raise ValueError("a store has at least one partition")
        self._partitions = partitions
        self._lock = threading.Lock()
        self._appended = threading.Condition(self._lock)
        """Notified after every append, for `wait` and `wait_feed`."""
        self._streams: dict[str, list[RecordedEvent]] = {}
        self._dropped: dict[str, int] = {}
        """The version of each dropped stream when it was dropped (later events follow it)."""
        self._feeds: list[list[tuple[int, RecordedEvent]]] = [[] for _ in range(partitions)]
        """Each partition's entries: (n, event), n increasing."""
        self._appended_count = 0
        self._trimmed = ["0"] * partitions
        """Per partition, the newest position trimmed away."""
        self._keys: dict[tuple[str, str], tuple[AppendResult, str]] = {}

    def append(
        self,
        stream: str,
        kind: str,
        expected_version: int,
        events: Sequence[NewEvent],
        idempotency_key: str | None = None,
        fingerprint: str = "",
    ) -> AppendResult:
        with self._lock:
            result = self._append(
                stream, kind, expected_version, events, idempotency_key, fingerprint
            )
            if not result.replayed:
                self._appended.notify_all()
            return result

    def _append(
        self,
        stream: str,
        kind: str,
        expected_version: int,
        events: Sequence[NewEvent],
        idempotency_key: str | None,
        fingerprint: str,
        partition: int | None = None,
    ) -> AppendResult:
        """Appends as `append` does (to the feed of `partition`, the stream's, worked out when
        not given); the caller holds the lock and wakes the waiters."""
        if not events:
            raise ValueError("an append needs at least one event")
        if idempotency_key is not None:
            known = self._keys.get((stream, idempotency_key))
            if known is not None:
                first, known_fingerprint = known
                if known_fingerprint and fingerprint and known_fingerprint != fingerprint:
                    raise IdempotencyKeyReused(stream, idempotency_key)
                return AppendResult(first.first_version, first.last_version, replayed=True)
        entries = self._streams.setdefault(stream, [])
        actual = self._version(stream)
        if actual != expected_version:
            raise ConcurrencyConflict(stream, expected_version, actual)
        now = int(time.time() * 1000)
        feed = self._feeds[self.partition_of(stream) if partition is None else partition]
        count = self._appended_count
        for offset, event in enumerate(events, start=1):
            recorded = RecordedEvent(
                stream, kind, expected_version + offset, event.type, event.data, SCHEMA, now
            )
            entries.append(recorded)
            count += 1
            feed.append((count, recorded))
        self._appended_count = count
        result = AppendResult(expected_version + 1, expected_version + len(events))
        if idempotency_key is not None:
            self._keys[(stream, idempotency_key)] = (result, fingerprint)
        return result

    def append_batches(
        self,
        stream: str,
        kind: str,
        batches: Sequence[tuple[int, Sequence[NewEvent], str | None]],
    ) -> list[AppendResult | StoreError]:
        """Appends the chain of batches as the port says, under one hold of the lock and with
        one wake-up of the waiters for them all."""
        results: list[AppendResult | StoreError] = []
        partition = self.partition_of(stream)
        with self._lock:
            for expected, events, key in batches:
                if results and not written(results[-1]):
                    results.append(ConcurrencyConflict(stream, expected, self._version(stream)))
                    continue
                try:
                    results.append(self._append(stream, kind, expected, events, key, "", partition))
                except StoreError as error:
                    results.append(error)
            self._appended.notify_all()
        return results

    def recall(
        self, stream: str, idempotency_key: str, fingerprint: str = ""
    ) -> AppendResult | None:
        with self._lock:
            known = self._keys.get((stream, idempotency_key))
        if known is None:
            return None
        first, known_fingerprint = known
        if known_fingerprint and fingerprint and known_fingerprint != fingerprint:
            raise IdempotencyKeyReused(stream, idempotency_key)
        return AppendResult(first.first_version, first.last_version, replayed=True)

    def read(self, stream: str, after: int = 0, limit: int | None = None) -> list[RecordedEvent]:
        with self._lock:
            skipped = max(after - self._dropped.get(stream, 0), 0)
            events = self._streams.get(stream, [])[skipped:]
        return events if limit is None else events[:limit]

    def _version(self, stream: str) -> int:
        """Returns the version of `stream`; the caller holds the lock."""
        return self._dropped.get(stream, 0) + len(self._streams.get(stream, ()))

    def version(self, stream: str) -> int:
        with self._lock:
            return self._version(stream)

    def drop(self, stream: str) -> bool:
        with self._lock:
            entries = self._streams.pop(stream, [])
            if entries:
                self._dropped[stream] = entries[-1].version
            return bool(entries)

    @property
    def partitions(self) -> int:
        return self._partitions

    consumer = merged.consumer

    def partition_consumer(
        self, group: str, name: str, partition: int, claim_idle_ms: int = 30000
    ) -> FeedConsumer:
        return InMemoryFeedConsumer(self, group, name, claim_idle_ms, partition)

    def read_partition(self, partition: int, after: str = "0", count: int = 100) -> list[FeedEntry]:
        if count <= 0:
            return []
        start = position_key(after)[0]
        with self._lock:
            feed = self._feeds[partition]
            first = bisect.bisect_right(feed, start, key=lambda item: item[0])
            chunk = feed[first : first + count]
        return [FeedEntry(f"{n}-0", event, partition) for n, event in chunk]

    def partition_position(self, partition: int) -> str:
        with self._lock:
            feed = self._feeds[partition]
            return f"{feed[-1][0]}-0" if feed else self._trimmed[partition]

    def feed_clock(self) -> tuple[int, int]:
        with self._lock:
            return self._appended_count + 1, 0

    def trim_feed(self, older_than_ms: int) -> int:
        """Positions here count events, not ms: `older_than_ms` bounds the entries' recorded
        time instead."""
        removed = 0
        for partition in range(self._partitions):
            passed = _passed(self, partition)
            if passed is None:
                continue
            with self._lock:
                feed = self._feeds[partition]
                keep = 0
                while (
                    keep < len(feed)
                    and feed[keep][0] <= passed
                    and feed[keep][1].recorded_at < older_than_ms
                ):
                    keep += 1
                if keep:
                    self._trimmed[partition] = f"{feed[keep - 1][0]}-0"
                    del feed[:keep]
                    removed += keep
        return removed

    def feed_trimmed(self, partition: int) -> str:
        with self._lock:
            return self._trimmed[partition]

    def wait(
        self, stream: str, after: int, timeout_ms: int, limit: int | None = None
    ) -> list[RecordedEvent]:
        with self._appended:
            self._appended.wait_for(
                lambda: self._version(stream) > after, max(timeout_ms, 0) / 1000
            )
        return self.read(stream, after, limit)

    def wait_partition(
        self, partition: int, after: str, timeout_ms: int, count: int = 100
    ) -> list[FeedEntry]:
        start = position_key(after)[0]
        with self._appended:
            self._appended.wait_for(
                lambda: bool(self._feeds[partition]) and self._feeds[partition][-1][0] > start,
                max(timeout_ms, 0) / 1000,
            )
        return self.read_partition(partition, after, count)

    def wait_feed(self, after: str, timeout_ms: int, count: int = 100) -> list[FeedEntry]:
        positions = [position_key(p)[0] for p in cursor_positions(after, self._partitions)]

        def arrived() -> bool:
            return any(
                feed and feed[-1][0] > start
                for feed, start in zip(self._feeds, positions, strict=True)
            )

        with self._appended:
            self._appended.wait_for(arrived, max(timeout_ms, 0) / 1000)
        return self.read_feed(after, count)


@dataclass
class _Delivery:
    """A feed entry delivered to a member and not yet acknowledged."""

    entry: FeedEntry
    consumer: str
    since: float
    """When it was last delivered, in `time.monotonic()` seconds."""


@dataclass
class _Group:
    """The shared state of a consumer group: how far it has read, and what is pending."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    delivered: str = "0"
    pending: dict[str, _Delivery] = field(default_factory=dict)


_groups: weakref.WeakKeyDictionary[InMemoryEventStore, dict[tuple[str, int], _Group]] = (
    weakref.WeakKeyDictionary()
)
_groups_lock = threading.Lock()


class InMemoryFeedConsumer(FeedConsumer):
    """A member of a consumer group on one partition of an InMemoryEventStore's feed; groups
    are shared per store and partition."""

    _POLL_S = 0.005

    def __init__(
        self,
        store: InMemoryEventStore,
        group: str,
        consumer: str,
        claim_idle_ms: int = 30000,
        partition: int = 0,
    ) -> None:
        if not 0 <= partition < store.partitions:
            raise ValueError(f"the store has no partition {partition}")
        with _groups_lock:
            groups = _groups.setdefault(store, {})
            self._group = groups.setdefault((group, partition), _Group())
        self.partition = partition
        self._store = store
        self._consumer = consumer
        self._claim_idle_s = claim_idle_ms / 1000
        self._born = time.monotonic()
        """When this member object began: own pending entries delivered before are an
        earlier member's leftovers (`read_more`)."""

    def _take(self, count: int, leftovers_only: bool = False) -> list[FeedEntry]:
        """Returns own pending entries (with `leftovers_only`, only those delivered before
        this object began), then idle ones claimed from others, then new ones."""
        group, now = self._group, time.monotonic()
        with group.lock:
            mine = [
                d
                for d in group.pending.values()
                if d.consumer == self._consumer and not (leftovers_only and d.since >= self._born)
            ][:count]
            idle = [
                d
                for d in group.pending.values()
                if d.consumer != self._consumer and now - d.since >= self._claim_idle_s
            ][: count - len(mine)]
            for delivery in (*mine, *idle):
                delivery.consumer, delivery.since = self._consumer, now
            taken = [delivery.entry for delivery in (*mine, *idle)]
            if len(taken) < count:
                fresh = self._store.read_partition(
                    self.partition, group.delivered, count - len(taken)
                )
                if fresh:
                    group.delivered = fresh[-1].position
                for entry in fresh:
                    group.pending[entry.position] = _Delivery(entry, self._consumer, now)
                taken += fresh
        return taken

    def read(self, count: int = 100, block_ms: int = 0) -> list[FeedEntry]:
        deadline = time.monotonic() + block_ms / 1000
        while True:
            entries = self._take(count)
            remaining = deadline - time.monotonic()
            if entries or remaining <= 0:
                return entries
            time.sleep(min(self._POLL_S, remaining))

    def read_more(self, count: int = 100) -> list[FeedEntry]:
        return self._take(count, leftovers_only=True)

    def ack(self, positions: Sequence[str]) -> None:
        with self._group.lock:
            for position in positions:
                self._group.pending.pop(position, None)


def _passed(store: InMemoryEventStore, partition: int) -> int | None:
    """Returns the newest n of `partition` that every consumer group of it has passed
    (delivered and acknowledged), None when no group reads it."""
    with _groups_lock:
        groups = [g for (_, p), g in _groups.get(store, {}).items() if p == partition]
    if not groups:
        return None
    passed: list[int] = []
    for group in groups:
        with group.lock:
            delivered = position_key(group.delivered)[0]
            pending = [position_key(p)[0] for p in group.pending]
        passed.append(min(pending) - 1 if pending else delivered)
    return min(passed)
