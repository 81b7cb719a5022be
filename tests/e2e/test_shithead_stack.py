"""A four-player Shithead game through the whole stack: two workers' bots, two HTTP clients."""

from __future__ import annotations

import httpx

from shared.catalog import get_game
from tests.support.results import assert_shithead_places
from tests.support.stack import Stack, check_projected_and_archived, play_to_the_end

EXTERNAL = (0, 2)
"""The seats the test plays through HTTP; seats 1 and 3 are built-in bots on the workers."""


def bot_seats() -> list[dict[str, str]]:
    """Returns the two bot seats: the heuristic (where registered) and the random bot."""
    first = "heuristic" if "heuristic" in get_game("shithead").bots else "random"
    return [{"kind": "bot", "bot": first}, {"kind": "bot", "bot": "random"}]


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
        game = play_to_the_end(http, game_id, EXTERNAL, 240)
        events = http.get(f"/v1/games/{game_id}/events", params={"seat": 0}).json()["events"]
    assert game["status"] in {"finished", "capped"}
    assert_shithead_places(game["result"])  # a capped game may tie places
    streamed = check_projected_and_archived(stack, "shithead", game_id, game)
    decided = {e.type for e in streamed}
    assert {"PlayerReady", "CardsPlayed", "GameFinished"} <= decided
    assert [e["version"] for e in events] == list(range(1, game["version"] + 1))
