"""The whole stack as separate processes: game service, Celery worker, projection."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator

import pytest
import redis

from services.cli.dev import Launcher, stack_commands, stack_environment
from shared.store.redis_store import RedisEventStore
from tests.e2e.support import ROOT, free_port, wait_until_healthy
from tests.support import deals


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
    """Runs the game service, a worker and the projection service while the block runs; they
    deal with the tests' given deal secret, as `Stack.store` does."""
    port = free_port()
    heartbeats = tempfile.mkdtemp(prefix="cardarena-heartbeats-")
    env = {
        **stack_environment(os.environ, redis_url, database_url, "127.0.0.1", port),
        "CARDARENA_NAMESPACE": namespace,
        "CARDARENA_QUEUE": f"{namespace}bots",
        # Stacks of other tests may run beside this one: no shared heartbeats or ports.
        "CARDARENA_HEARTBEAT_DIR": heartbeats,
        "CARDARENA_PROJECTION_METRICS_PORT": "0",
        "CARDARENA_WORKERS_METRICS_PORT": "0",
        **deals.ENVIRONMENT,  # every deal pinned: the tests' given deal secret
        **(extra_env or {}),
    }
    base_url = f"http://127.0.0.1:{port}"
    try:
        with Launcher(env, cwd=ROOT, grace=30) as launcher:
            for name, command in stack_commands(concurrency=2):
                if name != "beat":
                    launcher.start(name, command)
            wait_until_healthy(base_url, "the game service")
            store = deals.attached(RedisEventStore(redis_client, namespace=namespace))
            yield Stack(base_url, database_url, store)
    finally:
        shutil.rmtree(heartbeats, ignore_errors=True)
