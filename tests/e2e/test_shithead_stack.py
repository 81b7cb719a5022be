"""A four-player Shithead game through the whole stack: two workers' bots, two HTTP clients."""

from __future__ import annotations

import time
from typing import Any

import httpx
import psycopg
import pytest

from services.projection.queries import archived_events, get_game_row
from shared.games.base import get_game
from tests.e2e.conftest import Stack
from tests.e2e.support import wait_for

pytestmark = pytest.mark.e2e

EXTERNAL = (0, 2)
"""The seats the test plays through HTTP; seats 1 and 3 are built-in bots on the workers."""


def bot_seats() -> list[dict[str, str]]:
    """Returns the two bot seats: the heuristic (where registered) and the random bot."""
    first = "heuristic" if "heuristic" in get_game("shithead").bots else "random"
    return [{"kind": "bot", "bot": first}, {"kind": "bot", "bot": "random"}]


def play_due_seats(http: httpx.Client, game_id: str) -> bool:
    """Takes the first legal action of every external seat that is due; returns whether any."""
    acted = False
    for seat in EXTERNAL:
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


def play_to_the_end(http: httpx.Client, game_id: str, seconds: float) -> dict[str, Any]:
    """Plays the external seats while the workers play the bots; returns the finished game."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        game: dict[str, Any] = http.get(f"/v1/games/{game_id}").json()
        if game["status"] != "playing":
            return game
        if not play_due_seats(http, game_id):
            time.sleep(0.02)
    pytest.fail(f"the game did not end within {seconds}s")


def test_a_four_player_shithead_game_of_two_bots_and_two_http_clients_runs_to_its_end(
    stack: Stack,
) -> None:
    first_bot, second_bot = bot_seats()
    seats = [{"kind": "external"}, first_bot, {"kind": "external"}, second_bot]
    body = {"game": "shithead", "ruleset": "classic", "seats": seats, "seed": 5}
    with httpx.Client(base_url=stack.base_url, timeout=10) as http:
        created = http.post("/v1/games", json=body)
        assert created.status_code == 201, created.text
        game_id = created.json()["game_id"]
        game = play_to_the_end(http, game_id, 240)
        events = http.get(f"/v1/games/{game_id}/events", params={"seat": 0}).json()["events"]
    assert game["status"] in {"finished", "capped"}
    assert sorted(game["result"]["places"]) == [1, 2, 3, 4]
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
    spec = get_game("shithead")
    from_archive = spec.fold(spec.codec.decode_all(archived))
    assert from_archive == spec.fold(spec.codec.decode_all(streamed))
    assert spec.is_over(from_archive)
    decided = {e.type for e in streamed}
    assert {"PlayerReady", "CardsPlayed", "GameFinished"} <= decided
    assert [e["version"] for e in events] == list(range(1, version + 1))
