"""Redis figures of `bench.scale`: the server CPU an event costs (the project's append against
a bare XADD of the same payload) and appends per second with several client processes, on a
standalone Redis and on a Redis Cluster, every server started by the bench itself.
"""

from __future__ import annotations

import multiprocessing
import queue
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import redis
from redis.cluster import ClusterNode, RedisCluster

from bench.scale_workload import Call, Workload, replay, replay_bare
from shared.store.redis_store import RedisEventStore
from tests.support.redis_cluster import RedisServer

PARTITIONS = 16
"""The partitions of every store the bench writes (the setting's default)."""

Address = tuple[str, int]
Span = tuple[float, float, float]
"""A bench process's start and end (time.monotonic) and the CPU seconds it used between."""


def namespace(what: str) -> str:
    """Returns a fresh key prefix for `what`."""
    return f"bench-scale:{what}:{uuid.uuid4().hex[:6]}:"


def cpu_seconds(servers: Sequence[RedisServer]) -> float:
    """Returns the CPU seconds (system + user, as INFO says) the servers used so far."""
    total = 0.0
    for server in servers:
        info = server.info("cpu")
        total += float(info["used_cpu_sys"]) + float(info["used_cpu_user"])
    return total


def connect(addresses: Sequence[Address], cluster: bool) -> Any:
    """Returns a bytes client of one standalone server or of the cluster these nodes make."""
    if cluster:
        nodes = [ClusterNode(host, port) for host, port in addresses]  # type: ignore[no-untyped-call]
        return RedisCluster(startup_nodes=nodes, socket_timeout=30)
    ((host, port),) = addresses
    return redis.Redis(host=host, port=port, socket_timeout=30)


def addresses_of(servers: Sequence[RedisServer]) -> list[Address]:
    """Returns the servers' (host, port)."""
    return [(server.host, server.port) for server in servers]


def store_of(client: Any, prefix: str) -> RedisEventStore:
    """Returns the event store under `prefix`, its function loaded and its layout checked."""
    store = RedisEventStore(client, prefix, partitions=PARTITIONS)
    if problems := store.problems():
        raise RuntimeError(f"the store is not ready: {problems}")
    return store


def getkeys_seconds(servers: Sequence[RedisServer]) -> float:
    """Returns the seconds the servers spent in COMMAND GETKEYS so far (redis-py's cluster
    client asks a node for an FCALL's keys before it routes it)."""
    total = 0.0
    for server in servers:
        stats = server.info("commandstats").get("cmdstat_command|getkeys")
        total += float(stats["usec"]) / 1e6 if stats else 0.0
    return total


def idle_rate(servers: Sequence[RedisServer], seconds: float = 1.0) -> float:
    """Returns the CPU seconds a second the servers use idle (their cron, a cluster's bus)."""
    before, start = cpu_seconds(servers), time.monotonic()
    time.sleep(seconds)
    return (cpu_seconds(servers) - before) / (time.monotonic() - start)


def busy(servers: Sequence[RedisServer], before: float, start: float, idle: float) -> float:
    """Returns the CPU seconds the servers used since `before` (at `start`), less idling."""
    return max(0.0, cpu_seconds(servers) - before - idle * (time.monotonic() - start))


# CPU per event --------------------------------------------------------------------------


@dataclass
class CpuFigures:
    """Server CPU seconds and events of the project's appends and of the bare XADDs."""

    project_cpu: float = 0.0
    project_events: int = 0
    bare_cpu: float = 0.0
    bare_events: int = 0
    idle: float = 0.0
    """The servers' CPU seconds a second while idle, taken off each phase's."""
    getkeys_cpu: float = 0.0
    """Of `project_cpu`, the seconds in COMMAND GETKEYS (as commandstats counts them)."""

    @property
    def project_us(self) -> float:
        """Returns the server µs an event costs through the project's append."""
        return self.project_cpu / max(1, self.project_events) * 1e6

    @property
    def bare_us(self) -> float:
        """Returns the server µs an event costs as a bare XADD."""
        return self.bare_cpu / max(1, self.bare_events) * 1e6

    @property
    def ratio(self) -> float:
        """Returns project µs per event over bare µs per event."""
        return self.project_us / self.bare_us if self.bare_us else 0.0


