"""The Celery application of the workers; `celery -A services.workers.celery_app worker`."""

from __future__ import annotations

from celery import Celery

from shared.settings import CommonSettings, load_settings


def create_celery(settings: CommonSettings) -> Celery:
    """Returns the Celery app for `settings`: late acks, one task prefetched at a time."""
    app = Celery("cardarena", broker=settings.celery_broker, include=["services.workers.tasks"])
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_default_queue=settings.queue,
        task_serializer="json",
        accept_content=["json"],
        task_ignore_result=True,
        broker_connection_retry_on_startup=True,
        broker_transport_options={"visibility_timeout": 3600},
        worker_hijack_root_logger=False,
    )
    return app


app = create_celery(load_settings())
