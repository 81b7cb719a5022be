"""Operations of the game service and the probes: /ready, /metrics, JSON logs, `cardarena probe`.

None of these need a server: the failing checks point at closed ports; the checks that
pass against real Redis and PostgreSQL are in tests/integration/test_operations.py, the
probes of the whole stack in tests/e2e/test_operations_stack.py.
"""

from __future__ import annotations

import io
import json
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog
from litestar.testing import TestClient

from services.cli.main import main
from services.game.app import create_app
from services.ops.health import StackReadiness, heartbeat_path, touch
from services.ops.logs import configure_logging
from services.ops.metrics import GameMetrics
from shared.app.runtime import InProcessDispatcher
from shared.store.memory import InMemoryEventStore
from tests.support.api import Client
from tests.support.stack import free_port


@pytest.fixture
def metrics() -> GameMetrics:
    """Returns a metrics holder with a registry of its own."""
    return GameMetrics()


@pytest.fixture
def client(metrics: GameMetrics) -> Iterator[Client]:
    """Returns a client of the embedded game service counting into `metrics`."""
    store = InMemoryEventStore()
    with TestClient(create_app(store, InProcessDispatcher(store), game_metrics=metrics)) as c:
        yield c


def closed_redis() -> str:
    """Returns the URL of a Redis port nothing listens on."""
    return f"redis://127.0.0.1:{free_port()}/0"


def closed_database() -> str:
    """Returns the URL of a PostgreSQL port nothing listens on."""
    return f"postgresql://postgres@127.0.0.1:{free_port()}/nothing"


def ready_with(readiness: StackReadiness) -> tuple[int, dict[str, Any], float]:
    """Returns the status, body and seconds of GET /ready with `readiness`."""
    store = InMemoryEventStore()
    app = create_app(store, InProcessDispatcher(store), readiness=readiness)
    with TestClient(app) as client:
        started = time.monotonic()
        response = client.get("/ready")
        return response.status_code, response.json(), time.monotonic() - started


def test_the_embedded_service_is_ready_while_its_store_answers(client: Client) -> None:
    response = client.get("/ready")
    assert (response.status_code, response.json()) == (200, {"status": "ready"})
    assert client.get("/health").status_code == 200


def test_an_unreachable_redis_is_a_503_naming_redis_soon() -> None:
    status, body, seconds = ready_with(StackReadiness(closed_redis(), None))
    assert status == 503
    assert body["type"] == "urn:cardarena:problem:not-ready"
    assert body["detail"].startswith("redis: ")
    assert seconds < 5


def test_an_unreachable_database_is_a_503_naming_postgresql_and_redis_too() -> None:
    status, body, seconds = ready_with(StackReadiness(closed_redis(), closed_database()))
    assert status == 503
    assert "redis: " in body["detail"]
    assert "postgresql: " in body["detail"]
    assert seconds < 5


def test_a_check_that_hangs_is_cut_off_within_its_timeout() -> None:
    class Hanging(StackReadiness):
        def problems(self) -> list[str]:
            from services.ops.health import run_checks  # noqa: PLC0415

            def hang() -> str | None:
                time.sleep(3)
                return None

            return run_checks({"redis": hang}, deadline_s=0.2)

    status, body, seconds = ready_with(Hanging("", None))
    assert (status, body["detail"]) == (503, "redis: no answer within 0.2s")
    assert seconds < 2


def count(metrics: GameMetrics, name: str, **labels: str) -> float:
    """Returns the value of counter `name` with `labels` (0 when never counted)."""
    value = metrics.registry.get_sample_value(f"cardarena_{name}_total", labels)
    return value or 0.0


def create_shithead(client: Client, key: str | None = None) -> dict[str, Any]:
    """Creates a two-seat Shithead game with external seats; returns its body."""
    body = {"game": "shithead", "seats": [{"kind": "external"}, {"kind": "external"}]}
    headers = {"Idempotency-Key": key} if key else {}
    response = client.post("/v1/games", json=body, headers=headers)
    assert response.status_code in {200, 201}, response.text
    created: dict[str, Any] = response.json()
    return created


def a_move(client: Client, game_id: str) -> dict[str, Any]:
    """Returns the body of a legal move of the first seat to move."""
    for seat in (0, 1):
        view = client.get(f"/v1/games/{game_id}/view", params={"seat": seat}).json()
        if view["legal_actions"]:
            action = view["legal_actions"][0]
            return {"seat": seat, "action": action, "expected_version": view["version"]}
    raise AssertionError("no seat may move")


