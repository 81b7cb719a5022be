"""The environment of a Celery worker process a test starts."""

from __future__ import annotations

import os

from tests.support import deals


def worker_env(redis_url: str, namespace: str) -> dict[str, str]:
    """Returns the environment of a worker using this test's keys and queue (its webhook
    bots listen on 127.0.0.1), dealing with the tests' given deal secret."""
    return {
        **os.environ,
        "CARDARENA_STORE": "redis",
        "CARDARENA_DISPATCH": "celery",
        "REDIS_URL": redis_url,
        "CARDARENA_NAMESPACE": namespace,
        "CARDARENA_QUEUE": f"{namespace}bots",
        "CARDARENA_WEBHOOK_ALLOW_PRIVATE": "1",
        **deals.ENVIRONMENT,
    }
