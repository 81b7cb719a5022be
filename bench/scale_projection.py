"""Projection figures of `bench.scale`: the events per second 1, 2 and 4 projector processes
sharing the partitions project into PostgreSQL, and the feed's memory over a long run with
and without trimming.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import psycopg
import redis

from bench.load import temporary_database
from bench.scale_redis import PARTITIONS, Address, namespace, run_processes, store_of
from bench.scale_workload import Call, Workload, replay
from services.ops.migrate import migrate
from services.projection.archive import PostgresEventArchive
from services.projection.projector import Projector
from services.projection.retention import Retention
from services.projection.trimming import FeedTrimmer
from shared.store.redis_common import feed_key
from shared.store.redis_store import RedisEventStore
from tests.support.redis_cluster import RedisServer

DEADLINE_S = 600.0
"""How long a projection may take before the bench gives up: far beyond a healthy run."""
SAMPLE_S = 0.25
"""How often the memory run samples Redis."""


def owned(index: int, of: int) -> list[int]:
    """Returns the partitions projector `index` of `of` owns (those equal to it modulo `of`)."""
    return [p for p in range(PARTITIONS) if p % of == index]


def feed_lengths(client: redis.Redis, prefix: str) -> list[int]:
    """Returns the length of every partition's feed."""
    pipe = client.pipeline(transaction=False)
    for partition in range(PARTITIONS):
        pipe.xlen(feed_key(prefix, partition))
    return [int(length) for length in pipe.execute()]


# Projector throughput -------------------------------------------------------------------


@dataclass(frozen=True)
class ProjectorRun:
    """`projectors` processes projected `events` events in `seconds`, using `cpu` CPU seconds
    themselves (PostgreSQL's and Redis's apart)."""

    projectors: int
    events: int
    seconds: float
    cpu: float

    @property
    def events_per_s(self) -> float:
        """Returns the events projected per second by all of them."""
        return self.events / self.seconds if self.seconds else 0.0


def _project_share(
    address: Address,
    prefix: str,
    database_url: str,
    index: int,
    of: int,
    expected: int,
    barrier: Any,
    results: Any,
) -> None:
    """One projector process: waits for the others, projects its partitions' `expected`
    entries in batches of 500 (as the service does); puts its (start, end, CPU seconds) on
    `results`."""
    client = redis.Redis(host=address[0], port=address[1], socket_timeout=30)
    store = RedisEventStore(client, prefix, partitions=PARTITIONS)
    group = f"projection-{of}"  # each count reads the whole feed with a group of its own
    consumer = store.consumer(group, f"projector-{index}", partitions=owned(index, of))
    with Projector(database_url, consumer, partitions=PARTITIONS) as projector:
        barrier.wait()
        start, cpu = time.monotonic(), time.process_time()
        done = 0
        while done < expected:
            if time.monotonic() - start > DEADLINE_S:
                raise RuntimeError(f"projector {index} of {of}: {done} of {expected} entries")
            done += projector.run_once(count=500)
        results.put((start, time.monotonic(), time.process_time() - cpu))
    client.close()


def measure_projectors(
    server: RedisServer, prefix: str, database_server: str, counts: Sequence[int]
) -> list[ProjectorRun]:
    """Projects the feed under `prefix` (written before, untrimmed) from its start with each
    count of projector processes, each count into a fresh database of its own."""
    with server.client(decode_responses=False) as client:
        lengths = feed_lengths(client, prefix)
    runs = []
    for count in counts:
        with temporary_database(database_server, prefix="bench_scale") as database_url:
            migrate(database_url)
            arguments = [
                (
                    (server.host, server.port),
                    prefix,
                    database_url,
                    index,
                    count,
                    sum(lengths[p] for p in owned(index, count)),
                )
                for index in range(count)
            ]
            spans = run_processes(_project_share, arguments, timeout=DEADLINE_S)
            seconds = max(end for _, end, _ in spans) - min(start for start, _, _ in spans)
            cpu = sum(cpu for _, _, cpu in spans)
            runs.append(ProjectorRun(count, sum(lengths), seconds, cpu))
    return runs


# The feed's memory over a long run ------------------------------------------------------


