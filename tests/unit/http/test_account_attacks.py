"""The accounts' promises under attack, with public requests and a bot's own token: one owner
never feeds itself rating, never sits two bots at one duplicate deal, and a suspended account
stops everywhere (its key, its bots' tokens, their games, challenges and tournaments)."""

from __future__ import annotations

from typing import Any

import pytest

from shared.model import challenges
from shared.model.registry import STREAM
from shared.store.memory import InMemoryEventStore
from tests.support.accounts import make_account, own_bot, play_out
from tests.support.api import ADMIN, KEY, Client, bearer, problem, register, unauthorized

pytestmark = pytest.mark.service(admin_key=KEY, registration="open")


def leaderboard(client: Client, game: str = "shithead") -> dict[str, int]:
    """Returns the games each key of the game's leaderboard was rated in."""
    entries = client.get(f"/v1/leaderboards/{game}", headers=ADMIN).json()["entries"]
    return {entry["key"]: entry["games"] for entry in entries}


def challenge(client: Client, token: str, opponent: str) -> dict[str, Any]:
    """Issues a Shithead challenge with `token` to `opponent@1`; returns the 201 body."""
    body = {"game": "shithead", "opponents": [{"bot": opponent}]}
    issued = client.post("/v1/challenges", json=body, headers=bearer(token))
    assert issued.status_code == 201, issued.text
    answer: dict[str, Any] = issued.json()
    return answer


def test_an_account_that_plays_its_two_bots_against_each_other_gains_no_rating(
    client: Client,
) -> None:
    key = make_account(client, "ada")
    first, second = own_bot(client, key, "ada-one"), own_bot(client, key, "ada-two")
    issued = challenge(client, first["token"], "ada-two")
    accepted = client.post(
        f"/v1/challenges/{issued['challenge_id']}/accept", headers=bearer(second["token"])
    )
    assert accepted.status_code == 200, accepted.text
    game_id = accepted.json()["game_id"]
    game = client.get(f"/v1/games/{game_id}").json()
    assert (game["rated"], game["unrated"]["code"]) == (False, "same_account")
    assert "ada" in game["unrated"]["message"]
    play_out(client, game_id, {0: first["token"], 1: second["token"]})
    over = client.get(f"/v1/games/{game_id}").json()
    assert (over["status"], over["rated"], over["unrated"]["code"]) != ("playing", True, None)
    assert over["unrated"]["code"] == "same_account"
    assert leaderboard(client) == {}


def test_bots_of_two_accounts_are_rated_as_ever(client: Client) -> None:
    ada = own_bot(client, make_account(client, "ada"), "ada-one")
    bea = own_bot(client, make_account(client, "bea"), "bea-one")
    seats = [{"kind": "external", "bot": b, "version": "1"} for b in ("ada-one", "bea-one")]
    created = client.post(
        "/v1/games", json={"game": "shithead", "seats": seats, "seed": 3}, headers=ADMIN
    )
    game_id = created.json()["game_id"]
    play_out(client, game_id, {0: ada["token"], 1: bea["token"]})
    assert client.get(f"/v1/games/{game_id}").json()["rated"] is True
    assert leaderboard(client) == {"ada-one@1": 1, "bea-one@1": 1}


def test_the_host_s_own_bots_are_rated_against_each_other_as_before(client: Client) -> None:
    alice, bob = register(client, "alice"), register(client, "bob")
    seats = [{"kind": "external", "bot": b, "version": "1"} for b in ("alice", "bob")]
    created = client.post(
        "/v1/games", json={"game": "shithead", "seats": seats, "seed": 4}, headers=ADMIN
    )
    game_id = created.json()["game_id"]
    play_out(client, game_id, {0: alice["token"], 1: bob["token"]})
    assert client.get(f"/v1/games/{game_id}").json()["rated"] is True


def test_a_tournament_of_one_account_s_built_in_bots_rates_none_of_their_games(
    client: Client,
) -> None:
    key = make_account(client, "ada")
    for name, strategy in (("ada-h", "heuristic"), ("ada-r", "random")):
        own_bot(client, key, name, game="autobus", kind="builtin", strategy=strategy)
    entrants = [{"bot": "ada-h"}, {"bot": "ada-r"}, {"bot": "heuristic"}]
    body = {"game": "autobus", "entrants": entrants, "table_size": 2, "seed": "5"}
    created = client.post("/v1/tournaments", json=body, headers=ADMIN)
    assert created.status_code in (200, 201), created.text
    assert [w["code"] for w in created.json()["warnings"]] == ["same-account"]
    tournament = client.get(f"/v1/tournaments/{created.json()['tournament_id']}").json()
    games = {
        tuple(game["entrants"] if "entrants" in game else game["table"]): game
        for rnd in tournament["rounds"]
        for game in rnd["games"]
    }
    codes = sorted(str((g["unrated"] or {}).get("code")) for g in games.values())
    assert codes == ["None", "None", "same_account"]
    assert tournament["status"] == "finished"
    assert leaderboard(client, "autobus") == {"ada-h@1": 1, "ada-r@1": 1, "heuristic@1": 2}


