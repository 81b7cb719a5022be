"""The ladder over the API (`/v1/ladders`): the host opens it, bots join and leave with their
tokens, the pairing seats them in rated games with bound seats; and the ladder's promises
under attack: one account's bots never meet, a suspended bot and a closed ladder are refused,
another bot cannot take a bot out of the queue."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from shared.app.ladder import Pairing, pair_ladder
from shared.app.runtime import InProcessDispatcher
from shared.app.starting import GameCap
from shared.model.ladder import Rules
from shared.ports.game_slots import InMemoryGameSlots
from shared.store.memory import InMemoryEventStore
from tests.support.accounts import make_account, own_bot, play_out
from tests.support.api import ADMIN, KEY, Client, bearer, problem

pytestmark = pytest.mark.service(admin_key=KEY, registration="open")


def open_ladder(client: Client, **body: Any) -> str:
    opened = client.post("/v1/ladders", json={"game": "shithead", **body}, headers=ADMIN)
    assert opened.status_code == 201, opened.text
    ladder_id: str = opened.json()["ladder_id"]
    return ladder_id


def pair(
    store: InMemoryEventStore, ladder_id: str, later: float = 0, rules: Rules | None = None
) -> list[str]:
    pairing = Pairing(
        GameCap(InMemoryGameSlots(), 0), InProcessDispatcher(store), lambda g: {}, rules or Rules()
    )
    return pair_ladder(store, ladder_id, datetime.now(UTC) + timedelta(seconds=later), pairing)


def joined(client: Client, ladder_id: str, token: str) -> dict[str, Any]:
    answer = client.post(f"/v1/ladders/{ladder_id}/queue", headers=bearer(token))
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def test_two_accounts_bots_in_a_ladder_play_a_rated_game_and_wait_again(
    client: Client, store: InMemoryEventStore
) -> None:
    ladder_id = open_ladder(client)
    ada = own_bot(client, make_account(client, "ada"), "ada-one")
    bea = own_bot(client, make_account(client, "bea"), "bea-one")
    joined(client, ladder_id, ada["token"])
    assert [q["bot"] for q in joined(client, ladder_id, bea["token"])["queue"]] == [
        "ada-one@1",
        "bea-one@1",
    ]
    (game_id,) = pair(store, ladder_id)
    shown = client.get(f"/v1/ladders/{ladder_id}").json()
    assert [g["game_id"] for g in shown["live"]] == [game_id]
    assert sorted(shown["live"][0]["bots"]) == ["ada-one@1", "bea-one@1"]
    game = client.get(f"/v1/games/{game_id}").json()
    assert game["rated"] is not False
    tokens = {
        i: {"ada-one": ada, "bea-one": bea}[s["name"]]["token"] for i, s in enumerate(game["seats"])
    }
    play_out(client, game_id, tokens)
    assert pair(store, ladder_id) == []  # the cooldown: not the same opponent at once
    after = client.get(f"/v1/ladders/{ladder_id}").json()
    assert after["live"] == []
    assert after["games"] == 1
    assert {e["key"] for e in after["ranking"]} == {"ada-one@1", "bea-one@1"}
    assert len(pair(store, ladder_id, later=3600)) == 1
    listed = client.get("/v1/ladders").json()
    assert [lad["ladder_id"] for lad in listed] == [ladder_id]


def test_the_ladder_never_pairs_two_bots_of_one_account(
    client: Client, store: InMemoryEventStore
) -> None:
    ladder_id = open_ladder(client)
    key = make_account(client, "ada")
    for name in ("ada-one", "ada-two", "ada-three"):
        joined(client, ladder_id, own_bot(client, key, name)["token"])
    assert pair(store, ladder_id, later=86_000) == []
    assert client.get(f"/v1/ladders/{ladder_id}").json()["games"] == 0


def test_only_the_host_opens_a_ladder_and_bad_fields_are_named(client: Client) -> None:
    bot = own_bot(client, make_account(client, "ada"), "ada-one")
    body = {"game": "shithead"}
    problem(client.post("/v1/ladders", json=body, headers=bearer(bot["token"])), 403)
    unknown = client.post("/v1/ladders", json={"game": "chess"}, headers=ADMIN)
    assert problem(unknown, 422)["field"] == "game"
    big = client.post("/v1/ladders", json={"game": "autobus", "table_size": 6}, headers=ADMIN)
    assert problem(big, 422)["field"] == "table_size"
    assert client.get("/v1/ladders").json() == []


def test_a_closed_ladder_an_unknown_one_and_a_suspended_bot_are_refused(
    client: Client, store: InMemoryEventStore
) -> None:
    ladder_id = open_ladder(client)
    ada = own_bot(client, make_account(client, "ada"), "ada-one")
    suspended = client.post("/v1/accounts/ada/suspend", json={"reason": "x"}, headers=ADMIN)
    assert suspended.status_code == 200, suspended.text
    refused = client.post(f"/v1/ladders/{ladder_id}/queue", headers=bearer(ada["token"]))
    assert 400 <= refused.status_code < 500
    bea = own_bot(client, make_account(client, "bea"), "bea-one")
    missing = client.post(f"/v1/ladders/{'0' * 32}/queue", headers=bearer(bea["token"]))
    assert problem(missing, 404, "unknown-ladder")["field"] == "ladder_id"
    closed = client.delete(f"/v1/ladders/{ladder_id}", headers=ADMIN)
    assert closed.json()["open"] is False
    late = client.post(f"/v1/ladders/{ladder_id}/queue", headers=bearer(bea["token"]))
    assert problem(late, 409, "ladder-closed")["rule"] == "ladder_closed"
    assert client.get(f"/v1/ladders/{ladder_id}").json()["queue"] == []


def test_a_bot_joins_and_leaves_only_itself_and_the_host_names_the_bot_it_joins(
    client: Client, store: InMemoryEventStore
) -> None:
    ladder_id = open_ladder(client)
    ada = own_bot(client, make_account(client, "ada"), "ada-one")
    bea = own_bot(client, make_account(client, "bea"), "bea-one")
    joined(client, ladder_id, ada["token"])
    client.delete(f"/v1/ladders/{ladder_id}/queue", headers=bearer(bea["token"]))
    assert [q["bot"] for q in client.get(f"/v1/ladders/{ladder_id}").json()["queue"]] == [
        "ada-one@1"
    ]
    nameless = client.post(f"/v1/ladders/{ladder_id}/queue", headers=ADMIN)
    assert problem(nameless, 422)["field"] == "bot"
    problem(client.post(f"/v1/ladders/{ladder_id}/queue"), 401)
    posing = {"bot": "ada-one"}
    as_bea = bearer(bea["token"])
    problem(client.post(f"/v1/ladders/{ladder_id}/queue", json=posing, headers=as_bea), 403)
    account = bearer(make_account(client, "cid"))
    problem(client.post(f"/v1/ladders/{ladder_id}/queue", json=posing, headers=account), 403)
    left = client.delete(f"/v1/ladders/{ladder_id}/queue", headers=bearer(ada["token"]))
    assert left.json()["queue"] == []
    assert pair(store, ladder_id) == []


def test_a_new_version_first_plays_the_hosts_built_in_bots(
    client: Client, store: InMemoryEventStore
) -> None:
    ladder_id = open_ladder(client)
    for name in ("gate-h", "gate-r"):
        spec = {"name": name, "game": "shithead", "strategy": "heuristic"}
        assert client.post("/v1/bots", json=spec, headers=ADMIN).status_code == 201
        added = client.post(f"/v1/ladders/{ladder_id}/queue", json={"bot": name}, headers=ADMIN)
        assert added.status_code == 200, added.text
    ada = own_bot(client, make_account(client, "ada"), "ada-one")
    bea = own_bot(client, make_account(client, "bea"), "bea-one")
    joined(client, ladder_id, ada["token"])
    joined(client, ladder_id, bea["token"])
    game_ids = pair(store, ladder_id, rules=Rules(provisional_games=5))
    assert len(game_ids) == 2
    for game in client.get(f"/v1/ladders/{ladder_id}").json()["live"]:
        assert len({b.split("-")[0] for b in game["bots"]}) == 2
        assert any(b.startswith("gate-") for b in game["bots"])
