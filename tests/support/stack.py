"""Helpers of the end-to-end tests: ports, waiting, health checks."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import httpx
import psycopg
import pytest
import redis

from services.cli.dev import Launcher, stack_commands, stack_environment
from services.projection.queries import archived_events, get_game_row
from shared.catalog import get_game
from shared.messages.envelope import RecordedEvent
from shared.sdk.client import Client, SeatView
from shared.store.redis_store import RedisEventStore
from tests.support import deals

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


def play_due_seats(http: httpx.Client, game_id: str, seats: Sequence[int]) -> bool:
    """Takes the first legal action of every external seat that is due; returns whether any."""
    acted = False
    for seat in seats:
        view = http.get(f"/v1/games/{game_id}/view", params={"seat": seat}).json()
        if seat not in view["to_move"] or not view["legal_actions"]:
            continue
        body = {
            "seat": seat,
            "action": view["legal_actions"][0],
            "expected_version": view["version"],
        }
        key = {"Idempotency-Key": f"{game_id}:{seat}:{view['version']}"}
        response = http.post(f"/v1/games/{game_id}/actions", json=body, headers=key)
        assert response.status_code in {200, 409}, response.text
        acted = acted or response.status_code == 200
    return acted


def play_to_the_end(
    http: httpx.Client, game_id: str, seats: Sequence[int], seconds: float
) -> dict[str, Any]:
    """Plays the external seats while the workers play the bots; returns the finished game."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        game: dict[str, Any] = http.get(f"/v1/games/{game_id}").json()
        if game["status"] != "playing":
            return game
        if not play_due_seats(http, game_id, seats):
            time.sleep(0.02)
    pytest.fail(f"the game did not end within {seconds}s")


def check_projected_and_archived(
    stack: Stack, game_name: str, game_id: str, game: dict[str, Any]
) -> list[RecordedEvent]:
    """Checks the projection's row and archive against the finished game; returns the stream."""
    version = game["version"]

    def projected_row() -> dict[str, Any] | None:
        with psycopg.connect(stack.database_url) as conn:
            row = get_game_row(conn, game_id)
        return row if row and row["status"] != "playing" and row["version"] == version else None

    row = wait_for(projected_row, 60, "the projection to catch up")
    assert (row["status"], row["result"]) == (game["status"], game["result"])

    with psycopg.connect(stack.database_url) as conn:
        archived = archived_events(conn, game_id)
    streamed = stack.store.read(game_id)
    assert [e.version for e in archived] == list(range(1, version + 1))
    assert [(e.version, e.type, e.data) for e in archived] == [
        (e.version, e.type, e.data) for e in streamed
    ]
    spec = get_game(game_name)
    from_archive = spec.fold(spec.codec.decode_all(archived))
    assert from_archive == spec.fold(spec.codec.decode_all(streamed))
    assert spec.is_over(from_archive)
    return streamed


class Stack:
    """The processes of one stack and the addresses to reach them."""

    def __init__(self, base_url: str, database_url: str, store: RedisEventStore) -> None:
        self.base_url = base_url
        self.database_url = database_url
        self.store = store


BEAT_PAIR_SECONDS = "0.5"
"""How often beat sends the ladders' pairing in a `running_stack(..., beat=True)`."""

ADMIN_KEY = "e2e-admin-key-0123456789"
"""The admin key of the `secured_stack`."""


def register_bot(host: Client | str, name: str, **fields: Any) -> str:
    """Registers the bot `name` as the host, through `host` (a client with the admin key) or
    the stack at the URL `host` (with `ADMIN_KEY`): an external Shithead bot unless `fields`
    say otherwise. Returns its token."""
    if isinstance(host, str):
        with Client(host, token=ADMIN_KEY) as admin:
            return register_bot(admin, name, **fields)
    bot = host.register_bot(name, **{"game": "shithead", "kind": "external", **fields})
    assert bot.token
    return bot.token


@contextlib.contextmanager
def running_stack(
    redis_url: str,
    redis_client: redis.Redis,
    namespace: str,
    database_url: str,
    extra_env: dict[str, str] | None = None,
    *,
    beat: bool = False,
) -> Iterator[Stack]:
    """Runs the game service, a worker and the projection service while the block runs (and,
    with `beat`, beat, sending the ladders' pairing every `BEAT_PAIR_SECONDS` unless
    `extra_env` says otherwise); they deal with the tests' given deal secret, as
    `Stack.store` does."""
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
        **({"CARDARENA_LADDER_PAIR_SECONDS": BEAT_PAIR_SECONDS} if beat else {}),
        **(extra_env or {}),
    }
    base_url = f"http://127.0.0.1:{port}"
    try:
        with Launcher(env, cwd=ROOT, grace=30) as launcher:
            for name, command in stack_commands(concurrency=2):
                if beat or name != "beat":
                    launcher.start(name, command)
            wait_until_healthy(base_url, "the game service")
            store = deals.attached(RedisEventStore(redis_client, namespace=namespace))
            yield Stack(base_url, database_url, store)
    finally:
        shutil.rmtree(heartbeats, ignore_errors=True)


def play_until_over(client: Client, game_id: str, wait: int = 5) -> None:
    """Plays the bot's turns of `game_id` until the game is over."""
    while client.game(game_id)["status"] == "playing":
        for turn in client.turns(wait=wait):
            if turn.game_id == game_id:
                client.act(game_id, turn.seat, first_legal)


def first_legal(view: SeatView) -> dict[str, Any]:
    """Plays the first legal action."""
    return view.legal_actions[0]
