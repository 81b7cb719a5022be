"""The whole stack as separate processes: game service, Celery worker, projection."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

from tests.support.stack import ADMIN_KEY, Stack, running_stack


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
