"""The whole stack as separate processes: game service, Celery worker, projection service."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx
import psycopg
import pytest
import redis

from services.projection.queries import archived_events, get_game_row
from shared.games.base import get_game
from shared.store.redis_store import RedisEventStore

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
T = TypeVar("T")


def free_port() -> int:
    """Returns a TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_for(check: Callable[[], T | None], seconds: float, what: str) -> T:
    """Returns the first truthy result of `check`, failing after `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.2)
    pytest.fail(f"timed out after {seconds}s waiting for {what}")


def wait_until_healthy(base_url: str, what: str) -> None:
    """Waits until the service at `base_url` answers its health check."""

    def healthy() -> bool:
        try:
            return httpx.get(f"{base_url}/health", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    wait_for(healthy, 60, what)


class Stack:
    """The processes of one stack and the addresses to reach them."""

    def __init__(self, base_url: str, database_url: str, store: RedisEventStore) -> None:
        self.base_url = base_url
        self.database_url = database_url
        self.store = store


@pytest.fixture
def stack(
    redis_url: str, redis_client: redis.Redis, namespace: str, database_url: str
) -> Iterator[Stack]:
    """Starts the game service, a worker and the projection service; stops them afterwards."""
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


def test_a_four_player_beggar_game_runs_through_the_whole_stack(stack: Stack) -> None:
    created = httpx.post(
        f"{stack.base_url}/v1/games", json={"game": "beggar", "players": 4, "seed": 2}, timeout=10
    )
    assert created.status_code == 201, created.text
    game_id = created.json()["game_id"]

    def finished_game() -> dict[str, Any] | None:
        body: dict[str, Any] = httpx.get(f"{stack.base_url}/v1/games/{game_id}", timeout=10).json()
        return body if body["status"] != "playing" else None

    game = wait_for(finished_game, 120, "the workers to finish the game")
    version = game["version"]

    def projected_row() -> dict[str, Any] | None:
        with psycopg.connect(stack.database_url) as conn:
            row = get_game_row(conn, game_id)
        return row if row and row["status"] != "playing" and row["version"] == version else None

    row = wait_for(projected_row, 60, "the projection to catch up")
    assert row["status"] == game["status"]
    assert row["result"] == game["result"]

    with psycopg.connect(stack.database_url) as conn:
        archived = archived_events(conn, game_id)
    streamed = stack.store.read(game_id)
    assert [e.version for e in archived] == list(range(1, version + 1))
    assert [(e.version, e.type, e.data) for e in archived] == [
        (e.version, e.type, e.data) for e in streamed
    ]
    spec = get_game("beggar")
    from_archive = spec.fold(spec.codec.decode_all(archived))
    from_stream = spec.fold(spec.codec.decode_all(streamed))
    assert from_archive == from_stream
    assert spec.is_over(from_archive)
