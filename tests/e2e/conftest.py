"""The whole stack as separate processes: game service, Celery worker, projection."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
import redis

from shared.store.redis_store import RedisEventStore
from tests.e2e.support import ROOT, free_port, wait_until_healthy


class Stack:
    """The processes of one stack and the addresses to reach them."""

    def __init__(self, base_url: str, database_url: str, store: RedisEventStore) -> None:
        self.base_url = base_url
        self.database_url = database_url
        self.store = store


ADMIN_KEY = "e2e-admin-key-0123456789"
"""The admin key of the `secured_stack`."""


@pytest.fixture
def stack(
    redis_url: str, redis_client: redis.Redis, namespace: str, database_url: str
) -> Iterator[Stack]:
    """Starts the game service, a worker and the projection service; stops them afterwards."""
    with running_stack(redis_url, redis_client, namespace, database_url) as started:
        yield started


@pytest.fixture
def secured_stack(
    redis_url: str, redis_client: redis.Redis, namespace: str, database_url: str
) -> Iterator[Stack]:
    """The same stack with an admin key (`ADMIN_KEY`): hosting needs it, seats need tokens."""
    extra = {"CARDARENA_ADMIN_KEY": ADMIN_KEY, "CARDARENA_RATE_LIMIT": "0"}
    with running_stack(redis_url, redis_client, namespace, database_url, extra) as started:
        yield started


@contextlib.contextmanager
def running_stack(
    redis_url: str,
    redis_client: redis.Redis,
    namespace: str,
    database_url: str,
    extra_env: dict[str, str] | None = None,
) -> Iterator[Stack]:
    """Runs the game service, a worker and the projection service while the block runs."""
    port = free_port()
    env = {
        **os.environ,
        "CARDARENA_STORE": "redis",
        "CARDARENA_DISPATCH": "celery",
        "REDIS_URL": redis_url,
        "DATABASE_URL": database_url,
        "CARDARENA_NAMESPACE": namespace,
        "CARDARENA_QUEUE": f"{namespace}bots",
        "CARDARENA_PORT": str(port),
        **(extra_env or {}),
    }
    cli = [sys.executable, "-m", "services.cli"]
    commands = [
        [*cli, "serve", "game"],
        [*cli, "serve", "workers", "--concurrency", "2"],
        [*cli, "serve", "projection"],
    ]
    processes = [subprocess.Popen(command, cwd=ROOT, env=env) for command in commands]
    base_url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(base_url, "the game service")
        yield Stack(base_url, database_url, RedisEventStore(redis_client, namespace=namespace))
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
