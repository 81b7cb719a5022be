"""What `cardarena serve projection` adds for operations: a heartbeat file for `cardarena probe
projection`, and its lag as Prometheus metrics on a port."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable

import redis
from prometheus_client import CollectorRegistry

from services.health import heartbeat_path, touch
from services.metrics import projection_lag, serve_metrics
from services.projection.lag import projection_lag as read_lag
from shared.settings import ProjectionSettings


def install(
    settings: ProjectionSettings, client: redis.Redis, name: str = "main"
) -> Callable[[], None]:
    """Serves the projection's metrics on its port; returns the heartbeat to call every loop."""
    registry = CollectorRegistry()
    lag = functools.partial(
        read_lag,
        client,
        f"{settings.namespace}feed",
        settings.projection_group,
        settings.database_url,
        name,
    )
    registry.register(projection_lag(lag))
    serve_metrics(settings.projection_metrics_port, registry, "the projection")
    return throttled(functools.partial(touch, heartbeat_path(settings.heartbeat_dir, "projection")))


def throttled(action: Callable[[], None], every_s: float = 1.0) -> Callable[[], None]:
    """Returns `action` run at most once per `every_s` seconds."""
    last = [float("-inf")]

    def run() -> None:
        now = time.monotonic()
        if now - last[0] >= every_s:
            last[0] = now
            action()

    return run
