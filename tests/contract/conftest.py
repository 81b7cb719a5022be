"""The event stores under the contract: memory (one and four partitions), Redis."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

import pytest
import redis
from redis.cluster import RedisCluster

from shared.store.memory import InMemoryEventStore, InMemoryFeedConsumer
from shared.store.port import EventStore, FeedConsumer
from shared.store.redis_consumer import RedisFeedConsumer
from shared.store.redis_store import RedisEventStore
from tests.support.redis_cluster import LocalCluster

GAME = "g-1"
"""The stream the consumers' tests append to: a consumer reads its partition."""


class ConsumerFactory(Protocol):
    """Makes a member `consumer` of the feed consumer group `group`."""

    def __call__(
        self, group: str, consumer: str, *, claim_idle_ms: int = 30000
    ) -> FeedConsumer: ...


@dataclass(frozen=True)
class Backend:
    """An event store and a way to make consumers of its feed."""

    store: EventStore
    make_consumer: ConsumerFactory


def _memory_backend(partitions: int = 1) -> Backend:
    """Returns a fresh in-memory store and its consumers (of GAME's partition)."""
    store = InMemoryEventStore(partitions)

    def make(group: str, consumer: str, *, claim_idle_ms: int = 30000) -> FeedConsumer:
        partition = store.partition_of(GAME)
        return InMemoryFeedConsumer(store, group, consumer, claim_idle_ms, partition)

    return Backend(store, make)


def _redis_backend(client: redis.Redis | RedisCluster, namespace: str) -> Backend:
    """Returns a Redis store (16 partitions) and consumers (of GAME's partition) under this
    test's own namespace."""
    store = RedisEventStore(client, namespace)

    def make(group: str, consumer: str, *, claim_idle_ms: int = 30000) -> FeedConsumer:
        partition = store.partition_of(GAME)
        return RedisFeedConsumer(client, group, consumer, namespace, claim_idle_ms, partition)

    return Backend(store, make)


@pytest.fixture(
    params=[
        "memory",
        "memory-partitioned",
        pytest.param("redis", marks=pytest.mark.integration),
        pytest.param("cluster", marks=[pytest.mark.integration, pytest.mark.cluster]),
    ]
)
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    """Returns each implementation in turn: in memory with one and four partitions, Redis,
    and a Redis Cluster of three primaries (this module's own)."""
    if request.param == "memory":
        yield _memory_backend()
    elif request.param == "memory-partitioned":
        yield _memory_backend(partitions=4)
    elif request.param == "redis":
        client: redis.Redis = request.getfixturevalue("redis_client")
        namespace: str = request.getfixturevalue("namespace")
        yield _redis_backend(client, namespace)
    else:
        cluster: LocalCluster = request.getfixturevalue("redis_cluster")
        clustered = cluster.client()
        prefix = f"test:{uuid.uuid4().hex[:12]}:"
        try:
            yield _redis_backend(clustered, prefix)
        finally:
            for primary in cluster.primaries():
                node = primary.client()
                keys = list(node.scan_iter(match=prefix + "*", count=1000))
                for key in keys:
                    node.delete(key)
                node.close()
            clustered.close()


@pytest.fixture
def store(backend: Backend) -> EventStore:
    """Returns the store under test."""
    return backend.store


@pytest.fixture
def make_consumer(backend: Backend) -> ConsumerFactory:
    """Returns the consumer factory of the store under test."""
    return backend.make_consumer
