"""The whole stack as separate processes: game service, Celery worker, projection service."""

from __future__ import annotations

from typing import Any

import httpx
import psycopg

from services.projection.queries import archived_events, get_game_row
from shared.catalog import get_game
from tests.support.stack import Stack, wait_for

"""Re-exported from conftest.py (where the `stack` fixture lives) for test_embedded.py."""


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
