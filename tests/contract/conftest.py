"""The event stores under the contract: memory (one and four partitions), Redis."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
import redis

from shared.store.port import EventStore
from tests.support.redis_cluster import LocalCluster
from tests.support.stores import (
    Backend,
    ConsumerFactory,
    Views,
    memory_backend,
    redis_store_backend,
    views_backend,
)


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
        yield memory_backend()
    elif request.param == "memory-partitioned":
        yield memory_backend(partitions=4)
    elif request.param == "redis":
        client: redis.Redis = request.getfixturevalue("redis_client")
        namespace: str = request.getfixturevalue("namespace")
        yield redis_store_backend(client, namespace)
    else:
        cluster: LocalCluster = request.getfixturevalue("redis_cluster")
        clustered = cluster.client()
        prefix = f"test:{uuid.uuid4().hex[:12]}:"
        try:
            yield redis_store_backend(clustered, prefix)
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


@pytest.fixture(params=["memory", pytest.param("postgres", marks=pytest.mark.integration)])
def views(request: pytest.FixtureRequest) -> Views:
    """Returns a store and its views (projected first, on PostgreSQL), each in turn."""
    return views_backend(request, request.param)
