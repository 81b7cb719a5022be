"""The Redis Cluster backend of the contract suites of the Redis adapters beside the event
store (rate limiter, game slots, outbox, deal secret): a cluster client of the module's own
cluster (`redis_cluster`) and a namespace of the test's own, whose keys are deleted from
every primary afterwards."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

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
