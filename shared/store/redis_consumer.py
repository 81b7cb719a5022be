"""A member of a Redis consumer group on one partition's feed (`shared.store.redis_store`)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import redis
from redis.cluster import RedisCluster

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
    streams_entries,
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
        if self._own_pending or self._unacked:
            entries = self._read_group("0", count, None)
            self._own_pending = len(entries) >= count  # more may be left
        if len(entries) < count and time.monotonic() >= self._next_claim:
            seen = {position for position, _ in entries}
            wanted = count - len(entries)
            claimed = self._claim(wanted)
            entries += [entry for entry in claimed if entry[0] not in seen]
            if len(claimed) < wanted:  # none left to claim now: look again in a while
                self._next_claim = time.monotonic() + self._claim_idle_ms / 4000
        if len(entries) < count:
            block = block_ms if block_ms > 0 and not entries else None
            entries += self._read_group(">", count - len(entries), block)
        return entries

    def read(self, count: int = 100, block_ms: int = 0) -> list[FeedEntry]:
        with reachable():
            if not self._grouped:
                self._create_group()
            try:
                entries = self._collect(count, block_ms)
            except redis.ResponseError as error:
                if not str(error).startswith("NOGROUP"):
                    raise
                self._create_group()
                entries = self._collect(count, block_ms)
            return self._delivered(entries)

    def _delivered(self, entries: list[tuple[bytes, Fields]]) -> list[FeedEntry]:
        """Returns the feed entries of a read's `entries`, once it set them unacked: those
        trimmed away meanwhile (no fields left) are acked, and left out."""
        self._unacked = {position_text(position) for position, _ in entries}
        trimmed = [position for position, fields in entries if not fields]
        if trimmed:
            self._client.xack(self._feed, self._group, *trimmed)
            self._unacked.difference_update(position_text(p) for p in trimmed)
        partition = self.partition
        return [feed_entry(position, fields, partition) for position, fields in entries if fields]

    def _steady(self, now: float) -> bool:
        """Returns whether this member's next read is just its new entries: its group
        made, nothing of its own pending or unacked, no claim due."""
        pending = self._own_pending or bool(self._unacked)
        return self._grouped and not pending and now < self._next_claim

    def _shares(self, other: FeedConsumer) -> bool:
        """Returns whether `other` is a member of this one's group, under its name, on this
        standalone Redis (so that one command can read or ack both)."""
        return (
            isinstance(other, RedisFeedConsumer)
            and other._client is self._client
            and other._group == self._group
            and other._consumer == self._consumer
            and not isinstance(self._client, RedisCluster)
        )

    def read_with(self, others: Sequence[FeedConsumer], count: int) -> list[list[FeedEntry]]:
        """Reads the new entries of every member in a steady state (see `_steady`) with one
        XREADGROUP over their partitions' feeds (a standalone Redis), each other member on
        its own; returns each member's page as `read(count)` does."""
        members = [self, *others]
        if count <= 0 or not all(self._shares(member) for member in others):
            return super().read_with(others, count)
        now = time.monotonic()
        steady = [m for m in members if isinstance(m, RedisFeedConsumer) and m._steady(now)]
        pages: dict[int, list[FeedEntry]] = {}
        if len(steady) > 1:
            streams: dict[Any, Any] = {member._feed: ">" for member in steady}
            try:
                with reachable():
                    reply = self._client.xreadgroup(
                        self._group, self._consumer, streams, count=count
                    )
                    read = streams_entries(reply)
                    for member in steady:
                        pages[id(member)] = member._delivered(read.get(member._feed, []))
            except redis.ResponseError as error:
                if not str(error).startswith("NOGROUP"):
                    raise
                pages.clear()  # a feed lost its group: each member reads (and makes it) alone
        return [pages[id(m)] if id(m) in pages else m.read(count, 0) for m in members]

    def ack(self, positions: Sequence[str]) -> None:
        if positions:
            with reachable():
                self._client.xack(self._feed, self._group, *positions)
            self._unacked.difference_update(positions)

    def ack_with(self, acks: Sequence[tuple[FeedConsumer, Sequence[str]]]) -> None:
        """Acks every member's positions in one pipeline (a standalone Redis)."""
        wanted = [(member, positions) for member, positions in acks if positions]
        if len(wanted) < 2 or not all(self._shares(member) for member, _ in wanted):
            super().ack_with(acks)
            return
        with reachable():
            pipe = self._client.pipeline(transaction=False)
            for member, positions in wanted:
                assert isinstance(member, RedisFeedConsumer)
                pipe.xack(member._feed, member._group, *positions)
            pipe.execute()
        for member, positions in wanted:
            assert isinstance(member, RedisFeedConsumer)
            member._unacked.difference_update(positions)
