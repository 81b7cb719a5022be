"""One consumer over several partitions' feeds, in one order that never changes.

The projection folds ratings and tournament views in feed order. With the feed split into
partitions, that order is the merge of the partitions by position (ties: game, version),
and a merge must not hand out an entry while an earlier one may still be appended to
another partition. So a read first takes the store's feed clock (`EventStore.feed_clock`:
every entry appended from then on is at or past it), tops up what it holds of each
partition with the entries that partition's member has not handed out yet
(`FeedConsumer.read_more`), and returns, in merged order, only entries below a bound it knows
to be complete: below the clock, and not past the last entry held of a partition whose
read was full (more of it may follow). The rest stays held in memory (and unacknowledged in
the store, so a restart reads it again) for the next read: each entry is read from the store
once however far the partitions' backlogs differ. Entries handed out and not acknowledged
come first again at the next read. A projector that reads through this consumer therefore
projects in exactly the order a rebuild from the archive sorts by.
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections.abc import Sequence

from shared.store.port import EventStore, FeedConsumer, FeedEntry, merge_key

_HELD_RETRIES = 20
"""How many times (a ms apart) a read that only held entries back at the clock reads again."""

Held = tuple[tuple[int, int, str, int], FeedEntry]
"""An entry held by the merged consumer, with its merge key."""


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
        self._buffers: dict[int, list[Held]] = {p: [] for p in self._consumers}
        """Each partition's entries read from the store and not handed out, in position
        order."""
        self._handed: list[Held] = []
        """The entries handed out and not acknowledged yet."""
        self._held = False
        """Whether the last read held entries back at the feed clock."""
        self.watermark: tuple[int, int] | None = None
        """After a read: the key below which every entry of these partitions has been handed
        out (None before the first read). It never goes back: an entry claimed late from a
        dead member may lie below it (the projection refolds for such entries)."""

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

    def read_more(self, count: int = 100) -> list[FeedEntry]:
        """Returns up to `count` entries in merged order, the ones handed out before and not
        acknowledged included (a merged consumer keeps what it read: see the module)."""
        return self._read(count)

    def _read(self, count: int) -> list[FeedEntry]:
        """Returns up to `count` entries below the bound, in merged order."""
        self._give_back()
        clock = self._store.feed_clock()
        bound = clock
        for partition, consumer in self._consumers.items():
            held = self._buffers[partition]
            wanted = count - len(held)
            full = wanted <= 0
            if not full:
                page = consumer.read_more(wanted)
                full = len(page) >= wanted
                self._hold(partition, [(merge_key(entry), entry) for entry in page])
                held = self._buffers[partition]
            if full and held:
                ms, seq = held[-1][0][:2]
                bound = min(bound, (ms, seq + 1))
        below = [self._below(held, bound) for held in self._buffers.values()]
        taken = list(itertools.islice(heapq.merge(*below, key=_key), count))
        handed: dict[int, int] = {}
        for _, entry in taken:
            handed[entry.partition] = handed.get(entry.partition, 0) + 1
        for partition, n in handed.items():
            del self._buffers[partition][:n]
        self._handed = taken
        firsts = [held[0][0][:2] for held in self._buffers.values() if held]
        left = min(firsts, default=bound)
        self._held = not taken and left >= clock and any(self._buffers.values())
        self.watermark = max(self.watermark or left, min(left, bound))
        return [entry for _, entry in taken]

    @staticmethod
    def _below(held: list[Held], bound: tuple[int, int]) -> list[Held]:
        """Returns the prefix of `held` below `bound`."""
        for n, (key, _) in enumerate(held):
            if key[:2] >= bound:
                return held[:n]
        return held

    def _hold(self, partition: int, added: list[Held]) -> None:
        """Adds entries of `partition` (a read, with their keys) to what is held of it: in
        position order, once each (a claimed entry may be older than what is held, or held
        already)."""
        if not added:
            return
        held = self._buffers[partition]
        ordered = all(a[0] < b[0] for a, b in itertools.pairwise(added))
        if ordered and (not held or held[-1][0] < added[0][0]):
            held += added
            return
        by_position = {entry.position: (key, entry) for key, entry in (*held, *added)}
        self._buffers[partition] = sorted(by_position.values(), key=_key)

    def _give_back(self) -> None:
        """Puts the entries handed out and not acknowledged back in front of what is held."""
        if not self._handed:
            return
        by_partition: dict[int, list[Held]] = {}
        for item in self._handed:
            by_partition.setdefault(item[1].partition, []).append(item)
        self._handed = []
        for partition, items in by_partition.items():
            held = self._buffers[partition]
            self._buffers[partition] = []
            self._hold(partition, [*items, *held])

    def ack(self, positions: Sequence[str]) -> None:
        """Acknowledges positions of a single-partition merge; use `ack_entries` otherwise
        (positions of different partitions may be equal)."""
        if len(self._consumers) != 1:
            raise TypeError("positions do not say their partition: use ack_entries")
        ((partition, consumer),) = self._consumers.items()
        consumer.ack(positions)
        self._forget({(partition, position) for position in positions})

    def ack_entries(self, entries: Sequence[FeedEntry]) -> None:
        by_partition: dict[int, list[str]] = {}
        for entry in entries:
            by_partition.setdefault(entry.partition, []).append(entry.position)
        for partition, positions in by_partition.items():
            self._consumers[partition].ack(positions)
        self._forget({(entry.partition, entry.position) for entry in entries})

    def _forget(self, acked: set[tuple[int, str]]) -> None:
        """Drops acknowledged entries from those handed out."""
        self._handed = [h for h in self._handed if (h[1].partition, h[1].position) not in acked]


def _key(item: Held) -> tuple[int, int, str, int]:
    """Returns the merge key of a held entry."""
    return item[0]


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
