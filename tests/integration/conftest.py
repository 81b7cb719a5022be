"""Fixtures of the integration tests: a real Celery worker process on this test's queue."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest
from celery import Celery

from services.bootstrap.workers import create_celery_app
from services.settings import WorkerSettings, load_settings
from tests.support.served import served_game
from tests.support.stack import ROOT
from tests.support.workers import worker_env


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


@pytest.fixture
def service(redis_url: str, namespace: str, database_url: str) -> Iterator[str]:
    """Runs `cardarena serve game` on Redis (bot turns in-process) over a migrated database
    (the bots' streams read the projection's views); returns its base URL."""
    with served_game(redis_url, namespace, database_url) as base_url:
        yield base_url