def measure_cpu(
    servers: Sequence[RedisServer], cluster: bool, workload: Workload, rounds: int
) -> CpuFigures:
    """Replays the workload `rounds` times through the project's store and as bare XADDs,
    alternating (a busy machine's drift hits both), from one client; sums the CPU the
    servers (the primaries of a cluster) used in each."""
    figures = CpuFigures()
    client = connect(addresses_of(servers), cluster)
    try:
        figures.idle = idle_rate(servers)
        for _ in range(rounds):
            store = store_of(client, namespace("cpu"))
            before, start = cpu_seconds(servers), time.monotonic()
            getkeys = getkeys_seconds(servers)
            figures.project_events += replay(store, workload.calls)
            figures.project_cpu += busy(servers, before, start, figures.idle)
            figures.getkeys_cpu += getkeys_seconds(servers) - getkeys
            before, start = cpu_seconds(servers), time.monotonic()
            figures.bare_events += replay_bare(client, namespace("bare"), workload.calls)
            figures.bare_cpu += busy(servers, before, start, figures.idle)
            client.flushall()
    finally:
        client.close()
    return figures


# Throughput -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Throughput:
    """Appends (FCALLs) and events of a timed replay by `clients` client processes, the CPU
    seconds the servers used meanwhile and those the clients used."""

    clients: int
    appends: int
    events: int
    seconds: float
    server_cpu: float
    client_cpu: float

    @property
    def appends_per_s(self) -> float:
        """Returns appends per second."""
        return self.appends / self.seconds if self.seconds else 0.0

    @property
    def events_per_s(self) -> float:
        """Returns events per second."""
        return self.events / self.seconds if self.seconds else 0.0


def _replay_share(
    addresses: list[Address],
    cluster: bool,
    prefix: str,
    calls: list[Call],
    barrier: Any,
    results: Any,
) -> None:
    """One client process: connects, waits for the others, replays its share; puts its
    (start, end) times (CLOCK_MONOTONIC, the same in every process) and CPU seconds on
    `results`."""
    client = connect(addresses, cluster)
    try:
        store = store_of(client, prefix)
        barrier.wait()
        start, cpu = time.monotonic(), time.process_time()
        replay(store, calls)
        results.put((start, time.monotonic(), time.process_time() - cpu))
    finally:
        client.close()


def run_processes(
    target: Callable[..., None], argument_lists: Sequence[tuple[Any, ...]], timeout: float
) -> list[Span]:
    """Runs `target(*arguments, barrier, results)` in a spawned process per argument list,
    started together at a barrier; returns every process's (start, end, CPU seconds)."""
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(len(argument_lists))
    results = context.Queue()
    processes = [
        context.Process(target=target, args=(*arguments, barrier, results))
        for arguments in argument_lists
    ]
    for process in processes:
        process.start()
    spans: list[Span] = []
    deadline = time.monotonic() + timeout
    try:
        while len(spans) < len(processes):
            try:
                spans.append(results.get(timeout=0.2))
            except queue.Empty:
                failed = [p.exitcode for p in processes if p.exitcode]
                if failed or time.monotonic() > deadline:
                    raise RuntimeError(f"a bench process failed ({failed}) or hung") from None
    finally:
        for process in processes:
            process.join(timeout=30)
            if process.is_alive():
                process.kill()
                process.join()
    failed = [p.exitcode for p in processes if p.exitcode]
    if failed:
        raise RuntimeError(f"a bench process exited with {failed}")
    return spans


def measure_throughput(
    servers: Sequence[RedisServer],
    cluster: bool,
    workload: Workload,
    clients: int,
    prefix: str,
) -> Throughput:
    """Replays the workload with `clients` processes, each a share of the games, under the
    fresh `prefix`; returns the appends and events per second of the whole."""
    addresses = addresses_of(servers)
    shares = workload.shares(clients)
    before = cpu_seconds(servers)
    spans = run_processes(
        _replay_share, [(addresses, cluster, prefix, share) for share in shares], timeout=600
    )
    server_cpu = cpu_seconds(servers) - before
    seconds = max(end for _, end, _ in spans) - min(start for start, _, _ in spans)
    client_cpu = sum(cpu for _, _, cpu in spans)
    return Throughput(clients, workload.appends, workload.events, seconds, server_cpu, client_cpu)
