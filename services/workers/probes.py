"""What `cardarena serve workers` adds to the Celery worker for operations: a heartbeat file
for `cardarena probe workers`, Prometheus metrics on a port, and task ids bound to logs.

Celery's prefork children count into files under PROMETHEUS_MULTIPROC_DIR (prometheus_client's
multiprocess mode), which the main process serves; `services.ops.multiprocess.prepare_metrics_dir`
must therefore run before this module (which imports prometheus_client) is first imported.
"""

from __future__ import annotations

import functools
import inspect
import os
from typing import Any

import structlog
from celery import Task, signals
from prometheus_client import CollectorRegistry, multiprocess

from services.ops.health import Heartbeat, heartbeat_path
from services.ops.logs import ids_of
from services.ops.metrics import WorkerMetrics, queue_depth, serve_metrics
from services.ops.multiprocess import multiprocess_mode
from services.settings import WorkerSettings
from services.workers.broker import waiting_tasks
from shared.app import stalls

_beats: list[Heartbeat] = []


@functools.cache
def worker_metrics() -> WorkerMetrics:
    """Returns this process's worker metrics (in the multiprocess files when prepared)."""
    return WorkerMetrics()


def install(settings: WorkerSettings) -> None:
    """Connects the heartbeat, the metrics server and the log ids to the worker's signals."""
    path = heartbeat_path(settings.heartbeat_dir, "workers")

    @signals.worker_ready.connect(weak=False)
    def _start_heartbeat(sender: Any = None, **_: Any) -> None:
        def connected() -> bool:
            connection = getattr(sender, "connection", None)
            return bool(connection is not None and connection.connected)

        _beats.append(Heartbeat(path, connected, interval=5.0).start())

    @signals.worker_shutdown.connect(weak=False)
    def _stop_heartbeat(**_: Any) -> None:
        for beat in _beats:
            beat.stop()

    @signals.worker_process_shutdown.connect(weak=False)
    def _mark_dead(pid: int | None = None, **_: Any) -> None:
        if multiprocess_mode():
            multiprocess.mark_process_dead(pid or os.getpid())  # type: ignore[no-untyped-call]

    signals.task_prerun.connect(bind_task_ids, weak=False)
    signals.task_postrun.connect(unbind_task_ids, weak=False)
    stalls.subscribe(count_stall)
    _serve_metrics(settings)


def count_stall(stall: stalls.Stall) -> None:
    """Counts a platform loop of this worker that gave up (`cardarena_platform_stalls`)."""
    worker_metrics().count_stall(stall)


def _serve_metrics(settings: WorkerSettings) -> None:
    """Serves the workers' metrics (every child's, and the queue depth) on their port."""
    if settings.workers_metrics_port == 0:
        return
    registry = CollectorRegistry()
    if multiprocess_mode():
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
    registry.register(queue_depth(settings.queue, waiting_tasks(settings)))
    serve_metrics(settings.workers_metrics_port, registry, "the workers")


def bind_task_ids(
    task: Task[Any, Any] | None = None,
    args: tuple[Any, ...] | None = None,
    kwargs: dict[str, Any] | None = None,
    **_: Any,
) -> None:
    """Binds the task's `game_id` / `tournament_id` / `schedule_id` arguments to the logs."""
    structlog.contextvars.clear_contextvars()
    if task is None:
        return
    try:
        bound = inspect.signature(task.run).bind_partial(*(args or ()), **(kwargs or {}))
    except TypeError:
        return
    structlog.contextvars.bind_contextvars(task=task.name, **ids_of(bound.arguments))


def unbind_task_ids(**_: Any) -> None:
    """Forgets the ids bound for the task that ended."""
    structlog.contextvars.clear_contextvars()
