"""The partitioned feed: a stream's partition, cursors over every partition, the feed clock
and the merged consumer; run against every EventStore of `test_event_store`."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import pytest

from shared.store.memory import InMemoryEventStore, InMemoryFeedConsumer
from shared.store.merged import MergedFeedConsumer
from shared.store.port import (
    EventStore,
    FeedConsumer,
    FeedEntry,
    InvalidCursor,
    cursor_positions,
    merge_key,
    own_position,
    partition_of,
    position_key,
)
from tests.support.stores import KIND, Backend, events

FAR_FUTURE_MS = 2**62
"""A time after every append: trims all that the groups passed."""

STREAMS = [f"s-{n}" for n in range(40)]
"""Enough streams to reach every partition of a 16-partition store (checked below)."""


def append_round(store: EventStore, streams: list[str], label: str) -> None:
    """Appends one event labelled `label` to each stream (at its current version)."""
    for stream in streams:
        store.append(stream, KIND, store.version(stream), events(f"{stream}:{label}"))


def per_stream(entries: list[FeedEntry]) -> dict[str, list[int]]:
    """Returns the versions of each stream's entries, in the order of `entries`."""
    found: dict[str, list[int]] = {}
    for entry in entries:
        found.setdefault(entry.event.game_id, []).append(entry.event.version)
    return found


def test_the_partition_of_a_stream_is_a_stable_hash() -> None:
    assert [partition_of(s, 16) for s in ("g-1", "registry", "tournament:t1")] == [2, 10, 11]
    assert {partition_of(s, 16) for s in STREAMS} == set(range(16))
    assert {partition_of(s, 1) for s in STREAMS} == {0}


def test_a_streams_events_go_to_its_partitions_feed_only(store: EventStore) -> None:
    append_round(store, STREAMS, "a")

    for partition in range(store.partitions):
        entries = store.read_partition(partition, count=1000)
        assert {e.event.game_id for e in entries} == {
            s for s in STREAMS if store.partition_of(s) == partition
        }
        assert all(e.partition == partition for e in entries)
        keys = [position_key(e.position) for e in entries]
        assert keys == sorted(keys)
        assert len(set(keys)) == len(keys)
        last = entries[-1].position if entries else "0"
        assert store.partition_position(partition) == last


def test_paging_the_feed_by_cursor_returns_every_entry_once_each_stream_in_order(
    store: EventStore,
) -> None:
    for label in "abc":
        append_round(store, STREAMS, label)

    seen: list[FeedEntry] = []
    cursor = "0"
    while page := store.read_feed(cursor, count=7):
        seen += page
        cursor = page[-1].position
    assert store.read_feed(cursor) == []
    assert cursor == store.feed_position()

    assert len(seen) == 3 * len(STREAMS)
    assert per_stream(seen) == {s: [1, 2, 3] for s in STREAMS}
    assert [merge_key(FeedEntry(own_position(e), e.event)) for e in seen] == sorted(
        merge_key(FeedEntry(own_position(e), e.event)) for e in seen
    )