@dataclass
class MemoryRun:
    """Samples of Redis `used_memory` (bytes) and the feeds' total length while the workload
    was played `passes` times and projected, trimmed or not."""

    trimmed: bool
    passes: int
    rate: float
    events: int = 0
    appends: int = 0
    baseline: int = 0
    samples: list[tuple[float, int, int]] = field(default_factory=list)
    """(seconds since the start, used_memory, feed length)."""
    seconds: float = 0.0

    @property
    def peak_memory(self) -> int:
        """Returns the highest used_memory sampled."""
        return max((memory for _, memory, _ in self.samples), default=0)

    @property
    def peak_feed(self) -> int:
        """Returns the longest total feed sampled."""
        return max((length for _, _, length in self.samples), default=0)

    @property
    def final(self) -> tuple[int, int]:
        """Returns the last sample's used_memory and feed length."""
        return self.samples[-1][1:] if self.samples else (0, 0)


def _project_forever(
    address: Address, prefix: str, database_url: str, trim: bool, stop: Any
) -> None:
    """The projection service of the memory run: projects, drops archived streams (retention
    0) and, when `trim`, trims the feed (retention 0) once a second, until `stop` is set."""
    client = redis.Redis(host=address[0], port=address[1], socket_timeout=30)
    store = RedisEventStore(client, prefix, partitions=PARTITIONS)
    archive = PostgresEventArchive(database_url)
    projector = Projector(
        database_url,
        store.consumer("projection", "projector-0"),
        partitions=PARTITIONS,
        retention=Retention(database_url, store, archive, 0, every_s=1.0),
        trimmer=FeedTrimmer(store, 0, every_s=1.0) if trim else None,
    )
    stopping = threading.Event()
    threading.Thread(target=_relay, args=(stop, stopping), daemon=True).start()
    projector.run_forever(stopping, block_ms=100, linger_s=0.05)
    client.close()


def _relay(stop: Any, stopping: threading.Event) -> None:
    """Sets `stopping` (this process's event) once `stop` (the parent's) is set."""
    stop.wait()
    stopping.set()


def _archived(database_url: str) -> int:
    """Returns how many events the archive holds."""
    with psycopg.connect(database_url) as conn:
        row = conn.execute("SELECT count(*) FROM events").fetchone()
    return int(row[0]) if row else 0


def paced(store: RedisEventStore, calls: Sequence[Call], rate: float) -> int:
    """Replays `calls` at about `rate` events a second (as games arrive, not as a backlog);
    returns the events appended."""
    start, events = time.monotonic(), 0
    for call in calls:
        events += replay(store, [call])
        ahead = events / rate - (time.monotonic() - start)
        if ahead > 0:
            time.sleep(ahead)
    return events


def measure_memory(
    workload: Workload, passes: int, trim: bool, database_server: str, rate: float
) -> MemoryRun:
    """Plays the workload `passes` times (each on streams of its own), at `rate` events a
    second, into a fresh Redis while
    a projector process projects it, and samples that Redis until everything is projected and
    a last trim or sweep has run."""
    run = MemoryRun(trim, passes, rate)
    with (
        RedisServer() as server,
        temporary_database(database_server, prefix="bench_scale") as database_url,
        server.client(decode_responses=False) as client,
    ):
        migrate(database_url)
        prefix = namespace("memory")
        store = store_of(client, prefix)
        run.baseline = int(server.info("memory")["used_memory"])
        context = multiprocessing.get_context("spawn")
        stop = context.Event()
        address = (server.host, server.port)
        projection = context.Process(
            target=_project_forever, args=(address, prefix, database_url, trim, stop)
        )
        projection.start()
        start = time.monotonic()
        done = threading.Event()
        sampler = threading.Thread(target=_sample, args=(server, prefix, run, start, done))
        sampler.start()
        try:
            run.events = paced(store, list(workload.passes(passes)), rate)
            run.appends = workload.appends * passes
            while _archived(database_url) < run.events:
                if time.monotonic() - start > DEADLINE_S or not projection.is_alive():
                    raise RuntimeError("the memory run's projection did not catch up")
                time.sleep(0.2)
            time.sleep(2.5)  # one more trim and sweep (each once a second)
        finally:
            done.set()
            sampler.join()
            stop.set()
            projection.join(timeout=30)
            if projection.is_alive():
                projection.kill()
                projection.join()
        run.seconds = time.monotonic() - start
    return run


def _sample(
    server: RedisServer, prefix: str, run: MemoryRun, start: float, done: threading.Event
) -> None:
    """Samples used_memory and the feeds' length every SAMPLE_S until `done`, and once after."""
    with server.client(decode_responses=False) as client:
        while True:
            finished = done.is_set()
            memory = int(client.info("memory")["used_memory"])
            length = sum(feed_lengths(client, prefix))
            run.samples.append((time.monotonic() - start, memory, length))
            if finished:
                return
            done.wait(SAMPLE_S)
