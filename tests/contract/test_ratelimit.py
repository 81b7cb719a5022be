"""The RateLimiter contract, run against the in-memory twin and the Redis adapter."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest
import redis

from shared.ports.ratelimit import InMemoryRateLimiter, RateLimiter
from shared.store.redis_limits import RedisRateLimiter
from tests.contract.cluster import CLUSTER, redis_backend

pytestmark = pytest.mark.contract

MakeLimiter = Callable[[int, int], RateLimiter]
"""Makes a limiter of `limit` requests per window of `window_s` seconds."""


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.integration), CLUSTER])
def make(request: pytest.FixtureRequest) -> MakeLimiter:
    """Returns a maker of each implementation in turn (Redis, standalone and
    the module's Redis Cluster: this test's own key prefix)."""
    if request.param == "memory":
        return InMemoryRateLimiter
    client, namespace = redis_backend(request)
    return lambda limit, window_s: RedisRateLimiter(client, limit, window_s, namespace)


def test_a_key_makes_limit_requests_per_window_then_is_refused_with_retry_after(
    make: MakeLimiter,
) -> None:
    limiter = make(3, 60)
    decisions = [limiter.hit("token:a") for _ in range(5)]
    assert [d.allowed for d in decisions] == [True, True, True, False, False]
    assert [d.remaining for d in decisions] == [2, 1, 0, 0, 0]
    assert [d.retry_after for d in decisions[:3]] == [0, 0, 0]
    assert all(55 <= d.retry_after <= 60 for d in decisions[3:])


def test_keys_are_counted_apart(make: MakeLimiter) -> None:
    limiter = make(1, 60)
    assert limiter.hit("token:a").allowed
    assert not limiter.hit("token:a").allowed
    assert limiter.hit("token:b").allowed


def test_a_new_window_starts_once_the_last_has_ended(make: MakeLimiter) -> None:
    limiter = make(2, 1)
    assert [limiter.hit("token:a").allowed for _ in range(3)] == [True, True, False]
    refused = limiter.hit("token:a")
    assert refused.retry_after == 1
    time.sleep(1.1)
    assert [limiter.hit("token:a").allowed for _ in range(3)] == [True, True, False]


def test_limit_zero_allows_everything(make: MakeLimiter) -> None:
    limiter = make(0, 60)
    assert all(limiter.hit("token:a").allowed for _ in range(50))


def test_concurrent_requests_are_counted_exactly(make: MakeLimiter) -> None:
    limiter = make(20, 60)
    with ThreadPoolExecutor(8) as pool:
        decisions = list(pool.map(lambda _: limiter.hit("token:a"), range(60)))
    assert sum(d.allowed for d in decisions) == 20


def test_a_limit_that_cannot_count_is_refused(make: MakeLimiter) -> None:
    with pytest.raises(ValueError, match="window"):
        make(5, 0)
    with pytest.raises(ValueError, match="limit"):
        make(-1, 60)


@pytest.mark.integration
def test_two_redis_limiters_on_separate_connections_share_one_count(
    redis_url: str, namespace: str, redis_client: redis.Redis
) -> None:
    other = redis.Redis.from_url(redis_url)
    try:
        first = RedisRateLimiter(redis_client, 4, 60, namespace)
        second = RedisRateLimiter(other, 4, 60, namespace)
        allowed = [limiter.hit("token:a").allowed for limiter in (first, second) * 3]
        assert allowed == [True, True, True, True, False, False]
        assert list(redis_client.scan_iter(match=f"{namespace}ratelimit:*")) == [
            f"{namespace}ratelimit:token:a".encode()
        ]
        assert 0 < redis_client.pttl(f"{namespace}ratelimit:token:a") <= 60_000
    finally:
        other.close()


def test_the_in_memory_limiter_forgets_keys_whose_window_ended() -> None:
    now = [0.0]
    limiter = InMemoryRateLimiter(1, 10, clock=lambda: now[0])
    assert limiter.hit("token:a").allowed
    assert not limiter.hit("token:a").allowed
    now[0] = 10.0
    assert limiter.hit("token:b").allowed
    assert limiter.hit("token:a").allowed
