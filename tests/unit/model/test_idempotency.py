"""Idempotency key namespaces: a client's key, whatever its text, never is a platform key,
and the API stores every client key under its caller (`client:<caller>:<key>`)."""

from __future__ import annotations

from collections.abc import Iterator

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st
from litestar import Litestar
from litestar.testing import TestClient

from services.game.app import create_app
from shared.app import stalls
from shared.app.loading import load
from shared.app.runtime import InProcessDispatcher
from shared.model.idempotency import (
    HOST,
    PLATFORM_KINDS,
    PlatformKind,
    bot_turn,
    client_key,
    game_id_for,
    platform_key,
    timeout,
    webhook_answer,
)
from shared.ports import deal_secret
from shared.ports.deal_secret import GivenDealSecret
from shared.store.memory import InMemoryEventStore

callers = st.one_of(
    st.just(HOST),
    st.from_regex(r"[a-z0-9][a-z0-9_.-]{0,8}@[a-z0-9][a-z0-9_.-]{0,8}", fullmatch=True),
)
parts = st.lists(st.one_of(st.integers(), st.text(max_size=20)), max_size=3)


@given(callers, st.text(min_size=1, max_size=60), st.sampled_from(sorted(PLATFORM_KINDS)), parts)
def test_no_client_key_is_a_platform_key_whatever_its_text(
    caller: str, key: str, kind: PlatformKind, rest: list[int | str]
) -> None:
    assert str(client_key(caller, key)) != str(platform_key(kind, *rest))
    assert client_key(caller, key).startswith("client:")
    assert not platform_key(kind, *rest).startswith("client:")


@given(callers, callers, st.text(min_size=1, max_size=20), st.text(min_size=1, max_size=20))
def test_two_callers_keys_meet_only_when_caller_and_key_are_the_same(
    one: str, other: str, key: str, again: str
) -> None:
    assert (client_key(one, key) == client_key(other, again)) == ((one, key) == (other, again))


def test_a_caller_identity_holding_a_colon_is_refused() -> None:
    with pytest.raises(ValueError, match="no ':'"):
        client_key("bot:evil", "k")


def test_the_platforms_keys_keep_their_text() -> None:
    assert (bot_turn(7), timeout(8), webhook_answer(9, 1)) == ("bot:7", "timeout:8", "webhook:9:1")


@pytest.fixture
def api() -> Iterator[tuple[TestClient[Litestar], InMemoryEventStore]]:
    """Returns an open-mode game service over a fresh in-memory store, and the store."""
    store = InMemoryEventStore()
    # One fixed secret, so that each test's seeded game deals the same cards every run.
    deal_secret.attach(store, GivenDealSecret("unit-test-deal-secret-0123456789abcdef"))
    dispatcher = InProcessDispatcher(store)
    with TestClient(create_app(store, dispatcher)) as client:
        yield client, store
    dispatcher.close()


def test_a_client_key_shaped_like_a_bot_key_is_stored_under_its_caller_only(
    api: tuple[TestClient[Litestar], InMemoryEventStore],
) -> None:
    client, store = api
    seats = [{"kind": "external"}, {"kind": "bot", "bot": "random"}]
    created = client.post("/v1/games", json={"game": "shithead", "seats": seats, "seed": 3})
    game_id = created.json()["game_id"]
    view = client.get(f"/v1/games/{game_id}/view", params={"seat": 0}).json()
    body = {"seat": 0, "action": view["legal_actions"][0], "expected_version": view["version"]}
    loaded = load(store, game_id)
    action = msgspec.convert(view["legal_actions"][0], loaded.spec.action_type)
    appended = len(loaded.spec.decide(loaded.state, 0, action))
    key = f"bot:{view['version'] + appended}"
    moved = client.post(f"/v1/games/{game_id}/actions", json=body, headers={"Idempotency-Key": key})
    assert moved.status_code == 200, moved.text
    mine = store.recall(game_id, client_key(HOST, key))
    assert mine is not None
    assert mine.first_version == view["version"] + 1
    # The platform's `bot:<v>` is the built-in bot's own move, appended right after `v`.
    platforms = store.recall(game_id, key)
    assert platforms is not None
    assert platforms.first_version == view["version"] + appended + 1
    assert load(store, game_id).version > moved.json()["version"]


def test_a_creation_key_never_takes_a_game_id_the_platform_derives_from_its_own_key(
    api: tuple[TestClient[Litestar], InMemoryEventStore],
) -> None:
    client, _ = api
    body = {"game": "beggar", "players": 2, "seed": 1}
    created = client.post("/v1/games", json=body, headers={"Idempotency-Key": "challenge:c1"})
    assert created.status_code == 201, created.text
    assert created.json()["game_id"] != game_id_for("challenge:c1")
    assert created.json()["game_id"] == game_id_for(client_key(HOST, "challenge:c1"))


def test_a_stall_of_a_loop_run_by_the_game_service_is_counted_on_its_metrics(
    api: tuple[TestClient[Litestar], InMemoryEventStore],
) -> None:
    client, _ = api
    stalls.report(stalls.Stall("bot_turns", "g", 3, stalls.MAX_IDLE_TRIES))
    text = client.get("/metrics").text
    assert 'cardarena_platform_stalls_total{loop="bot_turns"} 1.0' in text
