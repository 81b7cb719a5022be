"""Behaviours of the Redis event store beyond the contract: key layout, recovery, failures."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from typing import Any, cast

import pytest
import redis
from redis.backoff import NoBackoff
from redis.crc import key_slot
from redis.retry import Retry

from shared.messages.envelope import NewEvent
from shared.store.port import AppendResult, StoreUnavailable, partition_of
from shared.store.redis_common import feed_key, stream_key
from shared.store.redis_consumer import RedisFeedConsumer
from shared.store.redis_store import RedisEventStore

GAME = "g-1"
KIND = "shithead"
PARTITION = partition_of(GAME, 16)
"""GAME's partition in a store of the default 16: the consumers here read it."""


def event(label: str) -> NewEvent:
    """Returns an event whose payload is `label`."""
    return NewEvent("CardPlayed", label.encode())


def raw_range(client: redis.Redis, key: str) -> list[tuple[bytes, dict[bytes, bytes]]]:
    """Returns every entry of the stream `key` as Redis holds it."""
    return cast("list[tuple[bytes, dict[bytes, bytes]]]", client.xrange(key))


@pytest.fixture
def store(redis_client: redis.Redis, namespace: str) -> RedisEventStore:
    """Returns a store under this test's own namespace."""
    return RedisEventStore(redis_client, namespace, idempotency_ttl_s=60)


def test_a_game_lives_in_hash_tagged_keys_with_entry_ids_zero_dash_version(
    store: RedisEventStore, redis_client: redis.Redis, namespace: str
) -> None:
    store.append(GAME, KIND, 0, [event("a"), event("b")], idempotency_key="k", fingerprint="f")

    stream = f"{namespace}{{p{PARTITION}}}:game:{GAME}"
    assert stream == stream_key(namespace, PARTITION, GAME)
    entries = raw_range(redis_client, stream)
    assert [entry_id for entry_id, _ in entries] == [b"0-1", b"0-2"]
    assert set(entries[0][1]) == {b"v", b"type", b"data", b"s", b"k", b"at"}
    assert redis_client.get(f"{stream}:version") == b"2"
    assert 0 < redis_client.ttl(f"{stream}:idem:k") <= 60
    (_, feed_fields), *_ = raw_range(redis_client, f"{namespace}{{p{PARTITION}}}:feed")
    assert feed_fields[b"g"] == GAME.encode()
    assert feed_fields[b"k"] == KIND.encode()
    assert redis_client.get(f"{namespace}layout") == b"partitioned 16"
    keys = (stream, f"{stream}:version", f"{stream}:idem:k", f"{namespace}{{p{PARTITION}}}:feed")
    assert len({key_slot(key.encode()) for key in keys}) == 1  # one slot: one node's append


def test_the_append_function_is_reloaded_after_a_function_flush(
    store: RedisEventStore, redis_client: redis.Redis
) -> None:
    store.append(GAME, KIND, 0, [event("a")])
    redis_client.function_flush()

    assert store.append(GAME, KIND, 1, [event("b")]) == AppendResult(2, 2)
    redis_client.function_flush()
    assert store.append_batches(GAME, KIND, [(2, [event("c")], None), (3, [event("d")], None)]) == [
        AppendResult(3, 3),
        AppendResult(4, 4),
    ]
    assert [e.data for e in store.read(GAME)] == [b"a", b"b", b"c", b"d"]


def test_a_consumer_recreates_its_group_when_the_feed_was_lost(
    store: RedisEventStore, redis_client: redis.Redis, namespace: str
) -> None:
    consumer = RedisFeedConsumer(redis_client, "projection", "a", namespace, partition=PARTITION)
    store.append(GAME, KIND, 0, [event("a")])
    consumer.ack([entry.position for entry in consumer.read()])
    redis_client.delete(feed_key(namespace, PARTITION))
    store.append(GAME, KIND, 1, [event("b")])

    assert [entry.event.data for entry in consumer.read()] == [b"b"]