def test_metrics_count_creations_moves_conflicts_and_replays_exactly(
    client: Client, metrics: GameMetrics
) -> None:
    game_id = create_shithead(client, key="metrics-create")["game_id"]
    create_shithead(client, key="metrics-create")
    move = a_move(client, game_id)
    actions = f"/v1/games/{game_id}/actions"
    key = {"Idempotency-Key": "metrics-move"}
    assert client.post(actions, json=move, headers=key).status_code == 200
    assert client.post(actions, json=move, headers=key).json()["replayed"] is True
    assert client.post(actions, json=move).status_code == 409

    assert count(metrics, "games_created", game="shithead") == 1
    assert count(metrics, "moves_appended", game="shithead") == 1
    assert count(metrics, "conflicts", cause="stale-version") == 1
    assert count(metrics, "idempotent_replays", operation="createGame") == 1
    assert count(metrics, "idempotent_replays", operation="postAction") == 1
    route = "/v1/games/{game_id}/actions"
    assert count(metrics, "http_requests", method="POST", route=route, status="200") == 2
    assert count(metrics, "http_requests", method="POST", route=route, status="409") == 1

    exposition = client.get("/metrics")
    assert exposition.status_code == 200
    assert exposition.headers["content-type"].startswith("text/plain")
    assert 'cardarena_conflicts_total{cause="stale-version"} 1.0' in exposition.text
    assert "cardarena_tournaments_running" not in exposition.text
    assert game_id not in exposition.text


@pytest.fixture
def json_logs() -> Iterator[io.StringIO]:
    """Routes the logs, as `cardarena serve` does, into a buffer; restores logging after."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    buffer = io.StringIO()
    configure_logging(json=True, stream=buffer)
    try:
        yield buffer
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in handlers:
            root.addHandler(handler)
        root.setLevel(level)
        structlog.reset_defaults()


def test_every_log_line_of_a_posted_move_carries_the_game_id(
    client: Client, json_logs: io.StringIO
) -> None:
    game_id = create_shithead(client)["game_id"]
    move = a_move(client, game_id)
    assert client.post(f"/v1/games/{game_id}/actions", json=move).status_code == 200
    logging.getLogger("library").warning("outside any request")

    lines = [json.loads(line) for line in json_logs.getvalue().splitlines()]
    accepted = [line for line in lines if line["event"] == "action accepted"]
    assert len(accepted) == 1
    assert accepted[0]["game_id"] == game_id
    assert {"timestamp", "level", "logger"} <= set(accepted[0])
    (library,) = [line for line in lines if line["event"] == "outside any request"]
    assert library["level"] == "warning"
    assert "game_id" not in library


def probe(*args: str) -> int:
    """Runs `cardarena probe` with `args`; returns its exit code."""
    return main(["probe", *args])


@pytest.fixture
def heartbeats(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Points the probes at a heartbeat directory of this test's own, and Redis nowhere."""
    monkeypatch.setenv("CARDARENA_HEARTBEAT_DIR", str(tmp_path))
    monkeypatch.setenv("CARDARENA_HEARTBEAT_MAX_AGE", "30")
    monkeypatch.setenv("REDIS_URL", closed_redis())
    monkeypatch.setenv("DATABASE_URL", closed_database())
    monkeypatch.setenv("CARDARENA_PORT", str(free_port()))
    return tmp_path


@pytest.mark.parametrize("service", ["projection", "workers", "beat"])
def test_a_fresh_heartbeat_is_alive_and_a_stale_or_missing_one_is_not(
    service: str, heartbeats: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert probe(service) == 1
    path = heartbeat_path(str(heartbeats), service)
    touch(path)
    assert probe(service) == 0
    old = time.time() - 31
    os.utime(path, (old, old))
    assert probe(service) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"{service}: not alive: no heartbeat at {path}"
    assert lines[1].startswith(f"{service}: alive: heartbeat ")
    assert lines[2].startswith(f"{service}: not alive: heartbeat 31s old (max 30s)")


def test_a_live_service_without_redis_is_not_ready(
    heartbeats: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    touch(heartbeat_path(str(heartbeats), "projection"))
    assert probe("projection", "--ready") == 1
    out = capsys.readouterr().out
    assert out.startswith("projection: not ready: redis: ")
    assert "postgresql: " in out
    assert len(out.splitlines()) == 1


def test_probing_a_game_service_that_does_not_listen_fails(
    heartbeats: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert probe("game") == 1
    assert probe("game", "--ready") == 1
    first, second = capsys.readouterr().out.splitlines()
    assert first.startswith("game: not alive: http://127.0.0.1:")
    assert second.startswith("game: not ready: http://127.0.0.1:")
