"""A four-player Hospodský autobus game through the whole stack: two bots, two HTTP clients."""

from __future__ import annotations

import httpx

from shared.catalog import get_game
from tests.support.stack import Stack, check_projected_and_archived, play_to_the_end

EXTERNAL = (1, 2)
"""The seats the test plays through HTTP; seats 0 and 3 are built-in bots on the workers."""


def test_a_four_player_autobus_game_of_two_bots_and_two_http_clients_runs_to_its_end(
    stack: Stack,
) -> None:
    bots = get_game("autobus").bots
    first = {"kind": "bot", "bot": "heuristic" if "heuristic" in bots else "random"}
    seats = [first, {"kind": "external"}, {"kind": "external"}, {"kind": "bot", "bot": "random"}]
    body = {"game": "autobus", "ruleset": {"main_pile": 4}, "seats": seats, "seed": 8}
    with httpx.Client(base_url=stack.base_url, timeout=10) as http:
        created = http.post("/v1/games", json=body)
        assert created.status_code == 201, created.text
        game_id = created.json()["game_id"]
        game = play_to_the_end(http, game_id, EXTERNAL, 240)
        events = http.get(f"/v1/games/{game_id}/events").json()["events"]
    assert game["status"] in {"finished", "draw"}
    streamed = check_projected_and_archived(stack, "autobus", game_id, game)
    kinds = {e.type for e in streamed}
    assert {"CardPlayed", "CardDiscarded", "TurnPassed", "GameFinished"} <= kinds
    assert [e["version"] for e in events] == list(range(1, game["version"] + 1))
