"""Accounts on the real stack: `cardarena serve game` as a process over Redis with open
registration, the projection into PostgreSQL. An author with no admin key makes an account,
registers two bots and has them play each other by challenge with their own tokens: the game
is played, never rated, and the leaderboard the service reads from PostgreSQL stays empty;
a game against another account's bot is rated there."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import httpx
import pytest
import redis

from services.projection.projector import Projector
from shared.store.redis_store import RedisEventStore
from tests.support.accounts import make_account, own_bot, play_out
from tests.support.api import ADMIN, bearer
from tests.support.served import served_game

RULES = {"max_moves": 120}
"""Short games: capped, still rated when nothing else rules it out."""


@pytest.fixture
def open_service(redis_url: str, namespace: str, database_url: str) -> Iterator[str]:
    """Runs the game service with open registration; returns its base URL."""
    with served_game(redis_url, namespace, database_url, CARDARENA_REGISTRATION="open") as url:
        yield url


def _project(redis_client: redis.Redis, namespace: str, database_url: str) -> None:
    """Projects everything the feed holds into PostgreSQL."""
    consumer = RedisEventStore(redis_client, namespace).consumer("projection", "p1")
    with Projector(database_url, consumer) as projector:
        while projector.run_once(count=500):
            pass


def _challenge_and_play(http: httpx.Client, one: dict[str, str], other: dict[str, str]) -> str:
    """Has bot `one` challenge bot `other`, which accepts; plays it out; returns the game."""
    body = {"game": "shithead", "ruleset": RULES, "opponents": [{"bot": other["name"]}]}
    issued = http.post("/v1/challenges", json=body, headers=bearer(one["token"]))
    assert issued.status_code == 201, issued.text
    path = f"/v1/challenges/{issued.json()['challenge_id']}/accept"
    accepted = http.post(path, headers=bearer(other["token"]))
    assert accepted.status_code == 200, accepted.text
    game_id = str(accepted.json()["game_id"])
    play_out(http, game_id, {0: one["token"], 1: other["token"]})
    return game_id


def test_an_author_without_an_admin_key_feeds_no_rating_to_itself_on_the_stack(
    open_service: str, redis_client: redis.Redis, namespace: str, database_url: str
) -> None:
    with httpx.Client(base_url=open_service, timeout=60) as http:
        ada = make_account(http, "ada")
        one, two = own_bot(http, ada, "ada-one"), own_bot(http, ada, "ada-two")
        own = _challenge_and_play(http, one, two)
        game = http.get(f"/v1/games/{own}").json()
        assert game["status"] != "playing"
        assert (game["rated"], game["unrated"]["code"]) == (False, "same_account")
        bea = own_bot(http, make_account(http, "bea"), "bea-one")
        other = _challenge_and_play(http, one, bea)
        _project(redis_client, namespace, database_url)
        entries = http.get("/v1/leaderboards/shithead").json()["entries"]
        assert {entry["key"]: entry["games"] for entry in entries} == {
            "ada-one@1": 1,
            "bea-one@1": 1,
        }
        listed = {
            g["game_id"]: g for g in http.get("/v1/games", params={"limit": 10}).json()["games"]
        }
        assert listed[own]["unrated"]["code"] == "same_account"
        assert listed[other]["rated"] is True


def test_a_suspension_ends_a_long_poll_of_the_account_s_bot_at_once(open_service: str) -> None:
    with httpx.Client(base_url=open_service, timeout=60) as http:
        bot = own_bot(http, make_account(http, "ada"), "ada-one")
        answers: list[httpx.Response] = []

        def poll() -> None:
            with httpx.Client(base_url=open_service, timeout=60) as own:
                turns = own.get(
                    "/v1/bots/me/turns", params={"wait": 30}, headers=bearer(bot["token"])
                )
                answers.append(turns)

        waiting = threading.Thread(target=poll)
        waiting.start()
        time.sleep(1)  # the poll reaches its wait (a late one is 401 all the same)
        assert answers == []
        suspended_at = time.monotonic()
        assert http.post("/v1/accounts/ada/suspend", headers=ADMIN).status_code == 200
        waiting.join(timeout=20)
        assert not waiting.is_alive(), "the long poll waits on after the suspension"
        assert answers[0].status_code == 401, answers[0].text
        assert time.monotonic() - suspended_at < 10
