"""Hosted evaluations through the API, in process: an account evaluates two of its own bot
versions until the SPRT decides, their games never rated; and the refusals, with public
requests, another account's key and a bot's own token."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.support.accounts import make_account, own_bot, play_out
from tests.support.api import ADMIN, KEY, Client, bearer, problem, unauthorized

pytestmark = pytest.mark.service(admin_key=KEY, registration="open")

SMART = {"kind": "builtin", "strategy": "heuristic"}
RANDOM = {"kind": "builtin", "strategy": "random"}


def request(candidate: str, baseline: str, **body: Any) -> dict[str, Any]:
    """Returns a Shithead evaluation's body of `candidate@1` against `baseline@1`."""
    return {
        "game": "shithead",
        "candidate": {"bot": candidate},
        "baseline": {"bot": baseline},
        "elo1": 200,
        "seed": "7",
        "max_games": 400,
        **body,
    }


def finished(client: Client, evaluation_id: str, seconds: float = 30) -> dict[str, Any]:
    """Returns the evaluation once it has finished (fails after `seconds`)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        body: dict[str, Any] = client.get(f"/v1/evaluations/{evaluation_id}").json()
        if body["status"] == "finished":
            return body
        time.sleep(0.05)
    pytest.fail(f"evaluation {evaluation_id} did not finish in {seconds} s")


def leaderboard(client: Client) -> dict[str, int]:
    """Returns the games each key of Shithead's leaderboard was rated in."""
    entries = client.get("/v1/leaderboards/shithead", headers=ADMIN).json()["entries"]
    return {entry["key"]: entry["games"] for entry in entries}


def test_an_account_learns_that_its_heuristic_bot_beats_its_random_one(client: Client) -> None:
    key = make_account(client, "ada")
    own_bot(client, key, "ada-smart", **SMART)
    own_bot(client, key, "ada-random", **RANDOM)
    created = client.post(
        "/v1/evaluations", json=request("ada-smart", "ada-random"), headers=bearer(key)
    )
    assert created.status_code == 201, created.text
    evaluation_id = created.json()["evaluation_id"]
    assert created.headers["location"] == f"/v1/evaluations/{evaluation_id}"
    assert created.json()["definition"]["seed"] == ""  # hidden while it runs
    body = finished(client, evaluation_id)
    assert body["verdict"] == "H1"
    assert body["llr"] > body["bounds"][1]
    assert body["games"] == 2 * body["pairs"]
    assert body["pairs"] == len(body["llr_history"])
    assert body["llr_history"][-1] == body["llr"]
    assert body["elo"] > 0
    assert body["elo_interval"][0] < body["elo"] < body["elo_interval"][1]
    assert body["definition"]["seed"] == "7"
    assert body["definition"]["account"] == "ada"
    assert len(body["game_ids"]) >= body["games"]
    statuses = []
    for game_id in body["game_ids"]:  # a unit still in flight at the verdict plays out
        game = client.get(f"/v1/games/{game_id}").json()
        assert (game["rated"], game["unrated"]["code"]) == (False, "evaluation")
        statuses.append(game["status"])
    assert statuses.count("finished") >= body["games"]
    listed = client.get("/v1/evaluations", headers=bearer(key)).json()["evaluations"]
    assert [e["evaluation_id"] for e in listed] == [evaluation_id]
    assert leaderboard(client) == {}


def test_the_admin_evaluating_two_host_bots_rates_none_of_their_games(client: Client) -> None:
    for name, spec in (("smart", SMART), ("plain", RANDOM)):
        made = client.post(
            "/v1/bots", json={"name": name, "game": "shithead", **spec}, headers=ADMIN
        )
        assert made.status_code == 201, made.text
    created = client.post("/v1/evaluations", json=request("smart", "plain"), headers=ADMIN)
    assert created.status_code == 201, created.text
    body = finished(client, created.json()["evaluation_id"])
    assert (body["verdict"], body["definition"]["account"]) == ("H1", "host")
    assert leaderboard(client) == {}
    mine = client.get("/v1/evaluations", headers=bearer(make_account(client, "bea"))).json()
    assert mine["evaluations"] == []


def test_an_evaluation_stops_inconclusive_when_its_games_run_out(client: Client) -> None:
    key = make_account(client, "ada")
    own_bot(client, key, "ada-smart", **SMART)
    own_bot(client, key, "ada-random", **RANDOM)
    body = request("ada-smart", "ada-random", elo0=0, elo1=5, max_games=6)
    created = client.post("/v1/evaluations", json=body, headers=bearer(key))
    assert created.status_code == 201, created.text
    over = finished(client, created.json()["evaluation_id"])
    assert (over["verdict"], over["games"], over["pairs"]) == ("inconclusive", 6, 3)


@pytest.fixture
def accounts(client: Client) -> dict[str, Any]:
    """Two accounts, each with a built-in bot version and ada with an external one too."""
    ada, bea = make_account(client, "ada"), make_account(client, "bea")
    own_bot(client, ada, "ada-smart", **SMART)
    own_bot(client, ada, "ada-random", **RANDOM)
    token = own_bot(client, ada, "ada-ext")["token"]
    own_bot(client, bea, "bea-smart", **SMART)
    return {"ada": ada, "bea": bea, "token": token}


