"""No acknowledged move is lost when a Redis Cluster primary dies and its replica takes over
(issue 17), with CARDARENA_REDIS_WAIT_REPLICAS=1: the event store acknowledges an append only
once WAIT confirms a replica holds it.

Writers append thousands of one-event moves across many streams, each at the version it
expects and with an idempotency key of its own, retrying a move that was not acknowledged
(StoreUnavailable) with the same key, as a client does. Midway the primary of some of those
streams' slots is SIGKILLed; once its replica serves the slots the writers go on. Then every
acknowledged move is in its stream at its version with its payload, and none is there twice.
"""

from __future__ import annotations

import dataclasses
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from shared.messages.envelope import NewEvent
from shared.store.port import AppendResult, StoreUnavailable
from shared.store.redis_common import stream_key
from shared.store.redis_store import RedisEventStore
from tests.support.redis_cluster import LocalCluster, RedisServer, wait_until

pytestmark = pytest.mark.cluster

STREAMS = 120
"""How many streams the writers append to (over all 16 partitions, so every primary)."""
MOVES = 25
"""How many moves each stream gets: 3000 acknowledged appends in all."""
WRITERS = 4
"""How many threads append at once, each to streams of its own."""
KILL_AFTER = 1000
"""How many moves are acknowledged before the primary is killed."""
RETRY_S = 60.0
"""How long one move may stay unacknowledged before the test calls it a hang: far past
a failover (node timeout 2 s, then the replica's election)."""


@dataclasses.dataclass
class Writers:
    """Threads that append MOVES moves to each of their streams, retrying each move until
    it is acknowledged; what was acknowledged, and how often a move had to be retried."""

    store: RedisEventStore
    streams: list[str]
    acknowledged: dict[str, list[int]] = dataclasses.field(default_factory=dict)
    replayed: int = 0
    retries: int = 0
    errors: list[BaseException] = dataclasses.field(default_factory=list)
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)

    def count(self) -> int:
        """Returns how many moves are acknowledged so far."""
        with self.lock:
            return sum(len(versions) for versions in self.acknowledged.values())

    def _append(self, stream: str, version: int) -> None:
        """Appends `stream`'s move `version` until it is acknowledged (the same key each try)."""
        event = [NewEvent("Moved", payload(stream, version))]
        key = f"move-{version}"
        deadline = time.monotonic() + RETRY_S
        retry = False
        while True:
            try:
                result = self._try(stream, version - 1, event, key, retry=retry)
            except StoreUnavailable:
                retry = True
                if time.monotonic() > deadline:
                    raise
                with self.lock:
                    self.retries += 1
                time.sleep(0.02)
                continue
            assert (result.first_version, result.last_version) == (version, version), result
            with self.lock:
                self.acknowledged.setdefault(stream, []).append(version)
                self.replayed += result.replayed
            return

    def _try(
        self, stream: str, expected: int, events: list[NewEvent], key: str, *, retry: bool
    ) -> AppendResult:
        """Appends as `shared.app.games.act` does: a retry first recalls what its key wrote
        (through the cluster client, which also learns a failover from it), then appends."""
        known = self.store.recall(stream, key) if retry else None
        return known or self.store.append(stream, "game", expected, events, key)

    def _write(self, streams: list[str]) -> None:
        try:
            for version in range(1, MOVES + 1):
                for stream in streams:
                    self._append(stream, version)
        except BaseException as error:  # reported by run(): a thread cannot fail the test
            with self.lock:
                self.errors.append(error)

    def run(self, midway: Callable[[], None]) -> None:
        """Runs the writers; calls `midway` once KILL_AFTER moves are acknowledged."""
        threads = [
            threading.Thread(target=self._write, args=(self.streams[i::WRITERS],), name=f"w{i}")
            for i in range(WRITERS)
        ]
        for thread in threads:
            thread.start()
        try:
            wait_until(
                lambda: self.count() >= KILL_AFTER or self.errors, f"{KILL_AFTER} moves", 120
            )
            if not self.errors:
                midway()
        finally:
            for thread in threads:
                thread.join(timeout=RETRY_S * MOVES)
        assert not any(thread.is_alive() for thread in threads), "a writer hung"
        if self.errors:
            raise self.errors[0]


def payload(stream: str, version: int) -> bytes:
    """Returns the payload of `stream`'s move `version`: it names both."""
    return f"{stream}:{version}".encode()


