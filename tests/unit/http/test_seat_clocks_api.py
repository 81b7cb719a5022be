"""A timed game's public resource answers every seat's clock, so a spectator's page can count
it down; an untimed game answers none."""

from __future__ import annotations

import pytest

from tests.support.api import ADMIN, KEY, Client

pytestmark = pytest.mark.service(admin_key=KEY)

CLOCK = {"move_seconds": 30.0, "bank_seconds": 120.0, "strikes_to_forfeit": 3}


def test_a_timed_game_shows_each_seat_s_bank_strikes_and_the_deadline_of_the_seat_to_move(
    client: Client,
) -> None:
    seats = [{"kind": "external"}, {"kind": "bot", "bot": "random"}]
    body = {"game": "autobus", "seats": seats, "seed": 7, "clock": CLOCK}
    created = client.post("/v1/games", json=body, headers=ADMIN)
    assert created.status_code == 201, created.text
    game = client.get(f"/v1/games/{created.json()['game_id']}").json()  # as a spectator
    clocks = game["clocks"]
    assert [clock["timed"] for clock in clocks] == [True, False]
    assert all(clock["bank_ms"] == 120_000 for clock in clocks)
    assert all(clock["strikes"] == 0 and not clock["forfeited"] for clock in clocks)
    assert game["to_move"] == [0], "autobus: seat 0 starts"
    assert "deadline" not in clocks[1]
    started = client.get(f"/v1/games/{game['game_id']}/events").json()["events"][-1]
    assert clocks[0]["deadline"] == started["recorded_at"] + 30_000 + 120_000


def test_an_untimed_game_answers_no_clocks(client: Client) -> None:
    created = client.post("/v1/games", json={"game": "shithead", "players": 2}, headers=ADMIN)
    assert "clocks" not in client.get(f"/v1/games/{created.json()['game_id']}").json()