def test_a_cursor_resumes_after_its_entry_in_every_partition(store: EventStore) -> None:
    append_round(store, STREAMS, "a")
    middle = store.read_feed(count=len(STREAMS) // 2)[-1].position
    append_round(store, STREAMS, "b")

    rest = store.read_feed(middle, count=1000)

    before = store.read_feed(count=len(STREAMS) // 2)
    assert len(before) + len(rest) == 2 * len(STREAMS)
    assert not {(e.event.game_id, e.event.version) for e in before} & {
        (e.event.game_id, e.event.version) for e in rest
    }


def test_a_cursor_of_another_partition_count_is_refused(store: EventStore) -> None:
    other = ",".join(["0"] * (store.partitions + 1))
    with pytest.raises(InvalidCursor):
        store.read_feed(other)
    with pytest.raises(InvalidCursor):
        cursor_positions("not-a-position", 1)
    assert cursor_positions("0", store.partitions) == ["0"] * store.partitions


def test_waiting_on_the_feed_wakes_for_an_append_to_any_partition(store: EventStore) -> None:
    append_round(store, STREAMS[:1], "a")
    cursor = store.feed_position()
    others = [s for s in STREAMS if store.partition_of(s) != store.partition_of(STREAMS[0])]
    late = others[0] if others else STREAMS[1]
    timer = threading.Timer(0.2, lambda: store.append(late, KIND, 0, events("late")))
    timer.start()

    waited = store.wait_feed(cursor, 8000)
    timer.join()

    assert [(e.event.game_id, e.event.data) for e in waited] == [(late, b"late")]
    assert waited[-1].position == store.feed_position()


def test_the_feed_clock_is_passed_by_every_later_entry(store: EventStore) -> None:
    append_round(store, STREAMS, "a")
    time.sleep(0.002)  # the Redis clock is in ms: later entries are in a later ms
    clock = store.feed_clock()
    append_round(store, STREAMS, "b")

    entries = store.read_feed(count=1000)
    for entry in entries:
        key = position_key(own_position(entry))
        assert (key < clock) == entry.event.data.endswith(b":a"), entry


def test_the_merged_consumer_returns_every_partition_in_merge_order_once(
    backend: Backend,
) -> None:
    store = backend.store
    consumers = [partition_consumer(backend, "projection", "m", p) for p in range(store.partitions)]
    merged = MergedFeedConsumer(store, consumers)
    taken: list[FeedEntry] = []
    for label in "abcd":
        append_round(store, STREAMS, label)
        time.sleep(0.002)
        while batch := merged.read(count=25):
            assert [merge_key(e) for e in batch] == sorted(merge_key(e) for e in batch)
            taken += batch
            merged.ack_entries(batch)

    assert per_stream(taken) == {s: [1, 2, 3, 4] for s in STREAMS}
    keys = [merge_key(e) for e in taken]
    assert keys == sorted(keys)  # across batches too: the order never goes back


def test_the_merged_consumer_holds_what_is_not_final_and_redelivers_what_is_unacked() -> None:
    store = InMemoryEventStore(partitions=4)
    consumers = [InMemoryFeedConsumer(store, "g", "m", partition=p) for p in range(4)]
    merged = MergedFeedConsumer(store, consumers)
    append_round(store, STREAMS[:8], "a")

    first = merged.read(count=5)
    again = merged.read(count=5)

    assert again == first  # not acked: the same entries, in the same order
    merged.ack_entries(first)
    rest = merged.read(count=100)
    assert len(first) + len(rest) == 8
    with pytest.raises(TypeError):
        merged.ack([e.position for e in rest])
    merged.ack_entries(rest)
    assert merged.read(count=100) == []


class Counting(FeedConsumer):
    """A partition's consumer that counts the entries its reads return."""

    def __init__(self, inner: FeedConsumer) -> None:
        self.inner = inner
        self.partition = getattr(inner, "partition", 0)
        self.returned = 0

    def read(self, count: int = 100, block_ms: int = 0) -> list[FeedEntry]:
        found = self.inner.read(count, block_ms)
        self.returned += len(found)
        return found

    def read_more(self, count: int = 100) -> list[FeedEntry]:
        found = self.inner.read_more(count)
        self.returned += len(found)
        return found

    def ack(self, positions: Sequence[str]) -> None:
        self.inner.ack(positions)


def test_the_merged_consumer_reads_each_entry_from_the_store_once_through_a_backlog(
    backend: Backend,
) -> None:
    store = backend.store
    for label in "abcdef":
        append_round(store, STREAMS, label)
    time.sleep(0.002)
    consumers = [
        Counting(partition_consumer(backend, "projection", "m", p)) for p in range(store.partitions)
    ]
    merged = MergedFeedConsumer(store, consumers)
    taken: list[FeedEntry] = []

    while batch := merged.read(count=20):  # far fewer a batch than the backlog of each partition
        taken += batch
        merged.ack_entries(batch)

    assert per_stream(taken) == {s: [1, 2, 3, 4, 5, 6] for s in STREAMS}
    assert sum(c.returned for c in consumers) == len(taken) == 6 * len(STREAMS)
    keys = [merge_key(e) for e in taken]
    assert keys == sorted(keys)


def test_the_merged_consumer_hands_unacked_entries_first_again_in_order_beside_new_ones() -> None:
    store = InMemoryEventStore(partitions=4)
    merged = MergedFeedConsumer(
        store, [InMemoryFeedConsumer(store, "g", "m", partition=p) for p in range(4)]
    )
    append_round(store, STREAMS[:8], "a")
    first = merged.read(count=3)
    merged.ack_entries(first[:1])
    append_round(store, STREAMS[:8], "b")
    time.sleep(0.002)

    again = merged.read(count=100)

    assert again[:2] == first[1:]
    assert len(again) == 15
    keys = [merge_key(e) for e in again]
    assert keys == sorted(keys)


def partition_consumer(backend: Backend, group: str, name: str, partition: int) -> FeedConsumer:
    """Returns a consumer of `partition` of the backend's store (memory or Redis)."""
    return backend.store.partition_consumer(group, name, partition)


def test_the_feed_is_trimmed_only_where_every_group_has_passed(backend: Backend) -> None:
    store = backend.store
    append_round(store, STREAMS, "a")
    assert store.trim_feed(FAR_FUTURE_MS) == 0  # no group reads it yet: kept whole
    projection = [
        partition_consumer(backend, "projection", "p", p) for p in range(store.partitions)
    ]
    archive = [partition_consumer(backend, "archive", "a", p) for p in range(store.partitions)]
    projected, archived = MergedFeedConsumer(store, projection), MergedFeedConsumer(store, archive)
    taken = read_all(projected, ack=False)
    held = read_all(archived, ack=False)
    assert len(taken) == len(held) == len(STREAMS)
    projected.ack_entries(taken[:10])
    assert store.trim_feed(FAR_FUTURE_MS) == 0  # the archive group holds every entry

    archived.ack_entries(held)
    removed = store.trim_feed(FAR_FUTURE_MS)

    left = store.read_feed(count=1000)
    assert removed == 10
    assert {(e.event.game_id, e.event.version) for e in left} == {
        (e.event.game_id, e.event.version) for e in taken[10:]
    }
    for partition in range(store.partitions):
        firsts = [own_position(e) for e in left if e.partition == partition]
        trimmed = store.feed_trimmed(partition)
        if firsts and trimmed != "0":
            assert position_key(trimmed) < position_key(firsts[0])
    assert any(store.feed_trimmed(p) != "0" for p in range(store.partitions))


def test_the_feed_keeps_what_is_younger_than_the_retention(backend: Backend) -> None:
    store = backend.store
    append_round(store, STREAMS, "a")
    consumers = [partition_consumer(backend, "g", "c", p) for p in range(store.partitions)]
    assert len(read_all(MergedFeedConsumer(store, consumers))) == len(STREAMS)

    assert store.trim_feed(0) == 0  # everything was appended after the epoch
    assert len(store.read_feed(count=1000)) == len(STREAMS)
    assert all(store.feed_trimmed(p) == "0" for p in range(store.partitions))
    assert store.trim_feed(FAR_FUTURE_MS) == len(STREAMS)
    assert store.read_feed(count=1000) == []


def read_all(consumer: MergedFeedConsumer, *, ack: bool = True) -> list[FeedEntry]:
    """Returns every entry `consumer` has (acknowledged unless `ack` is false), reading until
    the feed clock passed the last one (a bounded wait: a few ms)."""
    taken: list[FeedEntry] = []
    seen: set[tuple[str, int]] = set()
    for _ in range(500):
        batch = [
            e for e in consumer.read(count=1000) if (e.event.game_id, e.event.version) not in seen
        ]
        taken += batch
        seen |= {(e.event.game_id, e.event.version) for e in batch}
        if ack:
            consumer.ack_entries(batch)
        if len(taken) >= len(STREAMS):
            return taken
        time.sleep(0.002)
    raise AssertionError(f"only {len(taken)} entries came")
