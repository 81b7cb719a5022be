"""The RateLimiter contract, run against the in-memory twin and the Redis adapter."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest
import redis

from shared.ports.ratelimit import InMemoryRateLimiter, RateLimiter
from shared.store.redis_limits import RedisRateLimiter
from tests.support.stores import CLUSTER, redis_backend

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


def test_a_full_bucket_allows_limit_requests_at_once_then_refuses_with_retry_after(
    make: MakeLimiter,
) -> None:
    limiter = make(3, 60)
    decisions = [limiter.hit("token:a") for _ in range(5)]
    assert [d.allowed for d in decisions] == [True, True, True, False, False]
    assert [d.remaining for d in decisions] == [2, 1, 0, 0, 0]
    assert [d.retry_after for d in decisions[:3]] == [0, 0, 0]
    # One token comes back every 20 s; the bucket is full again 60 s after the last take.
    assert all(19 <= d.retry_after <= 20 for d in decisions[3:])
    assert [d.reset for d in decisions[:3]] == [20, 40, 60]
    assert all(59 <= d.reset <= 60 for d in decisions[3:])
    assert {d.limit for d in decisions} == {3}


def test_the_bucket_refills_evenly_and_never_past_full(make: MakeLimiter) -> None:
    limiter = make(4, 1)  # a token every 250 ms
    assert [limiter.hit("token:a").allowed for _ in range(5)] == [True] * 4 + [False]
    time.sleep(0.3)
    assert [limiter.hit("token:a").allowed for _ in range(2)] == [True, False]
    time.sleep(1.2)
    assert limiter.hit("token:a", 0).remaining == 4
    assert [limiter.hit("token:a").allowed for _ in range(5)] == [True] * 4 + [False]


def test_a_refused_request_takes_nothing(make: MakeLimiter) -> None:
    limiter = make(2, 1)
    assert [limiter.hit("token:a").allowed for _ in range(2)] == [True, True]
    for _ in range(20):
        assert not limiter.hit("token:a").allowed
    time.sleep(0.6)
    assert limiter.hit("token:a").allowed


def test_a_look_costs_nothing(make: MakeLimiter) -> None:
    limiter = make(3, 60)
    looks = [limiter.hit("token:a", 0) for _ in range(10)]
    assert all(d.allowed and d.remaining == 3 and d.reset == 0 for d in looks)
    limiter.hit("token:a")
    assert limiter.hit("token:a", 0).remaining == 2
    assert [limiter.hit("token:a").allowed for _ in range(3)] == [True, True, False]
    look = limiter.hit("token:a", 0)
    assert (look.allowed, look.remaining) == (True, 0)
    assert 19 <= look.retry_after <= 20  # when the bucket allows a request again
    with pytest.raises(ValueError, match="cost"):
        limiter.hit("token:a", -1)


def test_keys_are_counted_apart(make: MakeLimiter) -> None:
    limiter = make(1, 60)
    assert limiter.hit("token:a").allowed
    assert not limiter.hit("token:a").allowed
    assert limiter.hit("token:b").allowed


def test_limit_zero_allows_everything(make: MakeLimiter) -> None:
    limiter = make(0, 60)
    assert all(limiter.hit("token:a").allowed for _ in range(50))


def test_concurrent_requests_are_counted_exactly(make: MakeLimiter) -> None:
    limiter = make(20, 3600)
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
        assert 0 < redis_client.pttl(f"{namespace}ratelimit:token:a") <= 61_000
    finally:
        other.close()


def test_the_in_memory_limiter_forgets_keys_whose_bucket_refilled() -> None:
    now = [0.0]
    limiter = InMemoryRateLimiter(1, 10, clock=lambda: now[0])
    assert limiter.hit("token:a").allowed
    assert not limiter.hit("token:a").allowed
    assert len(limiter._buckets) == 1
    now[0] = 10.0
    assert limiter.hit("token:b", 0).allowed
    assert limiter._buckets == {}
    assert limiter.hit("token:a").allowed
