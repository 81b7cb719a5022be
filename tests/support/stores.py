"""The stores a contract suite runs against, chosen by parameter: the event store's backends
(memory, Redis, Redis Cluster; `Backend`), and the Redis Cluster backend of the suites of the
Redis adapters beside the event store (rate limiter, game slots, outbox, deal secret): a cluster
client of the module's own cluster (`redis_cluster`) and a namespace of the test's own, whose
keys are deleted from every primary afterwards."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import pytest
import redis
from redis.cluster import RedisCluster

from services.ops.migrate import migrate
from services.projection.projector import Projector
from services.projection.views import PostgresTournamentViews
from shared.messages.envelope import NewEvent
from shared.ports.views.memory import InMemoryTournamentViews
from shared.ports.views.port import TournamentViews
from shared.store.memory import InMemoryEventStore, InMemoryFeedConsumer
from shared.store.port import (
    EventStore,
    FeedConsumer,
)
from shared.store.redis_consumer import RedisFeedConsumer
from shared.store.redis_store import RedisEventStore
from tests.support.redis_cluster import LocalCluster

CLUSTER = pytest.param("cluster", marks=[pytest.mark.integration, pytest.mark.cluster])
"""The parameter of a backend fixture that runs the suite on a real Redis Cluster."""


def cluster_namespace(request: pytest.FixtureRequest) -> tuple[Any, str]:
    """Returns a `RedisCluster` client (bytes) of the module's cluster and a key prefix of
    this test's own; afterwards the client is closed and the prefix's keys are deleted on
    every primary, one key at a time (keys of several slots cannot go in one DEL)."""
    cluster: LocalCluster = request.getfixturevalue("redis_cluster")
    client = cluster.client()
    namespace = f"test:{uuid.uuid4().hex[:12]}:"

    def clean() -> None:
        client.close()
        for primary in cluster.primaries():
            with primary.client() as node:
                for key in list(node.scan_iter(match=f"{namespace}*", count=1000)):
                    node.delete(key)

    request.addfinalizer(clean)
    return client, namespace


def redis_backend(request: pytest.FixtureRequest) -> tuple[Any, str]:
    """Returns the client and a key prefix of this test's own for a backend fixture's Redis
    parameter: the module's Redis Cluster for `cluster` (`cluster_namespace`), else the
    standalone Redis (`redis_client`, `namespace`)."""
    if request.param == "cluster":
        return cluster_namespace(request)
    return request.getfixturevalue("redis_client"), request.getfixturevalue("namespace")


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


def memory_backend(partitions: int = 1) -> Backend:
    """Returns a fresh in-memory store and its consumers (of GAME's partition)."""
    store = InMemoryEventStore(partitions)

    def make(group: str, consumer: str, *, claim_idle_ms: int = 30000) -> FeedConsumer:
        partition = store.partition_of(GAME)
        return InMemoryFeedConsumer(store, group, consumer, claim_idle_ms, partition)

    return Backend(store, make)


def redis_store_backend(client: redis.Redis | RedisCluster, namespace: str) -> Backend:
    """Returns a Redis store (16 partitions) and consumers (of GAME's partition) under this
    test's own namespace."""
    store = RedisEventStore(client, namespace)

    def make(group: str, consumer: str, *, claim_idle_ms: int = 30000) -> FeedConsumer:
        partition = store.partition_of(GAME)
        return RedisFeedConsumer(client, group, consumer, namespace, claim_idle_ms, partition)

    return Backend(store, make)


KIND = "beggar"


def events(*labels: str) -> list[NewEvent]:
    """Returns one event per label."""
    return [event(label) for label in labels]


def event(label: str) -> NewEvent:
    """Returns an event whose payload is `label`."""
    return NewEvent("CardPlayed", label.encode())


Views = tuple[EventStore, Callable[[], TournamentViews]]
"""A store and how to read its tournament views (caught up with the store first)."""


def views_backend(request: pytest.FixtureRequest, kind: str) -> Views:
    """Returns a store and its views: `memory` (the in-memory twin), or `postgres` (a Redis
    store of the test's namespace, projected into PostgreSQL before each read)."""
    if kind == "memory":
        store = InMemoryEventStore()
        memory = InMemoryTournamentViews(store)
        return store, lambda: memory
    client: redis.Redis = request.getfixturevalue("redis_client")
    database_url: str = request.getfixturevalue("database_url")
    migrate(database_url)
    redis_store = RedisEventStore(client, request.getfixturevalue("namespace"))
    consumer = redis_store.consumer("projection", "p1")
    projected = PostgresTournamentViews(database_url)

    def caught_up() -> TournamentViews:
        with Projector(database_url, consumer) as projector:
            while projector.run_once(count=250):
                pass
        return projected

    return redis_store, caught_up
