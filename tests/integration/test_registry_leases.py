"""Token checks without a registry read, and changes that still take effect at once on every
process (issue 17): two game service apps over one Redis namespace, each with its registry
follower and read lease, and a third process that stops following.

The attack: a bot token rotated or revoked through one process must not work on another
for a moment longer, not even on a process that stopped reading the registry (hung, or cut
off from Redis) while it still trusted its fold.
"""

from __future__ import annotations

import time
from typing import Any

import httpx
import redis
from litestar.testing import TestClient

from services.bootstrap.game import build_access
from services.bootstrap.stores import build_store, store_client
from services.game.app import create_app
from services.game.http.pipeline.follower import RegistryFollower
from services.settings import Settings, load_settings
from shared.app.registry import LEASES, RegistryIndex
from shared.app.runtime import InProcessDispatcher
from shared.messages.envelope import RecordedEvent
from shared.model.registry import STREAM
from shared.store.redis_leases import RedisReadLeases
from shared.store.redis_store import RedisEventStore
from tests.support.api import ADMIN, KEY

LEASE_S = 1.0
"""A short lease, so that the process that stops following runs out of it quickly."""
BOUND_S = 30.0

Api = TestClient[Any]


class CountingStore(RedisEventStore):
    """The Redis event store, counting the reads of the registry's stream (and the waits of
    the follower apart)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.registry_reads = 0

    def read(self, stream: str, after: int = 0, limit: int | None = None) -> list[RecordedEvent]:
        if stream == STREAM:
            self.registry_reads += 1
        return super().read(stream, after, limit)


def _settings(redis_url: str, namespace: str) -> Settings:
    return load_settings(
        {
            "CARDARENA_STORE": "redis",
            "REDIS_URL": redis_url,
            "CARDARENA_NAMESPACE": namespace,
            "CARDARENA_ADMIN_KEY": KEY,
            "CARDARENA_RATE_LIMIT": "0",
            "CARDARENA_REGISTRY_LEASE_SECONDS": str(LEASE_S),
        }
    )


def _app(settings: Settings, store: RedisEventStore | None = None) -> tuple[Api, RedisEventStore]:
    """Returns a test client of one game service process (as `serve_game` builds it) and its
    store; `store` in place of the one `settings` says."""
    built = store or build_store(settings)
    assert isinstance(built, RedisEventStore)
    app = create_app(built, InProcessDispatcher(built), access=build_access(settings, built))
    return TestClient(app), built


def _counting(settings: Settings) -> CountingStore:
    return CountingStore(
        store_client(settings), namespace=settings.namespace, partitions=settings.partitions
    )


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _register(api: Api, name: str) -> str:
    response = api.post(
        "/v1/bots", json={"name": name, "game": "autobus", "kind": "external"}, headers=ADMIN
    )
    assert response.status_code == 201, response.text
    return str(response.json()["token"])


def _me(api: Api, token: str) -> httpx.Response:
    return api.get("/v1/bots/me", headers=_bearer(token))


def _until_trusted(index: RegistryIndex) -> None:
    deadline = time.monotonic() + BOUND_S
    while not index.trusted:
        assert time.monotonic() < deadline, "the follower never trusted its fold"
        time.sleep(0.01)


def test_token_checks_read_nothing_from_the_registry_while_the_lease_lasts(
    redis_url: str, namespace: str
) -> None:
    settings = _settings(redis_url, namespace)
    counting = _counting(settings)
    (a, _), (b, _) = _app(settings), _app(settings, counting)
    with a, b:
        token = _register(a, "alice")
        index = b.app.state["access"].registry
        _until_trusted(index)
        before = counting.registry_reads
        for _ in range(50):
            assert _me(b, token).status_code == 200
        assert _me(b, "cab_0000000000000000.guess").status_code == 401
        assert counting.registry_reads == before, "a token check read the registry"


def test_a_rotation_or_revocation_through_one_process_stops_the_token_on_the_other_at_once(
    redis_url: str, namespace: str
) -> None:
    settings = _settings(redis_url, namespace)
    (a, _), (b, _) = _app(settings), _app(settings)
    with a, b:
        token = _register(a, "alice")
        assert _me(b, token).status_code == 200, "a registration answers once B has it"
        for round_ in range(10):
            one, other = (a, b) if round_ % 2 else (b, a)
            rotated = one.post("/v1/bots/alice/1/token", headers=ADMIN)
            assert rotated.status_code == 201, rotated.text
            assert _me(other, token).status_code == 401, "the old token still works elsewhere"
            token = str(rotated.json()["token"])
            assert _me(other, token).status_code == 200, "the new token does not work yet"
        assert a.delete("/v1/bots/alice/1/token", headers=ADMIN).status_code == 204
        assert _me(b, token).status_code == 401, "the revoked token still works on B"
        assert _me(a, token).status_code == 401


def test_a_process_that_stops_following_cannot_keep_a_revoked_token_alive(
    redis_url: str, redis_client: redis.Redis, namespace: str
) -> None:
    settings = _settings(redis_url, namespace)
    (a, store) = _app(settings)
    with a:
        token = _register(a, "alice")
        # C follows once, then hangs: it trusts its fold for 90% of a lease it holds in Redis.
        hung = RegistryIndex(store)
        leases = RedisReadLeases(redis_client, LEASES, namespace)
        follower = RegistryFollower(store, hung, leases, int(LEASE_S * 1000), holder="hung")
        follower.step(0, time.monotonic())
        assert hung.trusted
        assert hung.bot_of_token(token) is not None
        assert a.delete("/v1/bots/alice/1/token", headers=ADMIN).status_code == 204
        # The revocation answered only once C's lease ran out: C reads again, and refuses.
        assert not hung.trusted
        assert hung.bot_of_token(token) is None, "a hung process still took the token"
        assert leases.behind(store.version(STREAM)) == []


def test_a_stopped_follower_gives_its_lease_up_and_its_process_reads_again(
    redis_url: str, redis_client: redis.Redis, namespace: str
) -> None:
    settings = _settings(redis_url, namespace)
    (a, _), (b, _) = _app(settings), _app(settings)
    leases = RedisReadLeases(redis_client, LEASES, namespace)
    with a:
        token = _register(a, "alice")
        b_access = b.app.state["access"]
        with b:
            _until_trusted(b_access.registry)
            assert len(leases.behind(10**9)) == 2, "both processes hold a lease"
        assert len(leases.behind(10**9)) == 1, "B shut down: its lease is gone"
        assert not b_access.registry.trusted
        assert a.delete("/v1/bots/alice/1/token", headers=ADMIN).status_code == 204
        assert b_access.registry.bot_of_token(token) is None
