"""Fixtures of the integration tests: a real Celery worker process on this test's queue."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.workers.celery_app import app as celery_app

ROOT = Path(__file__).resolve().parents[2]


def worker_env(redis_url: str, namespace: str) -> dict[str, str]:
    """Returns the environment of a worker using this test's keys and queue (its webhook
    bots listen on 127.0.0.1)."""
    return {
        **os.environ,
        "CARDARENA_STORE": "redis",
        "CARDARENA_DISPATCH": "celery",
        "REDIS_URL": redis_url,
        "CARDARENA_NAMESPACE": namespace,
        "CARDARENA_QUEUE": f"{namespace}bots",
        "CARDARENA_WEBHOOK_ALLOW_PRIVATE": "1",
    }


@pytest.fixture
def worker(redis_url: str, namespace: str) -> Iterator[subprocess.Popen[bytes]]:
    """Runs a Celery worker process on this test's queue."""
    command = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "services.workers.celery_app",
        "worker",
        "-Q",
        f"{namespace}bots",
        "--pool=threads",
        "--concurrency=4",
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
        "--loglevel=WARNING",
    ]
    celery_app.conf.update(broker_url=redis_url)
    process = subprocess.Popen(command, cwd=ROOT, env=worker_env(redis_url, namespace))
    yield process
    process.terminate()
    process.wait(timeout=30)
