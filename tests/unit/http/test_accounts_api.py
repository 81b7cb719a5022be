"""Accounts through the API, in the embedded default: the registration modes, an account's
key registering and managing its own bots, the host's account owning the admin's and the
earlier bots, invite codes, suspension, name checks, the cap and the rate limit."""

from __future__ import annotations

import pytest

from shared.messages.codec import encode
from shared.model.registry import CODEC, KIND, STREAM, BotRegistered
from shared.store.memory import InMemoryEventStore
from tests.support.accounts import make_account, own_bot
from tests.support.api import (
    ADMIN,
    KEY,
    Client,
    admin_client,
    bearer,
    forbidden,
    problem,
    register,
    unauthorized,
)

pytestmark = pytest.mark.service(admin_key=KEY, registration="open")


def test_an_account_is_made_and_its_key_is_shown_once_and_stored_hashed(
    client: Client, store: InMemoryEventStore
) -> None:
    made = client.post("/v1/accounts", json={"name": "ada"})
    assert made.status_code == 201, made.text
    key = made.json()["key"]
    assert key.startswith("caa_")
    assert made.json()["name"] == "ada"
    me = client.get("/v1/accounts/me", headers=bearer(key)).json()
    assert me == {"name": "ada", "created_at": made.json()["created_at"], "suspended": False}
    raw = b"".join(recorded.data for recorded in store.read(STREAM))
    assert key.encode() not in raw
    assert key.split(".")[1].encode() not in raw


def test_an_account_registers_its_own_bot_and_lists_it_with_its_token_working(
    client: Client,
) -> None:
    key = make_account(client, "ada")
    bot = own_bot(client, key, "ada-bot")
    assert (bot["account"], bot["token"].startswith("cab_")) == ("ada", True)
    listed = client.get("/v1/accounts/me/bots", headers=bearer(key)).json()
    assert listed["account"] == "ada"
    assert [b["key"] for b in listed["bots"]] == ["ada-bot@1"]
    assert client.get("/v1/bots/me", headers=bearer(bot["token"])).json()["account"] == "ada"
    rotated = client.post("/v1/bots/ada-bot/1/token", headers=bearer(key))
    assert rotated.status_code == 201, rotated.text
    unauthorized(client.get("/v1/bots/me", headers=bearer(bot["token"])))
    revoked = client.delete("/v1/bots/ada-bot/1/token", headers=bearer(key))
    assert revoked.status_code == 204
    unauthorized(client.get("/v1/bots/me", headers=bearer(rotated.json()["token"])))


def test_the_admin_s_bots_and_earlier_registrations_belong_to_the_host(
    client: Client, store: InMemoryEventStore
) -> None:
    earlier = BotRegistered(name="old", version="1", game="shithead", strategy="heuristic")
    store.append(STREAM, KIND, 0, [encode(earlier)])
    assert b"account" not in store.read(STREAM)[0].data
    register(client, "alice")
    bots = {b["key"]: b["account"] for b in client.get("/v1/bots").json()["bots"]}
    assert bots == {"old@1": "host", "alice@1": "host"}
    host = client.get("/v1/accounts/me/bots", headers=ADMIN).json()
    assert (host["account"], [b["key"] for b in host["bots"]]) == ("host", ["old@1", "alice@1"])


def test_closed_registration_refuses_anyone_but_the_admin() -> None:
    with admin_client(InMemoryEventStore(), registration="closed") as client:
        body = problem(
            client.post("/v1/accounts", json={"name": "ada"}), 403, "registration-refused"
        )
        assert body["field"] == "CARDARENA_REGISTRATION"
        made = client.post("/v1/accounts", json={"name": "ada"}, headers=ADMIN)
        assert made.status_code == 201


def test_invite_registration_takes_a_host_s_code_once() -> None:
    with admin_client(InMemoryEventStore(), registration="invite") as client:
        missing = problem(client.post("/v1/accounts", json={"name": "ada"}), 422)
        assert missing["field"] == "invite"
        unauthorized(client.post("/v1/invites"))
        code = client.post("/v1/invites", headers=ADMIN).json()["invite"]
        assert code.startswith("cai_")
        wrong = client.post("/v1/accounts", json={"name": "ada", "invite": code + "x"})
        assert problem(wrong, 422)["field"] == "invite"
        assert client.post("/v1/accounts", json={"name": "ada", "invite": code}).status_code == 201
        again = client.post("/v1/accounts", json={"name": "bea", "invite": code})
        assert problem(again, 422)["field"] == "invite"


@pytest.mark.parametrize(
    ("name", "status", "slug"),
    [
        ("host", 422, "invalid-request"),
        ("admin", 422, "invalid-request"),
        ("heuristic", 422, "invalid-request"),
        ("Ada", 422, "invalid-request"),
        ("ab", 422, "invalid-request"),
        ("a" * 33, 422, "invalid-request"),
        ("taken", 409, "name-taken"),
    ],
)
def test_a_reserved_malformed_or_taken_account_name_is_refused_naming_it(
    client: Client, store: InMemoryEventStore, name: str, status: int, slug: str
) -> None:
    make_account(client, "taken")
    version = store.version(STREAM)
    body = problem(client.post("/v1/accounts", json={"name": name}), status, slug)
    assert body["field"] == "name"
    assert store.version(STREAM) == version