def test_a_resp3_client_appends_reads_and_consumes(redis_url: str, namespace: str) -> None:
    client = redis.Redis.from_url(redis_url, protocol=3)
    try:
        store = RedisEventStore(client, namespace)
        consumer = RedisFeedConsumer(client, "projection", "a", namespace, partition=PARTITION)
        store.append(GAME, KIND, 0, [event("a"), event("b")])

        taken = consumer.read(count=1)
        assert [e.event.data for e in consumer.read()] == [b"a", b"b"]
        consumer.ack([e.position for e in taken])
        assert [e.event.data for e in consumer.read()] == [b"b"]
        assert [e.data for e in store.read(GAME)] == [b"a", b"b"]
    finally:
        client.close()


def test_a_client_that_decodes_responses_is_refused(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        with pytest.raises(ValueError, match="decode_responses"):
            RedisEventStore(client)
        with pytest.raises(ValueError, match="decode_responses"):
            RedisFeedConsumer(client, "projection", "a")
    finally:
        client.close()


@pytest.fixture
def absent_redis() -> Iterator[redis.Redis]:
    """Returns a client, without retries, of a port on 127.0.0.1 where nothing listens."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = redis.Redis(
        host="127.0.0.1", port=port, socket_connect_timeout=1, retry=Retry(NoBackoff(), 0)
    )
    yield client
    client.close()


CALLS: dict[str, Callable[[RedisEventStore, RedisFeedConsumer], object]] = {
    "append": lambda store, _: store.append(GAME, KIND, 0, [event("a")]),
    "append_batches": lambda store, _: store.append_batches(GAME, KIND, [(0, [event("a")], None)]),
    "recall": lambda store, _: store.recall(GAME, "k"),
    "read": lambda store, _: store.read(GAME),
    "version": lambda store, _: store.version(GAME),
    "read_feed": lambda store, _: store.read_feed(),
    "consumer read": lambda _, consumer: consumer.read(),
    "consumer ack": lambda _, consumer: consumer.ack(["1-0"]),
}


@pytest.mark.parametrize("call", CALLS.values(), ids=CALLS.keys())
def test_a_redis_that_is_not_there_raises_store_unavailable(
    absent_redis: redis.Redis, call: Callable[[RedisEventStore, RedisFeedConsumer], object]
) -> None:
    store = RedisEventStore(absent_redis)
    consumer = RedisFeedConsumer(absent_redis, "projection", "a")

    with pytest.raises(StoreUnavailable):
        call(store, consumer)


class CountingRedis(redis.Redis):
    """A Redis client that records the name of every command it sends."""

    def __init__(self, url: str) -> None:
        super().__init__(connection_pool=redis.ConnectionPool.from_url(url))
        self.sent: list[str] = []

    def execute_command(self, *args: Any, **options: Any) -> Any:
        self.sent.append(str(args[0]).upper())
        return super().execute_command(*args, **options)  # type: ignore[no-untyped-call]


def test_a_steady_read_is_one_xreadgroup_and_its_ack_one_xack(
    redis_url: str, namespace: str
) -> None:
    client = CountingRedis(redis_url)
    store = RedisEventStore(client, namespace)
    consumer = RedisFeedConsumer(client, "projection", "a", namespace, partition=PARTITION)
    store.append(GAME, KIND, 0, [event("a")])
    first = consumer.read()  # the first: own pending, a claim, new entries
    assert {"XREADGROUP", "XAUTOCLAIM"} <= set(client.sent)
    consumer.ack([entry.position for entry in first])
    store.append(GAME, KIND, 1, [event("b")])
    client.sent.clear()

    taken = consumer.read()
    consumer.ack([entry.position for entry in taken])

    assert [entry.event.data for entry in taken] == [b"b"]
    assert client.sent == ["XREADGROUP", "XACK"]
    client.close()


def test_a_batch_that_was_not_acked_is_read_again_before_new_entries(
    store: RedisEventStore, redis_client: redis.Redis, namespace: str
) -> None:
    consumer = RedisFeedConsumer(redis_client, "projection", "a", namespace, partition=PARTITION)
    store.append(GAME, KIND, 0, [event("a"), event("b")])
    failed = consumer.read()  # projecting it fails: no ack
    store.append(GAME, KIND, 2, [event("c")])

    again = consumer.read(count=2)
    assert [entry.position for entry in again] == [entry.position for entry in failed]
    consumer.ack([again[0].position])  # half of it: the rest comes again first
    rest = consumer.read(count=2)
    assert [entry.event.data for entry in rest] == [b"b", b"c"]
    consumer.ack([entry.position for entry in rest])
    assert consumer.read() == []
