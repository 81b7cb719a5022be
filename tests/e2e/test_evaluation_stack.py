"""A hosted evaluation on the real stack (the game service, a Celery worker and the projection
over Redis and PostgreSQL, registration open): an account with no admin key registers two
built-in bot versions, asks whether the second is better, and the workers play it to H1;
none of its games is rated on the leaderboard the service reads from PostgreSQL."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import redis

from tests.support.accounts import make_account, own_bot
from tests.support.api import bearer
from tests.support.stack import ADMIN_KEY, Stack, running_stack


@pytest.fixture
def open_stack(
    redis_url: str, redis_client: redis.Redis, namespace: str, database_url: str
) -> Iterator[Stack]:
    """The stack with an admin key and open registration."""
    extra = {
        "CARDARENA_ADMIN_KEY": ADMIN_KEY,
        "CARDARENA_RATE_LIMIT": "0",
        "CARDARENA_REGISTRATION": "open",
    }
    with running_stack(redis_url, redis_client, namespace, database_url, extra) as started:
        yield started


def test_an_account_s_evaluation_is_played_by_the_workers_to_its_verdict(
    open_stack: Stack,
) -> None:
    with httpx.Client(base_url=open_stack.base_url, timeout=30) as http:
        key = make_account(http, "ada")
        own_bot(http, key, "ada-bot", kind="builtin", strategy="random")
        own_bot(http, key, "ada-bot", version="2", kind="builtin", strategy="heuristic")
        body = {
            "game": "shithead",
            "candidate": {"bot": "ada-bot", "version": "2"},
            "baseline": {"bot": "ada-bot", "version": "1"},
            "elo1": 200,
            "seed": "7",
            "max_games": 200,
        }
        created = http.post("/v1/evaluations", json=body, headers=bearer(key))
        assert created.status_code == 201, created.text
        path = created.headers["location"]
        deadline = time.monotonic() + 60
        shown: dict[str, Any] = created.json()
        while shown["status"] == "running" and time.monotonic() < deadline:
            time.sleep(0.2)
            shown = http.get(path).json()
        assert (shown["status"], shown["verdict"]) == ("finished", "H1")
        counted = set(shown["game_ids"][: shown["games"]])
        deadline = time.monotonic() + 30
        while True:  # the projection has every counted game, finished and unrated
            listed = http.get("/v1/games", params={"limit": 100}).json()["games"]
            finished = {
                g["game_id"]: g
                for g in listed
                if g["game_id"] in counted and g["status"] != "playing"
            }
            if len(finished) == len(counted):
                break
            assert time.monotonic() < deadline, f"{len(finished)} of {len(counted)} projected"
            time.sleep(0.2)
        assert {(g["rated"], g["unrated"]["code"]) for g in finished.values()} == {
            (False, "evaluation")
        }
        admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
        board = http.get("/v1/leaderboards/shithead", headers=admin).json()["entries"]
        assert board == []