@pytest.mark.parametrize("name", ["heuristic", "mc", "random", "host", "me", "alice"])
def test_an_account_may_not_take_a_reserved_bot_name_or_another_owner_s(
    client: Client, store: InMemoryEventStore, name: str
) -> None:
    register(client, "alice")
    key = make_account(client, "ada")
    version = store.version(STREAM)
    body = {"name": name, "game": "shithead", "kind": "external"}
    refused = client.post("/v1/bots", json=body, headers=bearer(key))
    assert refused.status_code in (409, 422), refused.text
    assert refused.json()["field"] == "name"
    assert store.version(STREAM) == version


def test_an_account_s_name_is_its_own_for_every_version_even_against_the_admin(
    client: Client,
) -> None:
    key = make_account(client, "ada")
    own_bot(client, key, "ada-bot")
    own_bot(client, key, "ada-bot", version="2")
    other = make_account(client, "bea")
    body = {"name": "ada-bot", "version": "3", "game": "shithead", "kind": "external"}
    assert problem(client.post("/v1/bots", json=body, headers=bearer(other)), 409, "name-taken")
    assert problem(client.post("/v1/bots", json=body, headers=ADMIN), 409, "name-taken")


@pytest.mark.service(admin_key=KEY, registration="open", max_bots_per_account=2)
def test_an_account_holds_at_most_its_cap_of_bots(
    client: Client, store: InMemoryEventStore
) -> None:
    key = make_account(client, "ada")
    own_bot(client, key, "ada-bot")
    own_bot(client, key, "ada-bot", version="2")
    version = store.version(STREAM)
    body = {"name": "ada-bot", "version": "3", "game": "shithead", "kind": "external"}
    refused = problem(client.post("/v1/bots", json=body, headers=bearer(key)), 409, "too-many-bots")
    assert refused["limit"] == 2
    again = {"name": "ada-bot", "game": "shithead", "kind": "external"}
    assert client.post("/v1/bots", json=again, headers=bearer(key)).status_code == 200
    assert store.version(STREAM) == version
    register(client, {"name": "house", "version": "9", "game": "shithead", "kind": "external"})


def test_an_account_key_cannot_touch_another_account_s_bot_nor_host(client: Client) -> None:
    ada = make_account(client, "ada")
    bea = make_account(client, "bea")
    bot = own_bot(client, bea, "bea-bot")
    forbidden(client.post("/v1/bots/bea-bot/1/token", headers=bearer(ada)))
    forbidden(client.delete("/v1/bots/bea-bot/1/token", headers=bearer(ada)))
    assert client.get("/v1/bots/me", headers=bearer(bot["token"])).status_code == 200
    register(client, "alice")
    forbidden(client.post("/v1/bots/alice/1/token", headers=bearer(ada)))
    forbidden(client.post("/v1/accounts/bea/suspend", headers=bearer(ada)))
    forbidden(client.post("/v1/invites", headers=bearer(ada)))
    game = {"game": "shithead", "players": 2, "seed": 1}
    forbidden(client.post("/v1/games", json=game, headers=bearer(ada)))
    forbidden(client.get("/v1/bots/me", headers=bearer(ada)))
    forbidden(client.get("/v1/accounts/me", headers=bearer(bot["token"])))


def test_a_bot_token_cannot_register_bots(client: Client) -> None:
    bot = register(client, "alice")
    body = {"name": "sneaky", "game": "shithead", "kind": "external"}
    forbidden(client.post("/v1/bots", json=body, headers=bearer(bot["token"])))
    unauthorized(client.post("/v1/bots", json=body))


def test_secrets_never_reach_a_log_or_the_metrics(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("DEBUG")
    code = client.post("/v1/invites", headers=ADMIN).json()["invite"]
    key = make_account(client, "ada", invite=code)
    token = own_bot(client, key, "ada-bot")["token"]
    metrics = client.get("/metrics").text
    for secret in (code, key, token):
        assert secret not in caplog.text
        assert secret.split(".")[1] not in metrics


@pytest.mark.service(admin_key=KEY, registration="open", registration_rate_limit=2)
def test_registration_is_rate_limited_per_client_address(
    client: Client, store: InMemoryEventStore
) -> None:
    make_account(client, "ada")
    make_account(client, "bea")
    version = store.version(STREAM)
    refused = problem(client.post("/v1/accounts", json={"name": "cyd"}), 429, "rate-limited")
    assert "address" in refused["detail"]
    assert store.version(STREAM) == version
    assert client.post("/v1/accounts", json={"name": "cyd"}, headers=ADMIN).status_code == 201


@pytest.mark.service(admin_key=KEY, registration="open", registration_rate_limit=3)
def test_an_account_s_bot_registrations_are_rate_limited(client: Client) -> None:
    key = make_account(client, "ada")
    own_bot(client, key, "ada-bot")
    body = {"name": "ada-bot", "version": "2", "game": "shithead", "kind": "external"}
    assert client.post("/v1/bots", json=body, headers=bearer(key)).status_code == 201
    body = {"name": "ada-bot", "version": "3", "game": "shithead", "kind": "external"}
    problem(client.post("/v1/bots", json=body, headers=bearer(key)), 429, "rate-limited")


def test_the_registry_decodes_every_account_event(store: InMemoryEventStore) -> None:
    with admin_client(store, registration="open") as client:
        client.post("/v1/invites", headers=ADMIN)
        make_account(client, "ada")
        client.post("/v1/accounts/ada/suspend", headers=ADMIN, json={"reason": "spam"})
    kinds = [type(CODEC.decode(r)).__name__ for r in store.read(STREAM)]
    assert kinds == ["InviteIssued", "AccountCreated", "AccountSuspended"]
