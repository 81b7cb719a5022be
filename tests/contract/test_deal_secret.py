"""The DealSecret contract (what a deployment's deals are keyed with), in memory and in Redis.

These tests draw random secrets on purpose (the tests' given one is not what they test); a
failure prints what was drawn.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
import redis

from shared.ports.deal_secret import DealSecret, GivenDealSecret, ProcessDealSecret
from shared.store.redis_deal_secret import RedisDealSecret
from tests.support.stores import CLUSTER, redis_backend

pytestmark = pytest.mark.usefixtures("random_deal_secret")


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.integration), CLUSTER])
def deployment(request: pytest.FixtureRequest) -> tuple[DealSecret, DealSecret]:
    """Returns the secret of one process of a deployment and that of another process of the
    same deployment (in memory: one process, so the same object; Redis, standalone and the
    module's Redis Cluster: this test's prefix)."""
    if request.param == "memory":
        secret = ProcessDealSecret()
        return secret, secret
    client, namespace = redis_backend(request)
    return RedisDealSecret(client, namespace), RedisDealSecret(client, namespace)


def test_a_secret_holds_at_least_128_random_bits_and_never_changes(
    deployment: tuple[DealSecret, DealSecret],
) -> None:
    secret, _ = deployment
    first = secret.get()
    assert len(first) >= 16, f"drawn: {first!r}"
    assert secret.get() == first, f"drawn: {first!r}"


def test_every_process_of_a_deployment_gets_the_same_secret_however_they_race(
    deployment: tuple[DealSecret, DealSecret],
) -> None:
    one, other = deployment
    with ThreadPoolExecutor(8) as pool:
        seen = set(pool.map(lambda i: (one, other)[i % 2].get(), range(16)))
    assert len(seen) == 1, f"drawn: {seen}"


def test_another_deployment_gets_another_secret() -> None:
    drawn = ProcessDealSecret().get(), ProcessDealSecret().get()
    assert drawn[0] != drawn[1], f"drawn: {drawn}"
    assert GivenDealSecret("x" * 32).get() == b"x" * 32


@pytest.mark.integration
def test_redis_keeps_one_secret_per_namespace(redis_client: redis.Redis, namespace: str) -> None:
    mine = RedisDealSecret(redis_client, namespace).get()
    theirs = RedisDealSecret(redis_client, f"{namespace}other:").get()
    assert mine != theirs, f"drawn: {mine!r}"
    assert redis_client.get(f"{namespace}deal-secret") == mine, f"drawn: {mine!r}"
    assert len(bytes.fromhex(mine.decode())) == 32
