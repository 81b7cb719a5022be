"""`celery -A services.bootstrap.celery_main:app worker`: the workers' app of the environment's
settings, built when the celery command imports this module (nothing else imports it)."""

from __future__ import annotations

from services.bootstrap.workers import create_celery_app
from services.settings import WorkerSettings, load_settings

app = create_celery_app(load_settings(None, WorkerSettings))
