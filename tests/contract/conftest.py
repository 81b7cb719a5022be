"""The event stores under the contract: memory (one and four partitions), Redis."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import pytest
import redis
from redis.cluster import RedisCluster

from shared.store.memory import InMemoryEventStore, InMemoryFeedConsumer
from shared.store.port import EventStore, FeedConsumer
from shared.store.redis_store import RedisEventStore, RedisFeedConsumer

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
    ]
)
def backend(request: pytest.FixtureRequest) -> Backend:
    """Returns each implementation in turn (the in-memory one with one and four partitions)."""
    if request.param == "memory":
        return _memory_backend()
    if request.param == "memory-partitioned":
        return _memory_backend(partitions=4)
    client: redis.Redis = request.getfixturevalue("redis_client")
    namespace: str = request.getfixturevalue("namespace")
    return _redis_backend(client, namespace)


@pytest.fixture
def store(backend: Backend) -> EventStore:
    """Returns the store under test."""
    return backend.store


@pytest.fixture
def make_consumer(backend: Backend) -> ConsumerFactory:
    """Returns the consumer factory of the store under test."""
    return backend.make_consumer
