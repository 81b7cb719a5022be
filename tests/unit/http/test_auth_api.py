"""Identity and access through the API, in the embedded default: the admin key, bot tokens
(issued once, rotated, revoked), seats bound to bots, rate limits, the game cap, open mode.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any

import pytest

from services.game.http.pipeline.auth import warn_if_open
from services.projection.changes import decode
from services.settings import Settings
from shared.app.loading import load
from shared.app.registry import signing_secret
from shared.messages.envelope import RecordedEvent
from shared.model.registry import (
    CODEC,
    STREAM,
    BotRegistered,
    BotTokenIssued,
    BotTokenRevoked,
    WebhookSecretIssued,
)
from shared.store.memory import InMemoryEventStore
from tests.support.accounts import play_out
from tests.support.api import (
    ADMIN,
    ALICE,
    BOB,
    HOOK,
    KEY,
    Client,
    admin_client,
    app_client,
    bearer,
    forbidden,
    problem,
    register,
    unauthorized,
)

pytestmark = pytest.mark.service(admin_key=KEY, webhook_allow_private=True)


def bound_game(client: Client, seats: list[dict[str, Any]]) -> str:
    """Creates a Shithead game with `seats` as the admin; returns its id."""
    body = {"game": "shithead", "ruleset": "classic", "seats": seats, "seed": 3}
    created = client.post("/v1/games", json=body, headers=ADMIN)
    assert created.status_code == 201, created.text
    game_id: str = created.json()["game_id"]
    return game_id


def test_hosting_operations_need_the_admin_key_and_change_nothing_without_it(
    client: Client, store: InMemoryEventStore
) -> None:
    game = {"game": "beggar", "players": 2}
    tournament = {"game": "beggar", "entrants": [{"bot": "turner"}, {"bot": "random"}]}
    attempts = [
        ("POST", "/v1/games", game),
        ("POST", "/v1/bots", ALICE),
        ("POST", "/v1/tournaments", {**tournament, "table_size": 2}),
        ("POST", "/v1/tournaments/t1/cancel", None),
        ("GET", "/v1/schedules", None),
        ("DELETE", "/v1/schedules/s1", None),
        ("POST", "/v1/bots/alice/1/token", None),
        ("DELETE", "/v1/bots/alice/1/token", None),
    ]
    for method, url, body in attempts:
        missing = client.request(method, url, json=body)
        assert "error" not in unauthorized(missing)["detail"]
        wrong = client.request(method, url, json=body, headers=bearer("not-the-key"))
        unauthorized(wrong)
        assert 'error="invalid_token"' in wrong.headers["www-authenticate"]
    assert store.read_feed() == []
    assert client.post("/v1/games", json=game, headers=ADMIN).status_code == 201


def test_an_external_bot_gets_its_token_once_and_only_its_digest_is_stored(
    client: Client, store: InMemoryEventStore
) -> None:
    created = client.post("/v1/bots", json=ALICE, headers=ADMIN)
    assert created.status_code == 201, created.text
    bot = created.json()
    token = bot.pop("token")
    assert token.startswith("cab_")
    assert len(token) > 50
    assert (bot["kind"], bot["key"], bot["strategy"]) == ("external", "alice@1", "")
    again = client.post("/v1/bots", json=ALICE, headers=ADMIN)
    assert again.status_code == 200
    assert again.json() == bot
    assert client.get("/v1/bots/alice/1").json() == bot
    stored = b"".join(recorded.data for recorded in store.read(STREAM))
    assert token.encode() not in stored
    assert hashlib.sha256(token.encode()).hexdigest().encode() in stored
    me = client.get("/v1/bots/me", headers=bearer(token))
    assert me.status_code == 200
    assert me.json() == bot
    unauthorized(client.get("/v1/bots/me"))
    forbidden(client.get("/v1/bots/me", headers=ADMIN))


def test_a_bot_token_is_refused_for_hosting_operations(client: Client) -> None:
    token = register(client, ALICE)["token"]
    for method, url, body in [
        ("POST", "/v1/games", {"game": "beggar", "players": 2}),
        ("POST", "/v1/bots", BOB),
        ("POST", "/v1/bots/alice/1/token", None),
        ("GET", "/v1/schedules", None),
    ]:
        refused = client.request(method, url, json=body, headers=bearer(token))
        assert "alice@1" in forbidden(refused)["detail"]
    assert [b["key"] for b in client.get("/v1/bots").json()["bots"]] == ["alice@1"]


def test_public_reads_need_no_credentials(client: Client) -> None:
    game_id = client.post("/v1/games", json={"game": "beggar", "players": 2}, headers=ADMIN).json()[
        "game_id"
    ]
    for url in [
        f"/v1/games/{game_id}",
        f"/v1/games/{game_id}/events",
        "/v1/tournaments",
        "/v1/leaderboards/shithead",
        "/v1/bots",
        "/schema/openapi.json",
        "/health",
    ]:
        assert client.get(url).status_code == 200, url
    register(client, ALICE)
    for url in [f"/v1/games/{STREAM}", f"/v1/games/{STREAM}/events"]:
        assert problem(client.get(url), 404)["type"].endswith("unknown-game")


def test_a_bound_seat_is_read_by_its_bot_or_the_admin_and_played_by_its_bot_only(
    client: Client, store: InMemoryEventStore
) -> None:
    alice = register(client, ALICE)["token"]
    bob = register(client, BOB)["token"]
    game_id = bound_game(
        client,
        [{"kind": "external", "bot": "alice"}, {"kind": "external", "bot": "bob", "version": "1"}],
    )
    seats = load(store, game_id).created.seats
    assert [(s.kind, s.name, s.version, s.bound_bot) for s in seats] == [
        ("external", "alice", "1", "alice@1"),
        ("external", "bob", "1", "bob@1"),
    ]
    view_url, events_url = f"/v1/games/{game_id}/view", f"/v1/games/{game_id}/events"
    for url in (view_url, events_url):
        assert client.get(url, params={"seat": 0}, headers=bearer(alice)).status_code == 200
        assert client.get(url, params={"seat": 0}, headers=ADMIN).status_code == 200
        assert (
            "bob@1" in forbidden(client.get(url, params={"seat": 0}, headers=bearer(bob)))["detail"]
        )
        unauthorized(client.get(url, params={"seat": 0}))
        unauthorized(client.get(url, params={"seat": 0}, headers=bearer(alice + "x")))
    view = client.get(view_url, params={"seat": 0}, headers=bearer(alice)).json()
    action = {"seat": 0, "action": view["legal_actions"][0], "expected_version": view["version"]}
    url = f"/v1/games/{game_id}/actions"
    version = store.version(game_id)
    forbidden(client.post(url, json=action, headers=bearer(bob)))
    forbidden(client.post(url, json=action, headers=ADMIN))
    unauthorized(client.post(url, json=action))
    # A move's handler identifies a bot token itself (IDENTIFIED_BY_HANDLER): the same answers.
    unauthorized(client.post(url, json=action, headers=bearer(alice + "x")))
    unauthorized(client.post(url, json=action, params={"wait": 5}, headers=bearer("cab_x.y")))
    forbidden(client.post(url, json=action, params={"wait": 5}, headers=bearer(bob)))
    assert store.version(game_id) == version
    assert client.post(url, json=action, headers=bearer(alice)).status_code == 200
    assert store.version(game_id) > version


def test_an_unbound_external_seat_is_the_hosts(client: Client, store: InMemoryEventStore) -> None:
    alice = register(client, ALICE)["token"]
    game_id = bound_game(client, [{"kind": "external"}, {"kind": "bot", "bot": "random"}])
    url = f"/v1/games/{game_id}/view"
    view = client.get(url, params={"seat": 0}, headers=ADMIN)
    assert view.status_code == 200
    unauthorized(client.get(url, params={"seat": 0}))
    forbidden(client.get(url, params={"seat": 0}, headers=bearer(alice)))
    forbidden(client.get(url, params={"seat": 1}, headers=bearer(alice)))
    body = view.json()
    action = {"seat": 0, "action": body["legal_actions"][0], "expected_version": body["version"]}
    forbidden(client.post(f"/v1/games/{game_id}/actions", json=action, headers=bearer(alice)))
    accepted = client.post(f"/v1/games/{game_id}/actions", json=action, headers=ADMIN)
    assert accepted.status_code == 200, accepted.text


def test_a_rotated_token_stops_working_at_once_and_a_revoked_one_too(client: Client) -> None:
    old = register(client, ALICE)["token"]
    rotated = client.post("/v1/bots/alice/1/token", headers=ADMIN)
    assert rotated.status_code == 201, rotated.text
    new = rotated.json()["token"]
    assert new != old
    unauthorized(client.get("/v1/bots/me", headers=bearer(old)))
    assert client.get("/v1/bots/me", headers=bearer(new)).json()["key"] == "alice@1"
    assert client.delete("/v1/bots/alice/1/token", headers=ADMIN).status_code == 204
    unauthorized(client.get("/v1/bots/me", headers=bearer(new)))
    assert client.delete("/v1/bots/alice/1/token", headers=ADMIN).status_code == 204
    issued = client.post("/v1/bots/alice/1/token", headers=ADMIN).json()["token"]
    assert client.get("/v1/bots/me", headers=bearer(issued)).status_code == 200


def test_builtin_and_unknown_bots_have_no_token_to_rotate(client: Client) -> None:
    register(client, {"name": "deep", "game": "shithead", "strategy": "heuristic"})
    builtin = problem(client.post("/v1/bots/deep/1/token", headers=ADMIN), 422)
    assert builtin["field"] == "kind"
    unknown = problem(client.post("/v1/bots/nobody/1/token", headers=ADMIN), 404)
    assert "nobody@1" in unknown["detail"]
    problem(client.delete("/v1/bots/nobody/1/token", headers=ADMIN), 404)


def test_a_webhook_bot_gets_a_token_and_a_signing_secret_once(
    client: Client, store: InMemoryEventStore
) -> None:
    created = register(client, HOOK)
    assert created["url"] == HOOK["url"]
    assert created["signing_secret"] == signing_secret(store, "hook", "1")
    assert created["token"].startswith("cab_")
    public = client.get("/v1/bots/hook/1").json()
    assert {"url", "token", "signing_secret"}.isdisjoint(public)
    assert client.get("/v1/bots/hook/1", headers=ADMIN).json()["url"] == HOOK["url"]
    rotated = client.post("/v1/bots/hook/1/token", headers=ADMIN).json()
    assert rotated["signing_secret"] not in {created["signing_secret"], None}
    assert signing_secret(store, "hook", "1") == rotated["signing_secret"]
    game_id = bound_game(
        client, [{"kind": "webhook", "bot": "hook"}, {"kind": "bot", "bot": "random"}]
    )
    assert load(store, game_id).created.seats[0].bound_bot == "hook@1"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"url": "ftp://bots.example/hook"}, "url"),
        ({"url": "not a url"}, "url"),
        ({"url": ""}, "url"),
        ({"url": "https://user:password@bots.example/hook"}, "url"),
        ({"strategy": "heuristic"}, "strategy"),
        ({"name": "me"}, "name"),
        ({"game": "beggar"}, "game"),
    ],
)
def test_a_bad_webhook_registration_names_its_field(
    client: Client, change: dict[str, Any], field: str
) -> None:
    refused = client.post("/v1/bots", json={**HOOK, **change}, headers=ADMIN)
    assert problem(refused, 422)["field"] == field
    assert client.get("/v1/bots").json() == {"bots": []}


@pytest.mark.parametrize(
    ("seat", "field"),
    [
        ({"kind": "external", "bot": "nobody"}, "seats[0].bot"),
        ({"kind": "external", "bot": "deep"}, "seats[0].bot"),
        ({"kind": "webhook", "bot": "alice"}, "seats[0].kind"),
        ({"kind": "webhook"}, "seats[0].bot"),
        ({"kind": "external", "version": "1"}, "seats[0].version"),
        ({"kind": "external", "bot": "alice", "name": "al"}, "seats[0].name"),
        ({"kind": "external", "bot": "autobot"}, "seats[0].bot"),
    ],
)
def test_a_seat_naming_no_fitting_bot_is_refused(
    client: Client, store: InMemoryEventStore, seat: dict[str, Any], field: str
) -> None:
    register(client, ALICE)
    register(client, {"name": "deep", "game": "shithead", "strategy": "heuristic"})
    register(client, {"name": "autobot", "game": "autobus", "kind": "external"})
    body = {"game": "shithead", "seats": [seat, {"kind": "bot"}]}
    refused = client.post("/v1/games", json=body, headers=ADMIN)
    assert problem(refused, 422)["field"] == field
    assert all(entry.event.game_id == STREAM for entry in store.read_feed())


def test_open_mode_needs_no_credentials_but_still_checks_the_ones_given(
    store: InMemoryEventStore,
) -> None:
    with app_client(store) as client:
        alice = client.post("/v1/bots", json=ALICE).json()["token"]
        game = {"game": "shithead", "seats": [{"kind": "external"}, {"kind": "bot"}]}
        game_id = client.post("/v1/games", json=game).json()["game_id"]
        view = client.get(f"/v1/games/{game_id}/view", params={"seat": 0})
        assert view.status_code == 200
        unauthorized(client.get(f"/v1/games/{game_id}", headers=bearer("cab_nope.nope")))
        forbidden(client.post("/v1/games", json=game, headers=bearer(alice)))
        bound = {"game": "shithead", "seats": [{"kind": "external", "bot": "alice"}, {}]}
        bound_id = client.post("/v1/games", json=bound).json()["game_id"]
        seat_view = client.get(f"/v1/games/{bound_id}/view", params={"seat": 0}).json()
        action = {
            "seat": 0,
            "action": seat_view["legal_actions"][0],
            "expected_version": seat_view["version"],
        }
        unauthorized(client.post(f"/v1/games/{bound_id}/actions", json=action))
        played = client.post(f"/v1/games/{bound_id}/actions", json=action, headers=bearer(alice))
        assert played.status_code == 200


def test_a_token_over_its_rate_limit_gets_429_with_retry_after(store: InMemoryEventStore) -> None:
    with admin_client(
        store, rate_limit=3, turn_rate_limit=2, rate_window=60, webhook_allow_private=True
    ) as client:
        alice = register(client, ALICE)["token"]
        bob = register(client, BOB)["token"]
        for _ in range(3):
            assert client.get("/v1/bots/me", headers=bearer(alice)).status_code == 200
        limited = client.get("/v1/bots/me", headers=bearer(alice))
        body = problem(limited, 429)
        assert body["type"].endswith("rate-limited")
        assert 1 <= int(limited.headers["retry-after"]) <= 60
        move = {"seat": 0, "action": {"type": "ready"}, "expected_version": 2}
        game = client.post(
            "/v1/games",
            json={"game": "shithead", "seats": [{"kind": "external", "bot": "alice"}] * 2},
            headers=ADMIN,
        ).json()["game_id"]
        # An action that is no move is paid from the turns' budget once the requests' is
        # empty, then refused: nothing is appended either way.
        url = f"/v1/games/{game}/actions"
        answers = [client.post(url, json=move, headers=bearer(alice)) for _ in range(3)]
        assert [a.status_code for a in answers] == [422, 422, 429]
        assert problem(answers[2], 429)["type"].endswith("rate-limited")
        assert store.version(game) == 2
        assert client.get(f"/v1/games/{game}/view?seat=0", headers=bearer(alice)).status_code == 429
        assert client.get("/v1/bots/me", headers=bearer(bob)).status_code == 200
        assert client.post("/v1/bots", json=HOOK, headers=ADMIN).status_code == 201


def test_a_bot_at_its_cap_of_running_games_is_refused_naming_the_seat(
    store: InMemoryEventStore,
) -> None:
    with admin_client(store, max_games_per_bot=1) as client:
        alice = register(client, ALICE)["token"]
        register(client, BOB)
        seats = [{"kind": "external", "bot": "alice"}, {"kind": "bot", "bot": "heuristic"}]
        body = {"game": "shithead", "seats": seats, "seed": 1}
        retry = {**ADMIN, "Idempotency-Key": "first"}
        first = client.post("/v1/games", json=body, headers=retry)
        assert first.status_code == 201
        assert client.post("/v1/games", json=body, headers=retry).status_code == 200
        feed = len(store.read_feed(count=10_000))
        second = {"game": "shithead", "seats": [{"kind": "external", "bot": "bob"}, seats[0]]}
        refused = problem(client.post("/v1/games", json=second, headers=ADMIN), 422)
        assert refused["field"] == "seats[1]"
        assert "alice@1" in refused["detail"]
        assert len(store.read_feed(count=10_000)) == feed
        play_out(client, first.json()["game_id"], {0: alice})
        assert client.post("/v1/games", json=second, headers=ADMIN).status_code == 201


def test_a_tournament_seats_its_external_entrants_and_goes_on_when_they_finish(
    client: Client, store: InMemoryEventStore
) -> None:
    tokens = {"alice@1": register(client, ALICE)["token"], "bob@1": register(client, BOB)["token"]}
    body = {
        "game": "shithead",
        "entrants": [{"bot": "alice"}, {"bot": "bob"}],
        "table_size": 2,
        "seed": "7",
    }
    created = client.post("/v1/tournaments", json=body, headers=ADMIN)
    assert created.status_code == 201, created.text
    tournament = created.json()
    assert [e["kind"] for e in tournament["definition"]["entrants"]] == ["external", "external"]
    (game,) = tournament["rounds"][0]["games"]
    seats = load(store, game["game_id"]).created.seats
    assert {(s.kind, s.bound_bot) for s in seats} == {("external", key) for key in tokens}
    play_out(client, game["game_id"], {i: tokens[str(s.bound_bot)] for i, s in enumerate(seats)})
    finished = client.get(f"/v1/tournaments/{tournament['tournament_id']}").json()
    assert (finished["status"], finished["games_played"]) == ("finished", 1)


def test_the_real_stack_without_an_admin_key_warns_at_startup(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log = logging.getLogger("test.auth")
    with caplog.at_level(logging.WARNING, logger="test.auth"):
        assert warn_if_open(Settings(store="redis"), log)
        assert not warn_if_open(Settings(store="redis", admin_key=KEY), log)
        assert not warn_if_open(Settings(store="memory"), log)
    assert [r.message for r in caplog.records if "CARDARENA_ADMIN_KEY" in r.message] != []
    assert len(caplog.records) == 1


# Written on 2026-12-01 by the registry before bots had kinds; never edit, add new samples.
FROZEN_BOT_REGISTERED = (
    "87a474797065ad426f7452656769737465726564a46e616d65a464656570a776657273696f6ea132a467616d"
    "65a87368697468656164a87374726174656779a9686575726973746963ab6465736372697074696f6eb77468"
    "65206865757269737469632c206c6162656c6c6564ad726567697374657265645f6174bd323032362d31322d"
    "30315431303a30303a30302e3030302b30303a3030"
)


def test_registry_events_of_every_version_decode_for_the_service_and_the_projection(
    client: Client, store: InMemoryEventStore
) -> None:
    old = RecordedEvent(
        STREAM, "registry", 1, "BotRegistered", bytes.fromhex(FROZEN_BOT_REGISTERED)
    )
    decoded = CODEC.decode(old)
    assert isinstance(decoded, BotRegistered)
    assert (decoded.name, decoded.kind, decoded.url, decoded.strategy) == (
        "deep",
        "builtin",
        "",
        "heuristic",
    )
    register(client, HOOK)
    client.post("/v1/bots/hook/1/token", headers=ADMIN)
    client.delete("/v1/bots/hook/1/token", headers=ADMIN)
    types = [type(decode(recorded)) for recorded in store.read(STREAM)]
    assert set(types) == {BotRegistered, BotTokenIssued, BotTokenRevoked, WebhookSecretIssued}
