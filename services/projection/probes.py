"""What `cardarena serve projection` adds for operations: a heartbeat file for `cardarena probe
projection`, and its lag and dead letters as Prometheus metrics on a port."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable

import psycopg
import redis
from redis.cluster import RedisCluster

from services.ops.health import heartbeat_path, touch
from services.ops.metrics import (
    ProjectionMetrics,
    dead_letters_held,
    projection_lag,
    projection_partition_lag,
    serve_metrics,
)
from services.projection.lag import partition_lags
from services.projection.lag import projection_lag as read_lag
from services.settings import ProjectionSettings
from shared.store.redis_common import feed_key


def install(
    settings: ProjectionSettings,
    client: redis.Redis | RedisCluster,
    metrics: ProjectionMetrics,
    name: str = "main",
) -> Callable[[], None]:
    """Serves the projection's `metrics`, with its lag and held dead letters, on its port;
    returns the heartbeat to call every loop."""
    registry = metrics.registry
    feeds = [feed_key(settings.namespace, p) for p in range(settings.partitions)]
    args = (client, feeds, settings.projection_group, settings.database_url, name)
    registry.register(projection_lag(functools.partial(read_lag, *args)))
    registry.register(projection_partition_lag(functools.partial(partition_lags, *args)))
    registry.register(dead_letters_held(functools.partial(held, settings.database_url)))
    serve_metrics(settings.projection_metrics_port, registry, "the projection")
    return throttled(functools.partial(touch, heartbeat_path(settings.heartbeat_dir, "projection")))


def held(conninfo: str) -> int:
    """Returns how many dead letters wait in the projection's database at `conninfo`."""
    with psycopg.connect(conninfo, autocommit=True, connect_timeout=2) as conn:
        row = conn.execute("SELECT count(*) FROM projection_dead_letters").fetchone()
    return int(row[0]) if row else 0


def throttled(action: Callable[[], None], every_s: float = 1.0) -> Callable[[], None]:
    """Returns `action` run at most once per `every_s` seconds."""
    last = [float("-inf")]

    def run() -> None:
        now = time.monotonic()
        if now - last[0] >= every_s:
            last[0] = now
            action()

    return run
