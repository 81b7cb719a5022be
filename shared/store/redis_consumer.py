"""A member of a Redis consumer group on one partition's feed (`shared.store.redis_store`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import redis

from shared.store.port import FeedConsumer, FeedEntry
from shared.store.redis_common import (
    Client,
    Fields,
    feed_entry,
    feed_key,
    group_entries,
    position_text,
    reachable,
    refuse_decoding,
)


class RedisFeedConsumer(FeedConsumer):
    """A member of a Redis consumer group on one partition's feed; a new group starts at its
    beginning.

    A read takes, up to `count`: this member's own pending entries (only on its first read,
    and while a batch it read was not acked: a batch that failed is read again), entries
    other members left idle past `claim_idle_ms` (XAUTOCLAIM, at most every quarter of that,
    and on every read while a claim fills the batch), then new entries. So a steady read is
    one XREADGROUP and its ack one XACK.
    """

    def __init__(
        self,
        client: Client,
        group: str,
        consumer: str,
        namespace: str = "cardarena:",
        claim_idle_ms: int = 30000,
        partition: int = 0,
    ) -> None:
        refuse_decoding(client)
        self._client = client
        self._group = group
        self._consumer = consumer
        self.partition = partition
        self._feed = feed_key(namespace, partition)
        self._claim_idle_ms = claim_idle_ms
        self._claim_cursor: str | bytes = "0-0"
        self._grouped = False
        self._own_pending = True
        """Whether this member's own pending entries are to be read (first, or left over)."""
        self._leftover_cursor = "0"
        """Where `read_more` goes on paging the own pending entries an earlier member left."""
        self._handed_more = False
        """Whether `read_more` handed out entries that `read` has not read again yet."""
        self._unacked: set[str] = set()
        """The positions of the last read that were not acked yet."""
        self._next_claim = 0.0
        """When (time.monotonic) the next claim of idle entries is due."""

    def _create_group(self) -> None:
        """Creates the group at the start of the feed unless it exists."""
        try:
            self._client.xgroup_create(self._feed, self._group, id="0", mkstream=True)
        except redis.ResponseError as error:
            if not str(error).startswith("BUSYGROUP"):
                raise
        self._grouped = True
        self._claim_cursor = "0-0"
        self._own_pending = True
        self._leftover_cursor = "0"
        self._next_claim = 0.0

    def _read_group(
        self, start: str, count: int, block_ms: int | None
    ) -> list[tuple[bytes, Fields]]:
        """Reads up to `count` entries for this member from `start` (`0`: own pending, `>`: new)."""
        reply = self._client.xreadgroup(
            self._group, self._consumer, {self._feed: start}, count=count, block=block_ms
        )
        return group_entries(reply)

    def _claim(self, count: int) -> list[tuple[bytes, Fields]]:
        """Claims up to `count` entries that other members left idle longer than allowed."""
        reply = self._client.xautoclaim(
            self._feed,
            self._group,
            self._consumer,
            self._claim_idle_ms,
            start_id=self._claim_cursor,
            count=count,
        )
        self._claim_cursor = reply[0]
        entries: list[tuple[bytes, Fields]] = reply[1]
        return entries

    def _collect(self, count: int, block_ms: int) -> list[tuple[bytes, Fields]]:
        """Returns own pending entries (when due), then claimed ones (when due), then new
        ones, up to `count`."""
        entries: list[tuple[bytes, Fields]] = []
        if self._own_pending or self._unacked or self._handed_more:
            entries = self._read_group("0", count, None)
            self._own_pending = len(entries) >= count  # more may be left
            self._handed_more = self._handed_more and self._own_pending
        self._add_claimed(entries, count)
        if len(entries) < count:
            block = block_ms if block_ms > 0 and not entries else None
            entries += self._read_group(">", count - len(entries), block)
        self._unacked = {position_text(position) for position, _ in entries}
        return entries

    def _collect_more(self, count: int) -> list[tuple[bytes, Fields]]:
        """Returns the own pending entries an earlier member left (paged by a cursor, so none
        twice), then claimed ones (when due), then new ones, up to `count`."""
        entries: list[tuple[bytes, Fields]] = []
        if self._own_pending:
            entries = self._read_group(self._leftover_cursor, count, None)
            self._own_pending = len(entries) >= count
            if entries:
                self._leftover_cursor = position_text(entries[-1][0])
        self._add_claimed(entries, count)
        if len(entries) < count:
            entries += self._read_group(">", count - len(entries), None)
        return entries

    def _add_claimed(self, entries: list[tuple[bytes, Fields]], count: int) -> None:
        """Adds to `entries`, up to `count`, entries idle members left (when a claim is due)."""
        if len(entries) >= count or time.monotonic() < self._next_claim:
            return
        seen = {position for position, _ in entries}
        wanted = count - len(entries)
        claimed = self._claim(wanted)
        entries += [entry for entry in claimed if entry[0] not in seen]
        if len(claimed) < wanted:  # none left to claim now: look again in a while
            self._next_claim = time.monotonic() + self._claim_idle_ms / 4000

    def _fetch(self, collect: Callable[[], list[tuple[bytes, Fields]]]) -> list[FeedEntry]:
        """Runs `collect` (creating the group first, and again when it was lost), acks the
        entries the feed trimmed away meanwhile; returns the entries that are left."""
        with reachable():
            if not self._grouped:
                self._create_group()
            try:
                entries = collect()
            except redis.ResponseError as error:
                if not str(error).startswith("NOGROUP"):
                    raise
                self._create_group()
                entries = collect()
            trimmed = [position for position, fields in entries if not fields]
            if trimmed:
                self._client.xack(self._feed, self._group, *trimmed)
                self._unacked.difference_update(position_text(p) for p in trimmed)
        partition = self.partition
        return [feed_entry(position, fields, partition) for position, fields in entries if fields]

    def read(self, count: int = 100, block_ms: int = 0) -> list[FeedEntry]:
        return self._fetch(lambda: self._collect(count, block_ms))

    def read_more(self, count: int = 100) -> list[FeedEntry]:
        def collect() -> list[tuple[bytes, Fields]]:
            entries = self._collect_more(count)
            self._handed_more = self._handed_more or bool(entries)
            return entries

        return self._fetch(collect)

    def ack(self, positions: Sequence[str]) -> None:
        if positions:
            with reachable():
                self._client.xack(self._feed, self._group, *positions)
            self._unacked.difference_update(positions)