def test_a_duplicate_tournament_refuses_two_bots_of_one_account_naming_the_rule(
    client: Client, store: InMemoryEventStore
) -> None:
    key = make_account(client, "ada")
    for name in ("ada-h", "ada-m"):
        own_bot(client, key, name, kind="builtin", strategy="heuristic")
    entrants = [{"bot": "ada-h"}, {"bot": "random"}, {"bot": "ada-m"}, {"bot": "heuristic"}]
    body = {
        "game": "shithead",
        "format": "duplicate",
        "entrants": entrants,
        "table_size": 2,
        "seed": "1",
    }
    before = len(store.read_feed("0", 100_000))
    refused = problem(client.post("/v1/tournaments", json=body, headers=ADMIN), 422)
    assert refused["field"] == "entrants"
    assert "same_account" in refused["detail"]
    assert len(store.read_feed("0", 100_000)) == before
    body["entrants"] = [{"bot": "ada-h"}, {"bot": "random"}, {"bot": "mc"}, {"bot": "heuristic"}]
    assert client.post("/v1/tournaments", json=body, headers=ADMIN).status_code in (200, 201)


def test_a_suspended_account_stops_everywhere_and_its_running_game_is_aborted(
    client: Client, store: InMemoryEventStore
) -> None:
    key = make_account(client, "ada")
    bot = own_bot(client, key, "ada-one")
    own_bot(client, key, "ada-h", kind="builtin", strategy="heuristic")
    host = register(client, "alice")
    seats = [{"kind": "external", "bot": b, "version": "1"} for b in ("ada-one", "alice")]
    created = client.post(
        "/v1/games", json={"game": "shithead", "seats": seats, "seed": 2}, headers=ADMIN
    )
    game_id = created.json()["game_id"]
    suspended = client.post("/v1/accounts/ada/suspend", json={"reason": "feeding"}, headers=ADMIN)
    assert suspended.status_code == 200, suspended.text
    assert suspended.json()["aborted_games"] == [game_id]
    assert client.get(f"/v1/games/{game_id}").json()["status"] == "aborted"
    unauthorized(client.get("/v1/bots/me", headers=bearer(bot["token"])))
    version = store.version(STREAM)
    body = {"name": "ada-two", "game": "shithead", "kind": "external"}
    problem(client.post("/v1/bots", json=body, headers=bearer(key)), 403, "account-suspended")
    problem(client.post("/v1/bots/ada-one/1/token", headers=bearer(key)), 403, "account-suspended")
    problem(client.post("/v1/bots/ada-one/1/token", headers=ADMIN), 403, "registration-refused")
    assert store.version(STREAM) == version
    assert client.get("/v1/accounts/me", headers=bearer(key)).json()["suspended"] is True
    refused = problem(
        client.post(
            "/v1/challenges",
            json={"game": "shithead", "opponents": [{"bot": "ada-h"}]},
            headers=bearer(host["token"]),
        ),
        422,
    )
    assert refused["field"].startswith("opponents[0]")
    entrants = [{"bot": "ada-h"}, {"bot": "heuristic"}]
    tournament = {"game": "shithead", "entrants": entrants, "table_size": 2}
    refused = problem(client.post("/v1/tournaments", json=tournament, headers=ADMIN), 422)
    assert refused["field"] == "entrants[0].bot"
    seated = problem(
        client.post("/v1/games", json={"game": "shithead", "seats": seats}, headers=ADMIN), 422
    )
    assert seated["field"].startswith("seats[0]")
    again = client.post("/v1/accounts/ada/suspend", headers=ADMIN)
    assert (again.status_code, again.json()["aborted_games"]) == (200, [])


def test_suspension_is_the_host_s_alone_and_names_what_is_wrong(client: Client) -> None:
    key = make_account(client, "ada")
    problem(client.post("/v1/accounts/ada/suspend", headers=bearer(key)), 403, "forbidden")
    unauthorized(client.post("/v1/accounts/ada/suspend"))
    problem(client.post("/v1/accounts/nobody/suspend", headers=ADMIN), 404, "unknown-account")
    host = problem(client.post("/v1/accounts/host/suspend", headers=ADMIN), 422)
    assert host["field"] == "account"
    nul = problem(client.post("/v1/accounts/%00/suspend", headers=ADMIN), 404, "unknown-account")
    assert nul["field"] == "account"
    long = {"reason": "x" * 501}
    assert problem(client.post("/v1/accounts/ada/suspend", json=long, headers=ADMIN), 400)


def test_a_challenge_of_a_suspended_account_s_bot_never_starts_and_records_no_answer(
    client: Client, store: InMemoryEventStore
) -> None:
    ada = own_bot(client, make_account(client, "ada"), "ada-one")
    alice = register(client, "alice")
    issued = challenge(client, ada["token"], "alice")
    assert client.post("/v1/accounts/ada/suspend", headers=ADMIN).status_code == 200
    stream = challenges.stream_id(issued["challenge_id"])
    version = store.version(stream)
    accepted = client.post(
        f"/v1/challenges/{issued['challenge_id']}/accept", headers=bearer(alice["token"])
    )
    assert problem(accepted, 422)["field"] == "challenge"
    assert store.version(stream) == version
