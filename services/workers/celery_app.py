"""The Celery configuration of the workers and of every sender (`create_celery`).

The app with the tasks registered is `services.bootstrap.workers.create_celery_app`; the
`celery -A` entry point is `services.bootstrap.celery_main:app`. Nothing builds an app at
import time.

Redelivery over Redis (kombu's transport): a worker takes a task off the queue and keeps
it in an `unacked` hash until it acknowledges it, after the task ran (late acks). A task
held by a worker that is killed goes back to the queue when another worker's sweep finds
it older than the visibility timeout; the sweep runs every restore interval (kombu would
scan only on every tenth tick, 100 s apart; the throttle of 1 makes the setting the
period). A worker whose pool child dies (not the whole worker) requeues the task at once
(`task_reject_on_worker_lost`).

A task that Redis hands to a worker that dies before it records the task in `unacked`
is lost to both: kombu takes it with BRPOP, then records it. Beat's reconciliation
(`cardarena.reconcile_tournaments`) sends such a game's bot turns again, whether the game
belongs to a tournament or not.

Redelivery over RabbitMQ (`CELERY_BROKER_URL=amqp://...`) is the broker's own: a task a
worker holds unacknowledged goes back to the queue the moment that worker's connection
closes, and nothing is lost between taking and recording. The visibility timeout, the sweep
and their keys are Redis's alone (`redis_transport_options`); RabbitMQ gets publisher
confirms and socket timeouts instead (`amqp_transport_options`). Redis Cluster can never be
the broker: kombu's Redis transport speaks to one node.

Sends fail fast while the broker is unreachable (`PUBLISH_TIMEOUT_S`, one quick retry on a
fresh connection), and `services.workers.dispatch.broker_reachable` turns their failure into
`DispatchUnavailable`:
the sender keeps the work in the outbox (`shared.ports.outbox`) instead of failing its request.
A worker that loses a Redis broker while it holds tasks goes on, and puts those tasks back
on their queue when it reconnects (`services.workers.transport`).
"""

from __future__ import annotations

from typing import Any

from celery import Celery

from services.settings import WorkerSettings

PUBLISH_TIMEOUT_S = 2.0
"""How long a send waits for the broker to connect, or to answer a command, before it fails."""
PUBLISH_RETRY: dict[str, Any] = {
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.2,
}
"""A send's retries: one, at once, on a fresh connection (a restarted broker closed the old)."""


def transport_options(settings: WorkerSettings) -> dict[str, Any]:
    """Returns the transport options of the settings' broker: RabbitMQ's or Redis's."""
    if settings.broker_is_amqp:
        return amqp_transport_options()
    return redis_transport_options(settings)


def amqp_transport_options() -> dict[str, Any]:
    """Returns py-amqp's connection options: publisher confirms, and socket timeouts.

    A publish over AMQP is a write to the socket, which a broker gone without closing the
    connection (a partition, a failover) never refuses: without a confirm the send returns
    and the task is lost. With confirms each send waits for the broker's `basic.ack`, and the
    read timeout bounds that wait, so the send fails instead (and its work waits in the
    outbox). RabbitMQ itself puts a killed worker's unacknowledged tasks back at once, when
    its connection closes: nothing here is about redelivery.
    """
    return {
        "confirm_publish": True,
        "read_timeout": PUBLISH_TIMEOUT_S,
        "write_timeout": PUBLISH_TIMEOUT_S,
    }


def redis_transport_options(settings: WorkerSettings) -> dict[str, Any]:
    """Returns kombu's Redis transport options: the visibility timeout, a sweep every restore
    interval, and the sweep's keys under the namespace.

    The keys are the namespace's own so that another deployment (or test) on the same Redis
    database, with another visibility timeout, never sends this one's tasks again, and a
    worker killed in the middle of a sweep holds up only its own deployment's sweeps, for
    one restore interval (kombu's default: 300 s, for every user of the database). The
    socket timeouts bound a send to a broker that is gone without closing the connection.
    """
    prefix = settings.namespace
    return {
        "visibility_timeout": settings.broker_visibility_timeout,
        "unacked_restore_interval": settings.broker_restore_interval,
        "unacked_restore_throttle": 1,
        "unacked_key": f"{prefix}unacked",
        "unacked_index_key": f"{prefix}unacked_index",
        "unacked_mutex_key": f"{prefix}unacked_mutex",
        "unacked_mutex_expire": settings.broker_restore_interval,
        "socket_connect_timeout": PUBLISH_TIMEOUT_S,
        "socket_timeout": PUBLISH_TIMEOUT_S,
    }


def create_celery(settings: WorkerSettings) -> Celery:
    """Returns a Celery app for `settings`, with no task registered: late acks, one task
    prefetched at a time, sends that fail fast."""
    app = Celery("cardarena", broker=settings.celery_broker)
    if settings.celery_broker.startswith("redis://"):
        # kombu's Redis transport, with a worker that survives losing the broker mid-task
        app.conf.broker_transport = "services.workers.transport:Transport"
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_default_queue=settings.queue,
        task_serializer="json",
        accept_content=["json"],
        task_ignore_result=True,
        broker_connection_retry_on_startup=True,
        broker_connection_timeout=PUBLISH_TIMEOUT_S,
        task_publish_retry_policy=PUBLISH_RETRY,
        broker_transport_options=transport_options(settings),
        worker_hijack_root_logger=False,
    )
    return app
