"""Every Prometheus metric of cardarena, defined once; each service registers the ones it has.

Each holder takes its own `CollectorRegistry` (a fresh one by default), so apps built side by
side in one process (tests) never collide. Values read at scrape time (queue depth,
tournaments running, projection lag) are custom collectors that swallow their own errors:
a scrape never fails because Redis or PostgreSQL is down, the metric is just missing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, start_http_server
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from shared.app.stalls import Stall

log = logging.getLogger(__name__)

PREFIX = "cardarena_"
STALLS = f"{PREFIX}platform_stalls"
STALLS_HELP = (
    "Platform loops (bot turns, deadlines, webhook turns, tournament records) that gave up"
    " after tries that made no progress, left to reconciliation; by loop."
)

_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class GameMetrics:
    """The game service's metrics: requests, games created, moves, conflicts, replays, and
    the scrape-time gauges added with `watch`."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry
        self.requests = Counter(
            f"{PREFIX}http_requests",
            "HTTP requests answered, by method, route template and status.",
            ["method", "route", "status"],
            registry=r,
        )
        self.request_seconds = Histogram(
            f"{PREFIX}http_request_duration_seconds",
            "Time to answer an HTTP request, by method and route template.",
            ["method", "route"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.games_created = Counter(
            f"{PREFIX}games_created", "Games created (not retries), by game.", ["game"], registry=r
        )
        self.moves = Counter(
            f"{PREFIX}moves_appended",
            "Actions appended through the API (not idempotent replays), by game.",
            ["game"],
            registry=r,
        )
        self.conflicts = Counter(
            f"{PREFIX}conflicts",
            "409 answers, by cause (the problem type: stale-version, tournament-over, ...).",
            ["cause"],
            registry=r,
        )
        self.replays = Counter(
            f"{PREFIX}idempotent_replays",
            "Requests answered from an Idempotency-Key's first result, by operation.",
            ["operation"],
            registry=r,
        )
        self.stalls = Counter(STALLS, STALLS_HELP, ["loop"], registry=r)

    def count_stall(self, stall: Stall) -> None:
        """Counts a platform loop that gave up in this process (bot turns played in-process)."""
        self.stalls.labels(stall.loop).inc()

    def watch(self, collector: Collector) -> None:
        """Adds a scrape-time collector (queue depth, tournaments running) to the registry."""
        self.registry.register(collector)


class WorkerMetrics:
    """The workers' metrics: bot turns played, the wait before a bot's first move, and the
    platform loops that gave up (`shared.app.stalls`)."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self.bot_turns = Counter(
            f"{PREFIX}bot_turns",
            "Built-in bot moves appended by the workers, by game.",
            ["game"],
            registry=self.registry,
        )
        self.turn_latency = Histogram(
            f"{PREFIX}bot_turn_latency_seconds",
            "Time from the event that handed the turn to the bots (its store timestamp) to"
            " the bots' first move appended, by game.",
            ["game"],
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.stalls = Counter(STALLS, STALLS_HELP, ["loop"], registry=self.registry)

    def count_stall(self, stall: Stall) -> None:
        """Counts a platform loop that gave up in a worker."""
        self.stalls.labels(stall.loop).inc()


class ProjectionMetrics:
    """The projection's counters: events set aside as dead letters, and dead letters
    projected on a retry (the gauges of its lag and held dead letters are read at scrape)."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self.dead_lettered = Counter(
            f"{PREFIX}projection_dead_letters",
            "Feed entries the projection could not project and set aside as dead letters.",
            registry=self.registry,
        )
        self.recovered = Counter(
            f"{PREFIX}projection_dead_letters_recovered",
            "Dead letters projected on a retry (they left the dead-letter table).",
            registry=self.registry,
        )


class _Gauges(Collector):
    """A collector of gauges computed at scrape time by `read`; nothing when `read` fails."""

    def __init__(self, read: Callable[[], Iterable[GaugeMetricFamily]], what: str) -> None:
        self._read = read
        self._what = what

    def collect(self) -> Iterator[GaugeMetricFamily]:
        try:
            yield from list(self._read())
        except Exception as error:
            log.warning("metrics: cannot read %s: %s", self._what, error)

    def describe(self) -> list[Any]:
        return []


def queue_depth(queue: str, count: Callable[[], int]) -> Collector:
    """Returns the collector of `cardarena_queue_depth`: tasks waiting on the Celery queue
    `queue`, from `count()` (the broker's own count: `services.workers.broker`)."""

    def read() -> Iterable[GaugeMetricFamily]:
        family = GaugeMetricFamily(
            f"{PREFIX}queue_depth", "Tasks waiting on the Celery queue.", labels=["queue"]
        )
        family.add_metric([queue], count())
        return [family]

    return _Gauges(read, "the queue depth")


def tournaments_running(count: Callable[[], int]) -> Collector:
    """Returns the collector of `cardarena_tournaments_running`, read from the views."""

    def read() -> Iterable[GaugeMetricFamily]:
        return [
            GaugeMetricFamily(
                f"{PREFIX}tournaments_running",
                "Tournaments running (from the views; counted up to 1000).",
                value=count(),
            )
        ]

    return _Gauges(read, "the running tournaments")


def outbox_records(count: Callable[[], int]) -> Collector:
    """Returns the collector of `cardarena_outbox_records`: work the broker did not take yet."""

    def read() -> Iterable[GaugeMetricFamily]:
        return [
            GaugeMetricFamily(
                f"{PREFIX}outbox_records",
                "Games and tournaments whose work the broker did not take yet (see"
                " shared/ports/outbox.py); above 0 only while the broker is unreachable.",
                value=count(),
            )
        ]

    return _Gauges(read, "the outbox")


def projection_lag(lag: Callable[[], tuple[int, float]]) -> Collector:
    """Returns the collector of the projection's lag: `cardarena_projection_lag_events` and
    `cardarena_projection_lag_seconds`, from `lag()` (events, seconds)."""

    def read() -> Iterable[GaugeMetricFamily]:
        events, seconds = lag()
        return [
            GaugeMetricFamily(
                f"{PREFIX}projection_lag_events",
                "Feed entries not yet projected (the consumer group's lag and pending).",
                value=events,
            ),
            GaugeMetricFamily(
                f"{PREFIX}projection_lag_seconds",
                "Age of the oldest unprojected feed entry (0 when caught up).",
                value=seconds,
            ),
        ]

    return _Gauges(read, "the projection lag")


def dead_letters_held(count: Callable[[], int]) -> Collector:
    """Returns the collector of `cardarena_projection_dead_letters_held`: the dead letters
    waiting in the table now, from `count()`."""

    def read() -> Iterable[GaugeMetricFamily]:
        return [
            GaugeMetricFamily(
                f"{PREFIX}projection_dead_letters_held",
                "Feed entries set aside as dead letters and not projected yet.",
                value=count(),
            )
        ]

    return _Gauges(read, "the dead letters")


def serve_metrics(port: int, registry: CollectorRegistry, what: str) -> None:
    """Serves `registry` on `port` (0: not at all) in a daemon thread; a port in use is
    logged, not fatal."""
    if port == 0:
        return
    try:
        start_http_server(port, registry=registry)
    except OSError as error:
        log.error("metrics of %s: cannot listen on port %s: %s", what, port, error)
        return
    log.info("metrics of %s on port %s", what, port)


def projection_partition_lag(lags: Callable[[], list[tuple[int, float]]]) -> Collector:
    """Returns the collector of the projection's lag per feed partition:
    `cardarena_projection_partition_lag_events` and `..._seconds`, labelled `partition`,
    from `lags()` ((events, seconds) of each partition, in order)."""

    def read() -> Iterable[GaugeMetricFamily]:
        events = GaugeMetricFamily(
            f"{PREFIX}projection_partition_lag_events",
            "Entries of a feed partition not yet projected.",
            labels=["partition"],
        )
        seconds = GaugeMetricFamily(
            f"{PREFIX}projection_partition_lag_seconds",
            "Age of the oldest unprojected entry of a feed partition (0 when caught up).",
            labels=["partition"],
        )
        for partition, (behind, age) in enumerate(lags()):
            events.add_metric([str(partition)], behind)
            seconds.add_metric([str(partition)], age)
        return [events, seconds]

    return _Gauges(read, "the projection lag per partition")
