"""The whole stack as separate processes (game service, Celery worker, projection), and the
browser tests' Chromium and clients of the service a module serves."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
import redis
from playwright.sync_api import Browser

from tests.support.browsing import launched
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


# The browser tests' fixtures: each module serves the game service its own way (its `base_url`).


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Returns headless Debian Chromium under Playwright (never a downloaded browser)."""
    with launched() as started:
        yield started


@pytest.fixture(scope="module")
def host(base_url: str) -> Iterator[httpx.Client]:
    """Returns a client of the module's game service with the admin key (to host and to play
    hosted seats)."""
    headers = {"Authorization": f"Bearer {ADMIN_KEY}"}
    with httpx.Client(base_url=base_url, timeout=60, headers=headers) as client:
        yield client


@pytest.fixture(scope="module")
def anyone(base_url: str) -> Iterator[httpx.Client]:
    """Returns a client of the module's game service without credentials: what a page or a
    spectator reads as."""
    with httpx.Client(base_url=base_url, timeout=30) as client:
        yield client
