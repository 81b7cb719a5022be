"""Readiness against the real Redis and PostgreSQL: ready only once every migration is applied."""

from __future__ import annotations

from litestar.testing import TestClient

from services.game.app import create_app
from services.ops.health import StackReadiness, expected_migrations
from services.ops.migrate import migrate
from shared.app.runtime import InProcessDispatcher
from shared.store.memory import InMemoryEventStore


def get_ready(readiness: StackReadiness) -> tuple[int, str]:
    """Returns the status and the detail (or status) of GET /ready with `readiness`."""
    store = InMemoryEventStore()
    with TestClient(create_app(store, InProcessDispatcher(store), readiness=readiness)) as client:
        response = client.get("/ready")
    body = response.json()
    return response.status_code, body.get("detail") or body["status"]


def test_a_fresh_database_is_not_ready_until_its_migrations_are_applied(
    redis_url: str, database_url: str
) -> None:
    readiness = StackReadiness(redis_url, database_url)
    pending = ", ".join(expected_migrations())
    assert get_ready(readiness) == (503, f"postgresql: migrations not applied: {pending}")

    migrate(database_url)
    assert get_ready(readiness) == (200, "ready")


def test_a_database_that_does_not_exist_is_not_ready(redis_url: str, database_url: str) -> None:
    missing = database_url.replace("dbname=cardarena_test_", "dbname=missing_")
    missing = missing.replace("/cardarena_test_", "/missing_")
    status, detail = get_ready(StackReadiness(redis_url, missing))
    assert status == 503
    assert detail.startswith("postgresql: ")
    assert "missing_" in detail
