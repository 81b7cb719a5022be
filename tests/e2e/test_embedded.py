"""The README's next step: `cardarena serve` with only Python and uv, nothing else running."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest

from tests.support.stack import ROOT, free_port, wait_until_healthy


@pytest.fixture
def embedded() -> Iterator[str]:
    """Runs `cardarena serve` with the embedded defaults; returns its base URL."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CARDARENA_", "REDIS_"))}
    env |= {"CARDARENA_PORT": str(port), "REDIS_URL": "redis://127.0.0.1:1/0"}
    process = subprocess.Popen(
        [sys.executable, "-m", "services.cli.main", "serve"], cwd=ROOT, env=env
    )
    base_url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(base_url, "the embedded game service")
        yield base_url
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_the_embedded_service_plays_a_game_in_process_without_redis_or_postgres(
    embedded: str,
) -> None:
    created = httpx.post(
        f"{embedded}/v1/games", json={"game": "beggar", "players": 3, "seed": 5}, timeout=10
    )
    assert created.status_code == 201, created.text
    game = created.json()
    assert game["status"] in {"finished", "loop", "capped"}
    events = httpx.get(f"{embedded}/v1/games/{game['game_id']}/events", timeout=10).json()
    assert [e["version"] for e in events["events"]] == list(range(1, game["version"] + 1))
    assert events["events"][-1]["type"] == "GameFinished"
    schema = httpx.get(f"{embedded}/schema/openapi.json", timeout=10)
    assert schema.status_code == 200
