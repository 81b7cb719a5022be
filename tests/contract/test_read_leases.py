"""The ReadLeases contract (which processes have folded the registry up to which version, for
how long), in memory and in Redis (standalone and Cluster)."""

from __future__ import annotations

import time

import pytest

from shared.ports.leases import InMemoryReadLeases, ReadLeases
from shared.store.redis_leases import RedisReadLeases
from tests.support.stores import CLUSTER, redis_backend

LONG_MS = 60_000


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.integration), CLUSTER])
def leases(request: pytest.FixtureRequest) -> ReadLeases:
    """Returns each implementation in turn, empty (Redis: this test's own key prefix)."""
    if request.param == "memory":
        return InMemoryReadLeases()
    client, namespace = redis_backend(request)
    return RedisReadLeases(client, "registry", namespace)


def test_a_holder_is_behind_every_version_above_the_one_it_folded(leases: ReadLeases) -> None:
    assert leases.behind(7) == [], "nobody holds a lease"
    leases.renew("b", 3, LONG_MS)
    leases.renew("a", 5, LONG_MS)
    assert leases.behind(3) == []
    assert leases.behind(4) == ["b"]
    assert leases.behind(6) == ["a", "b"], "sorted"
    leases.renew("b", 6, LONG_MS)
    assert leases.behind(6) == ["a"]


def test_a_live_lease_never_goes_back_to_an_older_version(leases: ReadLeases) -> None:
    leases.renew("a", 5, LONG_MS)
    leases.renew("a", 2, LONG_MS)
    assert leases.behind(5) == [], "a renewal with an older version keeps the newer one"


def test_a_lease_runs_out_after_its_time_to_live_and_then_counts_for_nothing(
    leases: ReadLeases,
) -> None:
    leases.renew("a", 1, 150)
    leases.renew("b", 1, LONG_MS)
    assert leases.behind(2) == ["a", "b"]
    time.sleep(0.3)
    assert leases.behind(2) == ["b"], "a's lease ran out: a no longer answers from its fold"
    leases.renew("a", 0, LONG_MS)
    assert leases.behind(1) == ["a"], "a new lease starts from the version it names"


def test_a_released_lease_is_gone_at_once(leases: ReadLeases) -> None:
    leases.renew("a", 1, LONG_MS)
    leases.renew("b", 1, LONG_MS)
    leases.release("a")
    leases.release("nobody")
    assert leases.behind(2) == ["b"]