def test_an_account_may_not_evaluate_another_accounts_bot(
    client: Client, accounts: dict[str, Any]
) -> None:
    for body, field in (
        (request("bea-smart", "ada-random"), "candidate.bot"),
        (request("ada-smart", "bea-smart"), "baseline.bot"),
    ):
        refused = client.post("/v1/evaluations", json=body, headers=bearer(accounts["ada"]))
        assert problem(refused, 403, "forbidden")["field"] == field
    assert client.get("/v1/evaluations", headers=ADMIN).json()["evaluations"] == []


def test_a_bot_token_and_anyone_may_not_ask_for_an_evaluation(
    client: Client, accounts: dict[str, Any]
) -> None:
    body = request("ada-smart", "ada-random")
    problem(client.post("/v1/evaluations", json=body, headers=bearer(accounts["token"])), 403)
    unauthorized(client.post("/v1/evaluations", json=body))
    assert client.get("/v1/evaluations", headers=ADMIN).json()["evaluations"] == []


def test_a_suspended_account_asks_for_no_evaluation(
    client: Client, accounts: dict[str, Any]
) -> None:
    suspended = client.post("/v1/accounts/ada/suspend", json={"reason": "x"}, headers=ADMIN)
    assert suspended.status_code == 200, suspended.text
    body = request("ada-smart", "ada-random")
    refused = client.post("/v1/evaluations", json=body, headers=bearer(accounts["ada"]))
    problem(refused, 403, "account-suspended")
    assert client.post("/v1/evaluations", json=body, headers=ADMIN).status_code == 422
    assert client.get("/v1/evaluations", headers=ADMIN).json()["evaluations"] == []


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"alpha": 0.5}, "alpha"),
        ({"beta": 0}, "beta"),
        ({"elo0": 10, "elo1": 10}, "elo1"),
        ({"elo1": 5000}, "elo1"),
        ({"table_size": 11}, "table_size"),
        ({"table_size": 1}, "table_size"),
        ({"max_games": 1}, "max_games"),
        ({"max_games": 100_001}, "max_games"),
        ({"candidate": {"bot": "nobody"}}, "candidate.bot"),
        ({"baseline": {"bot": "ada-smart"}}, "baseline.version"),
        ({"game": "nogame"}, "game"),
        ({"ruleset": "nopreset"}, "ruleset"),
    ],
)
def test_a_bad_evaluation_is_refused_naming_its_field(
    client: Client, accounts: dict[str, Any], change: dict[str, Any], field: str
) -> None:
    body = {**request("ada-smart", "ada-random"), **change}
    refused = client.post("/v1/evaluations", json=body, headers=bearer(accounts["ada"]))
    assert problem(refused, 422)["field"] == field
    assert client.get("/v1/evaluations", headers=ADMIN).json()["evaluations"] == []


def test_an_unknown_evaluation_is_404(client: Client) -> None:
    problem(client.get("/v1/evaluations/nope"), 404, "unknown-evaluation")


def test_an_external_bots_evaluation_waits_for_its_moves_over_the_api(
    client: Client, accounts: dict[str, Any]
) -> None:
    body = request("ada-ext", "ada-random", max_games=4, ruleset=None)
    created = client.post("/v1/evaluations", json=body, headers=bearer(accounts["ada"]))
    assert created.status_code == 201, created.text
    evaluation_id = created.json()["evaluation_id"]
    assert created.json()["definition"]["candidate"]["kind"] == "external"
    played: set[str] = set()
    for _ in range(10):
        shown = client.get(f"/v1/evaluations/{evaluation_id}").json()
        if shown["status"] == "finished":
            break
        for turn, game_id in enumerate(shown["game_ids"]):
            if game_id not in played:  # the candidate sits in seat 0, then in seat 1
                play_out(client, game_id, {turn % 2: accounts["token"]})
                played.add(game_id)
    assert (shown["status"], shown["games"], len(played)) == ("finished", 4, 4)
    assert shown["verdict"] in {"H1", "H0", "inconclusive"}


def test_a_suspension_cancels_the_account_s_running_evaluation(
    client: Client, accounts: dict[str, Any]
) -> None:
    body = request("ada-ext", "ada-random")
    created = client.post("/v1/evaluations", json=body, headers=bearer(accounts["ada"]))
    assert created.status_code == 201, created.text
    evaluation_id, games = created.json()["evaluation_id"], created.json()["game_ids"]
    suspended = client.post("/v1/accounts/ada/suspend", json={"reason": "x"}, headers=ADMIN)
    assert sorted(suspended.json()["aborted_games"]) == sorted(games)
    shown = client.get(f"/v1/evaluations/{evaluation_id}").json()
    assert (shown["status"], shown["verdict"], shown["game_ids"]) == ("cancelled", None, games)


def test_a_unit_with_a_game_the_host_aborted_counts_for_nothing_and_another_replaces_it(
    client: Client, accounts: dict[str, Any]
) -> None:
    body = request("ada-ext", "ada-random")
    created = client.post("/v1/evaluations", json=body, headers=bearer(accounts["ada"]))
    evaluation_id, games = created.json()["evaluation_id"], created.json()["game_ids"]
    play_out(client, games[0], {0: accounts["token"]})
    aborted = client.post(f"/v1/games/{games[1]}/abort", headers=ADMIN)
    assert aborted.status_code == 200, aborted.text
    shown = client.get(f"/v1/evaluations/{evaluation_id}").json()
    assert (shown["status"], shown["pairs"], shown["llr_history"]) == ("running", 0, [])
    assert len(shown["game_ids"]) == 6  # units 0 (void), 1 (in flight) and 2 (its successor)
