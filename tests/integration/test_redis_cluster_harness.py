"""The Redis Cluster harness runs a real cluster, and redis-py's cluster client behaves on it
as the partitioned event store will rely on: keys spread over every primary, a function
loaded on every primary runs with the keys of one hash tag, keys of several slots are
refused, streams work on their node, a killed primary's replica takes over the writes, a
cluster that lost a primary answers CLUSTERDOWN, and stopping leaves nothing behind."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from redis.backoff import NoBackoff
from redis.cluster import RedisCluster
from redis.exceptions import (
    ClusterCrossSlotError,
    ClusterDownError,
    ClusterError,
    RedisClusterException,
    ResponseError,
)
from redis.retry import Retry

from tests.support.redis_cluster import SLOTS, LocalCluster, RedisServer

pytestmark = pytest.mark.cluster

LIBRARY = """#!lua name=harness
redis.register_function('put_both', function(keys, args)
  redis.call('SET', keys[1], args[1])
  redis.call('SET', keys[2], args[1])
  return #keys
end)
redis.register_function('refuse', function(keys, args)
  return redis.error_reply('REFUSED ' .. keys[1])
end)
"""


def _prefix() -> str:
    return f"harness:{uuid.uuid4().hex[:8]}:"


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.fixture
def client(redis_cluster: LocalCluster) -> Iterator[Any]:
    """Returns a `RedisCluster` client of the module's cluster, strings decoded (as Any:
    redis-py's cluster client has no annotations)."""
    with redis_cluster.client(decode_responses=True) as cluster_client:
        yield cluster_client


def test_the_three_primaries_serve_every_slot_exactly_once(redis_cluster: LocalCluster) -> None:
    ranges = redis_cluster.nodes[0].raw("CLUSTER", "SLOTS")
    served = sorted(slot for first, last, *_ in ranges for slot in range(first, last + 1))
    owners = {f"{shard[2][0]}:{shard[2][1]}" for shard in ranges}

    assert served == list(range(SLOTS))
    assert owners == {node.address for node in redis_cluster.primaries()}
    assert len(owners) == 3


def test_keys_written_through_the_cluster_client_land_on_all_three_primaries(
    redis_cluster: LocalCluster, client: Any
) -> None:
    prefix = _prefix()
    keys = [f"{prefix}{index}" for index in range(300)]
    for key in keys:
        client.set(key, "1")

    holders = {}
    for node in redis_cluster.primaries():
        with node.client() as plain:
            holders[node.address] = set(plain.scan_iter(match=prefix + "*", count=1000))
    assert all(holders.values()), holders
    assert sorted(key for held in holders.values() for key in held) == sorted(keys)
    for key in keys[:20]:
        assert key in holders[redis_cluster.node_for_key(key).address]
        assert client.get_node_from_key(key).name == redis_cluster.node_for_key(key).address


def test_a_function_loaded_on_every_primary_runs_with_the_keys_of_one_hash_tag(
    redis_cluster: LocalCluster, client: Any
) -> None:
    loaded = client.execute_command(
        "FUNCTION", "LOAD", "REPLACE", LIBRARY, target_nodes=RedisCluster.PRIMARIES
    )
    assert loaded == {node.address: "harness" for node in redis_cluster.primaries()}
    for node in client.get_primaries():
        libraries = client.execute_command("FUNCTION", "LIST", target_nodes=node)
        assert [library["library_name"] for library in libraries] == ["harness"]

    tag = "{" + _prefix() + "game-7}"
    assert client.fcall("put_both", 2, f"{tag}:stream", f"{tag}:version", "v1") == 2

    with redis_cluster.node_for_key(tag).client() as owner:
        assert owner.mget(f"{tag}:stream", f"{tag}:version") == ["v1", "v1"]


def test_a_multi_key_fcall_across_slots_is_refused_and_writes_nothing(
    redis_cluster: LocalCluster, client: Any
) -> None:
    client.execute_command(
        "FUNCTION", "LOAD", "REPLACE", LIBRARY, target_nodes=RedisCluster.PRIMARIES
    )
    prefix = _prefix()
    first, second = f"{prefix}a", f"{prefix}b"
    assert client.keyslot(first) != client.keyslot(second)

    # redis-py refuses before sending: not a RedisError, a RedisClusterException.
    with pytest.raises(RedisClusterException, match="same key slot") as refused:
        client.fcall("put_both", 2, first, second, "v")
    assert not isinstance(refused.value, redis.RedisError)

    # Sent to a node anyway, the server answers CROSSSLOT.
    with pytest.raises(ClusterCrossSlotError, match="don't hash to the same slot") as crossslot:
        client.execute_command(
            "FCALL", "put_both", 2, first, second, "v", target_nodes=client.get_node_from_key(first)
        )
    assert isinstance(crossslot.value, ResponseError)
    assert client.exists(first) == client.exists(second) == 0


