"""The game service's REST API over the real Redis event store: the same behaviours as in memory."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis
from litestar.testing import TestClient
from redis.backoff import NoBackoff
from redis.retry import Retry

from services.game.app import create_app
from shared.app.runtime import InProcessDispatcher
from shared.catalog import hosting
from shared.store.redis_store import RedisEventStore
from tests.support.api import problem
from tests.support.game_api import BUMP, GameApiBehaviours


@pytest.fixture(autouse=True)
def _hosted() -> Iterator[None]:
    """Hosts test-bump beside the built-in games for each test of this module, as the
    behaviours' own module does."""
    with hosting(BUMP):
        yield


class TestGameApiOnRedis(GameApiBehaviours):
    """The behaviours over Redis Streams, in a key namespace of each test's own."""

    @pytest.fixture
    def store(self, redis_client: redis.Redis, namespace: str) -> RedisEventStore:
        """Returns a Redis event store under this test's namespace."""
        return RedisEventStore(redis_client, namespace)


def test_a_redis_that_does_not_answer_is_503_with_retry_after() -> None:
    client = redis.Redis(port=1, socket_connect_timeout=0.5, retry=Retry(NoBackoff(), retries=0))
    store = RedisEventStore(client, "unreachable:")
    with TestClient(create_app(store, InProcessDispatcher(store))) as api:
        created = api.post("/v1/games", json={"game": "beggar", "players": 2})
        read = api.get("/v1/games/some-game")
    for response in (created, read):
        assert problem(response, 503)["type"].endswith("store-unavailable")
        assert response.headers["retry-after"] == "1"
