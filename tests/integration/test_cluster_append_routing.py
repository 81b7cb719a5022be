"""After a failover the event store's appends find the promoted replica by themselves
(issue 17): with CARDARENA_REDIS_WAIT_REPLICAS an append goes to its slot's node directly
(the append and WAIT on one connection), so a client whose every call is an append must
still learn that the slot moved, without a read through the cluster client to teach it."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator

import pytest

from shared.messages.envelope import NewEvent
from shared.store.port import AppendResult, StoreUnavailable
from shared.store.redis_common import stream_key
from shared.store.redis_store import RedisEventStore
from tests.support.redis_cluster import LocalCluster, NotYet, RedisServer, wait_until

pytestmark = pytest.mark.cluster

RECOVER_S = 15.0
"""How long appends may keep failing once the replica serves the slots: far past the
cluster client's retries and a refresh of its slot map."""


def test_appends_alone_reach_the_promoted_replica_after_a_failover(
    redis_cluster_factory: Callable[..., LocalCluster],
) -> None:
    # Two replicas each, so the promoted replica is replicated and WAIT 1 confirms there.
    cluster = redis_cluster_factory(primaries=3, replicas=2)
    namespace = f"routing:{uuid.uuid4().hex[:8]}:"
    stream = "g-1"
    with cluster.client() as client:
        store = RedisEventStore(client, namespace, wait_replicas=1)
        store.append(stream, "game", 0, [NewEvent("Moved", b"1")], "move-1")
        victim = cluster.node_for_key(stream_key(namespace, store.partition_of(stream), stream))
        cluster.kill(victim)
        cluster.wait_failover(victim)

        def appended() -> bool:
            try:
                store.append(stream, "game", 1, [NewEvent("Moved", b"2")], "move-2")
            except StoreUnavailable as error:
                raise NotYet(str(error)) from error
            return True

        wait_until(appended, "an append to reach the promoted replica", RECOVER_S)
        assert [event.data for event in store.read(stream)] == [b"1", b"2"]


STREAM = "g-1"
"""The stream of the batch tests."""


@contextlib.contextmanager
def replicated_store(
    cluster: LocalCluster, wait_timeout_ms: int = 1000
) -> Iterator[tuple[RedisEventStore, str, RedisServer]]:
    """Yields a store of a namespace of its own on `cluster` that WAITs for one replica, the
    key of `STREAM` and the replica of that key's primary."""
    namespace = f"batched:{uuid.uuid4().hex[:8]}:"
    with cluster.client() as client:
        store = RedisEventStore(client, namespace, wait_replicas=1, wait_timeout_ms=wait_timeout_ms)
        key = stream_key(namespace, store.partition_of(STREAM), STREAM)
        (replica,) = cluster.replicas_of(cluster.node_for_key(key))
        yield store, key, replica


def test_a_batch_of_bot_moves_is_acknowledged_once_a_replica_holds_it(
    redis_cluster_with_replicas: LocalCluster,
) -> None:
    with replicated_store(redis_cluster_with_replicas) as (store, key, replica):
        batches = [(v, [NewEvent("Moved", str(v).encode())], f"bot:{v}") for v in range(3)]

        assert store.append_batches(STREAM, "game", batches) == [
            AppendResult(1, 1),
            AppendResult(2, 2),
            AppendResult(3, 3),
        ]
        reader = replica.client(single_connection_client=True)
        reader.execute_command("READONLY")  # type: ignore[no-untyped-call]  # replica reads
        assert reader.xlen(key) == 3  # WAIT 1 answered: the replica holds all three
        reader.close()
        replayed = store.append_batches(STREAM, "game", batches[2:])
        assert replayed == [AppendResult(3, 3, replayed=True)]


def test_a_batch_of_bot_moves_no_replica_confirmed_is_not_acknowledged(
    redis_cluster_with_replicas: LocalCluster,
) -> None:
    with replicated_store(redis_cluster_with_replicas, wait_timeout_ms=200) as (store, _, replica):
        replica.kill()

        with pytest.raises(StoreUnavailable):
            store.append_batches(STREAM, "game", [(0, [NewEvent("Moved", b"1")], "bot:0")])