def test_a_pipeline_of_fcalls_answers_each_call_in_order_with_errors_in_place(
    client: Any,
) -> None:
    client.execute_command(
        "FUNCTION", "LOAD", "REPLACE", LIBRARY, target_nodes=RedisCluster.PRIMARIES
    )
    tags = ["{" + _prefix() + f"g{index}}}" for index in range(6)]
    pipe = client.pipeline()
    for tag in tags:
        pipe.fcall("put_both", 2, f"{tag}:a", f"{tag}:b", tag)
    pipe.fcall("refuse", 1, f"{tags[0]}:a")

    results = pipe.execute(raise_on_error=False)

    assert results[:-1] == [2] * len(tags)
    assert isinstance(results[-1], ResponseError)
    assert f"REFUSED {tags[0]}:a" in str(results[-1])
    assert [client.get(f"{tag}:b") for tag in tags] == tags


def test_a_consumer_group_reads_claims_and_acks_a_stream_on_its_node(
    client: Any,
) -> None:
    stream = "{" + _prefix() + "partition-3}:feed"
    first = client.xadd(stream, {"n": "1"})
    client.xgroup_create(stream, "projection", id="0")

    assert client.xread({stream: first}, block=50) == []
    assert client.xreadgroup("projection", "one", {stream: ">"}, block=50) == [
        [stream, [(first, {"n": "1"})]]
    ]
    _, claimed, _ = client.xautoclaim(stream, "projection", "two", min_idle_time=0)
    assert claimed == [(first, {"n": "1"})]
    assert client.xack(stream, "projection", first) == 1
    assert client.xpending(stream, "projection")["pending"] == 0


def test_a_killed_primary_fails_over_to_its_replica_and_the_client_writes_there(
    redis_cluster_with_replicas: LocalCluster,
) -> None:
    cluster = redis_cluster_with_replicas
    key = "{" + _prefix() + "game-1}:stream"
    with cluster.client(decode_responses=True) as client:
        old = cluster.node_for_key(key)
        replicas = cluster.replicas_of(old)
        assert len(replicas) == 1
        pipe = client.pipeline()
        pipe.set(key, "acknowledged")
        pipe.execute_command("WAIT", 1, 5000, target_nodes=client.get_node_from_key(key))
        assert pipe.execute() == [True, 1]
        dead = client.get_node_from_key(key)

        cluster.kill(old)
        with pytest.raises(redis.ConnectionError):
            client.execute_command("SET", key, "lost", target_nodes=dead)
        new = cluster.wait_failover(old)

        assert new is replicas[0]
        assert new.role() == "master"
        assert client.get(key) == "acknowledged"
        client.set(key, "after")
        assert client.get_node_from_key(key).name == new.address
    with new.client() as plain:
        assert plain.get(key) == "after"


def test_a_cluster_that_lost_a_primary_answers_clusterdown_and_stop_ends_every_process(
    redis_cluster_factory: Callable[..., LocalCluster],
) -> None:
    cluster = redis_cluster_factory()
    pids = [node.pid for node in cluster.nodes]
    victim, survivor = cluster.nodes[0], cluster.nodes[1]
    key = next(f"k{n}" for n in range(100) if cluster.node_for_key(f"k{n}") is survivor)
    with cluster.client(retry=Retry(NoBackoff(), 0)) as fail_fast:
        cluster.kill(victim)
        cluster.wait_state("fail")
        with pytest.raises(ClusterDownError, match="cluster is down") as down:
            fail_fast.set(key, "1")
    assert isinstance(down.value, ClusterError)

    cluster.stop()

    assert all(pid is not None and _gone(pid) for pid in pids)
    assert not cluster.directory.exists()
    assert not any(node.alive for node in cluster.nodes)


def test_a_standalone_server_answers_and_stop_ends_it_and_removes_its_directory(
    redis_server: RedisServer,
) -> None:
    pid, directory = redis_server.pid, redis_server.directory
    assert redis_server.port != 6379
    with redis_server.client() as plain:
        assert plain.ping()
        assert plain.info("server")["tcp_port"] == redis_server.port

    redis_server.stop()

    assert pid is not None
    assert _gone(pid)
    assert not Path(directory).exists()
