"""Builds the workers' Celery app: the workers' configuration, with every task registered on
adapters that each worker process builds on first use."""

from __future__ import annotations

from celery import Celery

from services.bootstrap.stores import build_outbox, build_slots, build_store, build_views
from services.settings import WorkerSettings
from services.workers.celery_app import create_celery
from services.workers.tasks import Worker, register


def create_celery_app(settings: WorkerSettings) -> Celery:
    """Returns the workers' Celery app for `settings`, its tasks registered by name."""
    app = create_celery(settings)
    worker = Worker(
        app,
        settings,
        store=lambda: build_store(settings),
        outbox=lambda: build_outbox(settings),
        views=lambda: build_views(settings, worker.store()),
        slots=lambda: build_slots(settings),
    )
    register(app, worker)
    return app
