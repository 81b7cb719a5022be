"""Streams over real HTTP: a `cardarena serve game` process on Redis, an external bot that
plays from its game stream, disconnects mid-game and resumes with `Last-Event-ID`.
"""

from __future__ import annotations

from typing import Any

import httpx

from tests.support.api import ADMIN
from tests.support.served import sse


def post_move(http: httpx.Client, game_id: str, turn: dict[str, Any], token: str) -> None:
    """Posts the first legal action of a `your_turn` (a seat view) with an idempotency key."""
    body = {"seat": 0, "action": turn["legal_actions"][0], "expected_version": turn["version"]}
    headers = {"Authorization": f"Bearer {token}", "Idempotency-Key": f"m{turn['version']}"}
    posted = http.post(f"/v1/games/{game_id}/actions", json=body, headers=headers)
    assert posted.status_code == 200, posted.text


def test_a_bot_that_disconnects_mid_game_resumes_and_sees_every_event_once(
    service: str,
) -> None:
    with httpx.Client(base_url=service, timeout=60) as http:
        bot = {"name": "alice", "game": "shithead", "kind": "external"}
        token = http.post("/v1/bots", json=bot, headers=ADMIN).json()["token"]
        auth = {"Authorization": f"Bearer {token}"}
        game = {
            "game": "shithead",
            "ruleset": {"max_moves": 60},
            "seats": [{"kind": "external", "bot": "alice"}, {"bot": "random"}],
            "seed": 3,
        }
        created = http.post("/v1/games", json=game, headers=ADMIN)
        assert created.status_code == 201, created.text
        game_id = created.json()["game_id"]

        seen: list[int] = []
        snapshots: list[int] = []
        last_id: str | None = None
        turns = disconnects = 0
        finished = False
        for _ in range(500):
            headers = {**auth, **({"Last-Event-ID": last_id} if last_id else {})}
            url = f"/v1/games/{game_id}/stream"
            pending: dict[str, Any] | None = None
            with http.stream("GET", url, params={"seat": 0}, headers=headers) as response:
                assert response.status_code == 200
                for event, event_id, data in sse(response.iter_lines()):
                    last_id = event_id
                    if event == "snapshot":
                        snapshots.append(data["version"])
                    elif event == "event":
                        seen.append(data["version"])
                        finished = data["type"] == "GameFinished"
                    elif event == "your_turn":
                        turns += 1
                        if turns % 3 == 0:
                            pending = data
                            break
                        post_move(http, game_id, data, token)
            if pending is None:
                break
            disconnects += 1
            with http.stream("GET", "/v1/bots/me/events", headers=auth) as response:
                resync = next(sse(response.iter_lines()))
            assert resync[0] == "your_turn"
            assert (resync[2]["game_id"], resync[2]["version"]) == (game_id, pending["version"])
            post_move(http, game_id, pending, token)

        final = http.get(f"/v1/games/{game_id}").json()
    assert finished
    assert final["status"] != "playing"
    assert disconnects >= 2
    assert len(snapshots) == 1
    assert seen == list(range(snapshots[0] + 1, final["version"] + 1))
