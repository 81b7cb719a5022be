"""Every answer of an end-to-end run validates against the response schema the OpenAPI document
gives its operation and status: a host and two external bots play games, a tournament, a
challenge, replays and exports through the API of the real stack (game service, worker and
projection over Redis and PostgreSQL), and each answer is recorded and checked."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.api import bot_client, register
from tests.support.openapi_check import Checker, Recorder
from tests.support.stack import ADMIN_KEY, Stack, wait_for

Json = dict[str, Any]


@pytest.fixture
def recorder() -> Recorder:
    """Returns the recorder every client of the test reports to."""
    return Recorder()


@pytest.fixture
def host(secured_stack: Stack, recorder: Recorder) -> Iterator[httpx.Client]:
    """Returns a client with the admin key whose every answer is recorded."""
    with httpx.Client(
        base_url=secured_stack.base_url,
        headers={"Authorization": f"Bearer {ADMIN_KEY}"},
        timeout=60,
        event_hooks={"response": [recorder]},
    ) as client:
        yield client


def play_with_turns(bot: httpx.Client, game_id: str, seconds: float) -> list[int]:
    """Plays the bot's seats of `game_id` from its long poll, each move with `wait` so the
    answer carries the next turn, until the game is over; returns each move's first version."""
    moves: list[int] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if bot.get(f"/v1/games/{game_id}").json()["status"] != "playing":
            return moves
        for turn in bot.get("/v1/bots/me/turns", params={"wait": 2}).json()["turns"]:
            if turn["game_id"] != game_id or not turn["legal_actions"]:
                continue
            body = {
                "seat": turn["seat"],
                "action": turn["legal_actions"][0],
                "expected_version": turn["version"],
            }
            key = {"Idempotency-Key": f"{game_id}:{turn['seat']}:{turn['version']}"}
            url = f"/v1/games/{game_id}/actions"
            answer = bot.post(url, json=body, headers=key, params={"wait": 1})
            assert answer.status_code in {200, 409}, answer.text
            if answer.status_code != 200:
                continue
            moves.append(answer.json()["first_version"])
            if len(moves) == 1:
                # The same request again: the idempotent replay of the first answer.
                assert bot.post(url, json=body, headers=key).json()["replayed"] is True
    pytest.fail(f"the game {game_id} did not end within {seconds}s")


def refusals(host: httpx.Client, bot: httpx.Client, game_id: str) -> None:
    """Sends requests the service refuses, one of each problem it answers here."""
    view = bot.get(f"/v1/games/{game_id}/view", params={"seat": 0}).json()
    stale = {"seat": 0, "action": {"type": "Ready"}, "expected_version": 0}
    bot.post(f"/v1/games/{game_id}/actions", json=stale)  # 409 or 422
    bad = {"seat": 0, "action": {"type": "NoSuchAction"}, "expected_version": view["version"]}
    bot.post(f"/v1/games/{game_id}/actions", json=bad)  # 400 or 422
    bot.post(f"/v1/games/{game_id}/actions", json={"seat": "0"})  # 400
    bot.get(f"/v1/games/{game_id}/view", params={"seat": 1})  # 403: another seat
    bot.post("/v1/games", json={"game": "shithead", "players": 2})  # 403: hosting
    bot.get("/v1/games/no-such-game")  # 404
    host.get("/v1/tournaments/no-such-tournament")  # 404
    host.get("/v1/bots/nobody/1")  # 404
    host.get("/v1/games/no-such-game/view", params={"seat": 0})  # 404
    host.get("/v1/bots/me", headers={"Authorization": "Bearer cab_1.wrong"})  # 401
    host.post("/v1/games", json={"game": "chess"})  # 400
    host.post("/v1/games", json={"game": "shithead", "players": 99})  # 422
    host.post("/v1/games", content=b" " * (2**20 + 1), headers={"content-type": "application/json"})
    host.get("/v1/no-such-route")  # 404, in no operation
    host.get("/schema/no-such-page")  # 404, in no operation
    host.delete("/v1/games")  # 405, in no operation


def test_every_answer_of_a_run_validates_against_its_documented_schema(
    secured_stack: Stack, host: httpx.Client, recorder: Recorder
) -> None:
    document = host.get("/schema/openapi.json").json()
    alice_token, bob_token = (register(host, name, admin={})["token"] for name in ("alice", "bob"))
    alice = bot_client(secured_stack.base_url, alice_token, event_hooks={"response": [recorder]})
    bob = bot_client(secured_stack.base_url, bob_token, event_hooks={"response": [recorder]})
    with alice, bob:
        alice.get("/v1/bots/me")
        host.get("/v1/bots")
        host.get("/v1/bots/alice/1")
        seats = [{"kind": "external", "bot": "alice"}, {"bot": "heuristic"}, {"bot": "random"}]
        body = {"game": "shithead", "seats": seats, "seed": 5, "ruleset": {"max_moves": 300}}
        created = host.post("/v1/games", json=body)
        assert created.status_code == 201, created.text
        game_id = created.json()["game_id"]
        host.get(f"/v1/games/{game_id}")
        alice.get(f"/v1/games/{game_id}/view", params={"seat": 0})
        alice.get(f"/v1/games/{game_id}/turn", params={"seat": 0, "wait": 5})
        alice.get(f"/v1/games/{game_id}/events", params={"seat": 0})
        host.get(f"/v1/games/{game_id}/events")
        refusals(host, alice, game_id)
        moves = play_with_turns(alice, game_id, 120)
        assert moves

        host.get(f"/v1/games/{game_id}")
        host.get(f"/v1/games/{game_id}/events")
        host.get(f"/v1/games/{game_id}/replay", params={"version": 3})
        host.get(f"/v1/games/{game_id}/replay", params={"version": 3, "seat": 0})
        host.get(f"/v1/games/{game_id}/export")
        host.get(f"/v1/games/{game_id}/verification")
        fork = host.post(f"/v1/games/{game_id}/fork", params={"version": moves[-1] - 1})
        assert fork.status_code in {200, 201}, fork.text

        challenge = alice.post(
            "/v1/challenges", json={"game": "shithead", "opponents": [{"bot": "bob"}]}
        ).json()
        bob.get("/v1/bots/me/challenges")
        bob.get(f"/v1/challenges/{challenge['challenge_id']}")
        bob.post(f"/v1/challenges/{challenge['challenge_id']}/decline", json={"reason": "busy"})
        bob.post(f"/v1/challenges/{challenge['challenge_id']}/accept")  # 409: closed

        definition = {
            "game": "shithead",
            "entrants": [{"bot": "heuristic"}, {"bot": "random"}],
            "table_size": 2,
            "games_per_table": 1,
            "seed": "7",
        }
        tournament = host.post("/v1/tournaments", json=definition).json()
        tournament_id = tournament["tournament_id"]

        def tournament_over() -> bool:
            status: str = host.get(f"/v1/tournaments/{tournament_id}").json()["status"]
            return status != "running"

        wait_for(tournament_over, 120, "the tournament to end")
        host.get(f"/v1/tournaments/{tournament_id}/standings")
        host.get("/v1/tournaments")
        wait_for(lambda: host.get("/v1/leaderboards/shithead").json()["entries"], 60, "ratings")
        host.get("/v1/schedules")
        host.get("/health")
        host.get("/ready")

    checker = Checker(document)
    errors = [error for exchange in recorder.exchanges for error in checker.errors(exchange)]
    assert errors == []
    statuses = {status for _, status in checker.checked}
    assert {200, 201, 400, 401, 403, 404, 409, 413, 422} <= statuses, checker.checked
    assert len(checker.checked) >= 30, sorted(checker.checked)
