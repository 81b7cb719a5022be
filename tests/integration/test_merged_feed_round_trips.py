"""The merged feed consumer over a standalone Redis: the partitions in a steady state are read
with one XREADGROUP and acked in one pipeline, with the same entries, order and redelivery as
a read of each partition on its own."""

from __future__ import annotations

import time
from typing import Any

import pytest
import redis

from shared.messages.envelope import NewEvent
from shared.store.merged import MergedFeedConsumer
from shared.store.port import FeedEntry, merge_key, partition_of
from shared.store.redis_common import feed_key
from shared.store.redis_store import RedisEventStore

pytestmark = pytest.mark.integration

PARTITIONS = 4
GAMES = [f"g-{n}" for n in range(12)]


class CountingRedis(redis.Redis):
    """A Redis client that records the name of every command it sends alone, and of every
    pipeline it executes (`PIPELINE:` and its commands)."""

    def __init__(self, url: str) -> None:
        super().__init__(connection_pool=redis.ConnectionPool.from_url(url))
        self.sent: list[str] = []

    def execute_command(self, *args: Any, **options: Any) -> Any:
        self.sent.append(str(args[0]).upper())
        return super().execute_command(*args, **options)  # type: ignore[no-untyped-call]

    def pipeline(self, transaction: bool = True, shard_hint: Any = None) -> Any:
        pipe = super().pipeline(transaction, shard_hint)
        execute = pipe.execute
        sent = self.sent

        def counted(raise_on_error: bool = True) -> Any:
            names = sorted({str(args[0]).upper() for args, _ in pipe.command_stack})
            sent.append("PIPELINE:" + ",".join(names))
            return execute(raise_on_error)

        pipe.execute = counted  # type: ignore[method-assign]
        return pipe


@pytest.fixture
def client(redis_url: str) -> Any:
    """Returns a counting client (closed afterwards)."""
    counting = CountingRedis(redis_url)
    yield counting
    counting.close()


def append_round(store: RedisEventStore, label: str) -> None:
    """Appends one event to every game (each at its next version), then lets the feed clock
    pass them (a read holds back what is appended in the millisecond it reads in)."""
    for game in GAMES:
        store.append(game, "shithead", store.version(game), [NewEvent("E", label.encode())])
    time.sleep(0.005)


def drain(consumer: MergedFeedConsumer) -> list[FeedEntry]:
    """Reads and acks until a read returns nothing; returns what it read, in order."""
    taken: list[FeedEntry] = []
    while batch := consumer.read(count=100):
        consumer.ack_entries(batch)
        taken += batch
    return taken


def test_a_steady_merged_read_is_one_xreadgroup_and_its_ack_one_pipeline(
    client: CountingRedis, namespace: str
) -> None:
    store = RedisEventStore(client, namespace, partitions=PARTITIONS)
    consumer = store.consumer("projection", "p-0")
    append_round(store, "a")
    first = drain(consumer)  # the first reads: own pending, claims, new entries, each alone
    assert len(first) == len(GAMES)
    append_round(store, "b")
    client.sent.clear()

    batch = consumer.read(count=100)
    consumer.ack_entries(batch)

    assert [entry.event.data for entry in batch] == [b"b"] * len(GAMES)
    assert client.sent == ["TIME", "XREADGROUP", "PIPELINE:XACK"]
    for partition in range(PARTITIONS):
        pending = client.xpending(feed_key(namespace, partition), "projection")
        assert pending["pending"] == 0


def test_batched_reads_hand_out_every_entry_once_in_merge_order(
    client: CountingRedis, namespace: str
) -> None:
    store = RedisEventStore(client, namespace, partitions=PARTITIONS)
    consumer = store.consumer("projection", "p-0")
    taken: list[FeedEntry] = []
    for label in "abcdef":
        append_round(store, label)
        taken += drain(consumer)

    assert len({(e.partition, e.position) for e in taken}) == len(taken) == 6 * len(GAMES)
    assert [merge_key(e) for e in taken] == sorted(merge_key(e) for e in taken)
    for game in GAMES:
        mine = [e for e in taken if e.event.game_id == game]
        assert [e.event.version for e in mine] == list(range(1, 7))
        assert {e.partition for e in mine} == {partition_of(game, PARTITIONS)}


def test_a_batch_not_acked_comes_again_first_while_the_other_partitions_read_on(
    client: CountingRedis, namespace: str
) -> None:
    store = RedisEventStore(client, namespace, partitions=PARTITIONS)
    consumer = store.consumer("projection", "p-0")
    append_round(store, "a")
    drain(consumer)
    append_round(store, "b")
    failed = consumer.read(count=100)  # projecting it fails: no ack
    append_round(store, "c")

    again = consumer.read(count=100)

    assert [(e.partition, e.position) for e in again[: len(failed)]] == [
        (e.partition, e.position) for e in failed
    ]
    consumer.ack_entries(again)
    assert sorted(e.event.data for e in again) == [b"b"] * len(GAMES) + [b"c"] * len(GAMES)
    assert drain(consumer) == []


def test_a_feed_that_lost_its_group_is_read_again_alone_and_nothing_is_lost(
    client: CountingRedis, namespace: str
) -> None:
    store = RedisEventStore(client, namespace, partitions=PARTITIONS)
    consumer = store.consumer("projection", "p-0")
    append_round(store, "a")
    drain(consumer)
    lost = partition_of(GAMES[0], PARTITIONS)
    client.xgroup_destroy(feed_key(namespace, lost), "projection")
    append_round(store, "b")

    taken = drain(consumer)

    # the group is made again at the feed's start: that partition's entries come again
    assert sorted(e.event.data for e in taken if e.partition != lost) == [b"b"] * sum(
        partition_of(game, PARTITIONS) != lost for game in GAMES
    )
    again = sorted(e.event.data for e in taken if e.partition == lost)
    assert again.count(b"b") == again.count(b"a") > 0