def lost_and_doubled(store: RedisEventStore, writers: Writers) -> tuple[list[str], list[str]]:
    """Returns the acknowledged moves missing from their stream (or there with another
    payload), and the moves found more than once or past what was acknowledged."""
    lost: list[str] = []
    doubled: list[str] = []
    for stream in writers.streams:
        events = store.read(stream)
        stored = [(event.version, event.data) for event in events]
        for version in writers.acknowledged.get(stream, []):
            if stored.count((version, payload(stream, version))) != 1:
                (lost if (version, payload(stream, version)) not in stored else doubled).append(
                    f"{stream}@{version}"
                )
        versions = [version for version, _ in stored]
        if len(set(versions)) != len(versions) or len(versions) > MOVES:
            doubled.append(f"{stream}: {versions}")
    return lost, doubled


@dataclasses.dataclass(frozen=True)
class Run:
    """A run of the writers through a failover: the writers, the killed primary, the
    streams whose slots it served, and the store's client."""

    writers: Writers
    victim: RedisServer
    victim_streams: list[str]
    client: Any


def failover_run(
    cluster: LocalCluster, wait_replicas: int, writers: type[Writers] = Writers
) -> Run:
    """Runs `writers` on `cluster` through a store with `wait_replicas`, killing midway the
    primary of the first stream's slot and waiting until its replica serves its slots."""
    namespace = f"failover:{uuid.uuid4().hex[:8]}:"
    client = cluster.client()
    store = RedisEventStore(client, namespace, wait_replicas=wait_replicas)
    streams = [f"g-{i}" for i in range(STREAMS)]
    made = writers(store, streams)
    homes = {
        s: cluster.node_for_key(stream_key(namespace, store.partition_of(s), s)) for s in streams
    }
    victim = homes[streams[0]]
    assert cluster.replicas_of(victim), "the primary to kill has a replica"

    def kill() -> None:
        cluster.kill(victim)
        cluster.wait_failover(victim)

    made.run(kill)
    return Run(made, victim, [s for s in streams if homes[s] is victim], client)


def test_with_wait_replicas_no_acknowledged_move_is_lost_when_a_primary_fails_over(
    redis_cluster_factory: Callable[..., LocalCluster],
) -> None:
    # Two replicas each: once one is promoted, the other replicates it, so WAIT 1 can still
    # confirm the appends to the killed primary's slots (with one replica each, the promoted
    # replica has none, and every append there is refused until one is added).
    cluster = redis_cluster_factory(primaries=3, replicas=2)
    run = failover_run(cluster, wait_replicas=1)
    writers, store = run.writers, run.writers.store
    try:
        assert run.victim_streams, "the killed primary served some of the streams"
        assert writers.count() == STREAMS * MOVES
        lost, doubled = lost_and_doubled(store, writers)
        assert lost == [], f"{len(lost)} acknowledged moves lost: {lost[:10]}"
        assert doubled == [], doubled[:10]
        assert [store.version(stream) for stream in run.victim_streams] == [MOVES] * len(
            run.victim_streams
        )
    finally:
        run.client.close()
    print(
        f"\nfailover with WAIT 1: {writers.count()} moves acknowledged, none lost or doubled"
        f" ({len(run.victim_streams)} streams on {run.victim.address}, killed);"
        f" {writers.retries} tries refused meanwhile, {writers.replayed} retries replayed"
        " a move that had got through"
    )


def test_the_retry_of_an_append_no_replica_confirmed_is_not_acknowledged_either(
    redis_cluster_with_replicas: LocalCluster,
) -> None:
    cluster = redis_cluster_with_replicas
    namespace = f"unconfirmed:{uuid.uuid4().hex[:8]}:"
    with cluster.client() as client:
        store = RedisEventStore(client, namespace, wait_replicas=1, wait_timeout_ms=200)
        stream = "g-1"
        primary = cluster.node_for_key(stream_key(namespace, store.partition_of(stream), stream))
        (replica,) = cluster.replicas_of(primary)
        replica.kill()  # a replica: no failover, the primary serves on, replicated by nobody
        move = [NewEvent("Moved", payload(stream, 1))]
        with pytest.raises(StoreUnavailable, match="0 of 1 replicas"):
            store.append(stream, "game", 0, move, "move-1")
        assert store.version(stream) == 1, "the primary holds the unconfirmed move"
        with pytest.raises(StoreUnavailable):
            store.append(stream, "game", 0, move, "move-1")
