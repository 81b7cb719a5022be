"""Fixtures of the integration tests: a real Celery worker process on this test's queue."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from celery import Celery

from services.bootstrap.workers import create_celery_app
from services.settings import WorkerSettings, load_settings
from tests.support import deals

ROOT = Path(__file__).resolve().parents[2]


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


@pytest.fixture
def celery_app(redis_url: str, namespace: str) -> Celery:
    """Returns the workers' Celery app as this test's senders use it: on this test's Redis."""
    return create_celery_app(load_settings(worker_env(redis_url, namespace), WorkerSettings))


@pytest.fixture
def worker(redis_url: str, namespace: str) -> Iterator[subprocess.Popen[bytes]]:
    """Runs a Celery worker process on this test's queue."""
    command = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "services.bootstrap.celery_main:app",
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
    process = subprocess.Popen(command, cwd=ROOT, env=worker_env(redis_url, namespace))
    yield process
    process.terminate()
    process.wait(timeout=30)
