"""Accounts over the real Redis: two game service processes over one namespace, each with its
registry follower and read lease (as `serve_game` builds them). An account made, a bot
registered or an account suspended through one process holds on the other once it answers,
and the registration rate limit is one budget shared by both."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from services.bootstrap.game import build_access
from services.bootstrap.stores import build_store
from services.game.app import create_app
from services.settings import Settings, load_settings
from shared.app.runtime import InProcessDispatcher
from shared.model.registry import STREAM
from shared.store.redis_store import RedisEventStore
from tests.support.api import ADMIN, KEY, bearer

Api = TestClient[Any]


def _settings(redis_url: str, namespace: str, **extra: str) -> Settings:
    return load_settings(
        {
            "CARDARENA_STORE": "redis",
            "REDIS_URL": redis_url,
            "CARDARENA_NAMESPACE": namespace,
            "CARDARENA_ADMIN_KEY": KEY,
            "CARDARENA_RATE_LIMIT": "0",
            "CARDARENA_REGISTRY_LEASE_SECONDS": "1.0",
            "CARDARENA_REGISTRATION": "open",
            **extra,
        }
    )


def _app(settings: Settings) -> tuple[Api, RedisEventStore]:
    store = build_store(settings)
    assert isinstance(store, RedisEventStore)
    app = create_app(store, InProcessDispatcher(store), access=build_access(settings, store))
    return TestClient(app), store


def test_an_account_made_on_one_process_registers_and_is_suspended_everywhere_at_once(
    redis_url: str, namespace: str
) -> None:
    settings = _settings(redis_url, namespace)
    (a, store), (b, _) = _app(settings), _app(settings)
    with a, b:
        made = a.post("/v1/accounts", json={"name": "ada"})
        assert made.status_code == 201, made.text
        key = made.json()["key"]
        body = {"name": "ada-bot", "game": "shithead", "kind": "external"}
        registered = b.post("/v1/bots", json=body, headers=bearer(key))
        assert registered.status_code == 201, "the key works on B once A answered"
        token = registered.json()["token"]
        assert a.get("/v1/bots/me", headers=bearer(token)).json()["account"] == "ada"
        taken = b.post("/v1/accounts", json={"name": "ada"})
        assert taken.status_code == 409
        suspended = b.post("/v1/accounts/ada/suspend", headers=ADMIN)
        assert suspended.status_code == 200, suspended.text
        assert a.get("/v1/bots/me", headers=bearer(token)).status_code == 401
        again = {**body, "version": "2"}
        assert a.post("/v1/bots", json=again, headers=bearer(key)).status_code == 403
        assert a.get("/v1/accounts/me", headers=bearer(key)).json()["suspended"] is True
        raw = b"".join(recorded.data for recorded in store.read(STREAM))
        assert key.split(".")[1].encode() not in raw
        assert token.split(".")[1].encode() not in raw


def test_the_registration_rate_limit_is_one_budget_across_processes(
    redis_url: str, namespace: str
) -> None:
    settings = _settings(redis_url, namespace, CARDARENA_REGISTRATION_RATE_LIMIT="2")
    (a, _), (b, _) = _app(settings), _app(settings)
    with a, b:
        assert a.post("/v1/accounts", json={"name": "ada"}).status_code == 201
        assert b.post("/v1/accounts", json={"name": "bea"}).status_code == 201
        refused = a.post("/v1/accounts", json={"name": "cyd"})
        assert refused.status_code == 429, refused.text
        assert int(refused.headers["retry-after"]) >= 1
        assert b.get("/v1/accounts/me", headers=ADMIN).json()["name"] == "host"
