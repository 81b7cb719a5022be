"""One consumer over several partitions' feeds, in one order that never changes.

The projection folds ratings and tournament views in feed order. With the feed split into
partitions, that order is the merge of the partitions by position (ties: game, version),
and a merge must not hand out an entry while an earlier one may still be appended to
another partition. So a read first takes the store's feed clock (`EventStore.feed_clock`:
every entry appended from then on is at or past it), reads every partition, and returns
only the entries before that clock, in merged order; the others stay unacknowledged and come
back at the next read (each partition's consumer delivers its unacknowledged entries again).
A projector that reads through this consumer therefore projects in exactly the order a
rebuild from the archive sorts by.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from shared.store.port import EventStore, FeedConsumer, FeedEntry, merge_key, position_key

_HELD_RETRIES = 20
"""How many times (a ms apart) a read that only held entries back at the clock reads again."""


class MergedFeedConsumer(FeedConsumer):
    """Members of one consumer group on several partitions (`consumers`, one a partition,
    each with its `partition`) of `store`, read as one consumer in merged order."""

    def __init__(self, store: EventStore, consumers: Sequence[FeedConsumer]) -> None:
        if not consumers:
            raise ValueError("a merged consumer needs at least one partition's consumer")
        self._store = store
        self._consumers = {getattr(c, "partition", 0): c for c in consumers}
        if len(self._consumers) != len(consumers):
            raise ValueError("two consumers of the same partition")
        self._held = False
        """Whether the last read held entries back at the feed clock."""
        self.watermark: tuple[int, int] | None = None
        """After a read that returned every entry of these partitions before the feed clock
        it took: that clock (everything below it was handed out); else None."""

    @property
    def partitions(self) -> list[int]:
        """Returns the partitions this consumer reads, in order."""
        return sorted(self._consumers)

    def read(self, count: int = 100, block_ms: int = 0) -> list[FeedEntry]:
        entries = self._read(count)
        for _ in range(_HELD_RETRIES):  # entries held at the clock are final a ms later
            if entries or not self._held:
                break
            time.sleep(0.001)
            entries = self._read(count)
        if entries or block_ms <= 0:
            return entries
        self._store.wait_feed(self._store.feed_position(), block_ms, count=1)
        return self._read(count)

    def _read(self, count: int) -> list[FeedEntry]:
        """Returns up to `count` entries before the feed clock, in merged order."""
        clock = self._store.feed_clock()
        read: list[FeedEntry] = []
        whole = True
        for consumer in self._consumers.values():
            page = consumer.read(count, 0)
            whole = whole and len(page) < count
            read += page
        final = sorted((e for e in read if position_key(e.position) < clock), key=merge_key)
        self._held = len(final) < len(read)
        self.watermark = clock if whole and len(final) <= count else None
        return final[:count]

    def ack(self, positions: Sequence[str]) -> None:
        """Acknowledges positions of a single-partition merge; use `ack_entries` otherwise
        (positions of different partitions may be equal)."""
        if len(self._consumers) != 1:
            raise TypeError("positions do not say their partition: use ack_entries")
        (consumer,) = self._consumers.values()
        consumer.ack(positions)

    def ack_entries(self, entries: Sequence[FeedEntry]) -> None:
        by_partition: dict[int, list[str]] = {}
        for entry in entries:
            by_partition.setdefault(entry.partition, []).append(entry.position)
        for partition, positions in by_partition.items():
            self._consumers[partition].ack(positions)


def consumer(
    store: EventStore,
    group: str,
    name: str,
    claim_idle_ms: int = 30000,
    partitions: Sequence[int] | None = None,
) -> MergedFeedConsumer:
    """Returns member `name` of consumer group `group` on `partitions` (default: every one)
    of `store`'s feed, one `partition_consumer` each, read as one (an adapter's
    `EventStore.consumer`)."""
    owned = range(store.partitions) if partitions is None else partitions
    members = [store.partition_consumer(group, name, p, claim_idle_ms) for p in owned]
    return MergedFeedConsumer(store, members)
