"""What the Redis event store reports to `/ready`: every primary holds the append function
(loaded on the way), its layout, every partition's feed readable; on Redis and a cluster."""

from __future__ import annotations

from typing import Any

import pytest
import redis

from shared.messages.envelope import NewEvent
from shared.store.redis_common import layout_key
from shared.store.redis_store import RedisEventStore
from tests.support.redis_cluster import LocalCluster


def test_a_ready_store_reports_nothing_and_reloads_a_flushed_function(
    redis_client: redis.Redis, namespace: str
) -> None:
    store = RedisEventStore(redis_client, namespace)
    assert store.problems() == []
    redis_client.function_flush()

    assert store.problems() == []
    assert redis_client.function_list(library="cardarena")
    assert store.append("g", "beggar", 0, [NewEvent("CardPlayed", b"a")]).last_version == 1


def test_a_store_of_another_partition_count_is_not_ready(
    redis_client: redis.Redis, namespace: str
) -> None:
    RedisEventStore(redis_client, namespace, partitions=4).append(
        "g", "beggar", 0, [NewEvent("CardPlayed", b"a")]
    )

    (problem,) = RedisEventStore(redis_client, namespace, partitions=16).problems()

    assert problem.startswith("redis:")
    assert "'partitioned 4'" in problem
    assert redis_client.get(layout_key(namespace)) == b"partitioned 4"


@pytest.mark.cluster
def test_a_cluster_store_is_ready_on_every_primary_and_not_when_a_primary_is_gone(
    redis_cluster_factory: Any,
) -> None:
    cluster: LocalCluster = redis_cluster_factory(primaries=3, replicas=0)
    client = cluster.client()
    store = RedisEventStore(client, "ready:")
    for primary in cluster.primaries():
        primary.client().function_flush()

    assert store.problems() == []
    assert all(p.client().function_list(library="cardarena") for p in cluster.primaries())

    cluster.kill(cluster.primaries()[0])
    cluster.wait_state("fail")
    problems = store.problems()

    assert problems
    assert all(problem.startswith("redis") for problem in problems)
    client.close()
