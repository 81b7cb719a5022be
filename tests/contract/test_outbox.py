"""The Outbox contract (work the broker did not take), in memory and in Redis."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from shared.ports.outbox import InMemoryOutbox, Outbox, Pending
from shared.store.redis_outbox import RedisOutbox
from tests.support.stores import CLUSTER, redis_backend

DEFINITION = {"game": "beggar", "entrants": [{"bot": "turner"}], "seed": "9", "ratio": 0.1}


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.integration), CLUSTER])
def outbox(request: pytest.FixtureRequest) -> Outbox:
    """Returns each implementation in turn, empty (Redis, standalone and
    the module's Redis Cluster: this test's own key prefix)."""
    if request.param == "memory":
        return InMemoryOutbox()
    client, namespace = redis_backend(request)
    return RedisOutbox(client, namespace)


def test_an_empty_outbox_has_no_entries(outbox: Outbox) -> None:
    assert outbox.entries() == []
    assert outbox.size() == 0


def test_a_record_is_kept_with_its_work_until_done(outbox: Outbox) -> None:
    game = outbox.put(Pending("game", "g1"))
    tournament = outbox.put(Pending("tournament", "t1", DEFINITION))
    assert sorted(outbox.entries(), key=lambda e: e.pending.key) == [game, tournament]
    assert tournament.pending.definition == DEFINITION
    assert outbox.done(game)
    assert outbox.entries() == [tournament]
    assert not outbox.done(game), "done twice"
    assert outbox.done(tournament)
    assert outbox.entries() == []


def test_a_key_keeps_one_record_and_a_later_one_outlives_the_earlier_done(
    outbox: Outbox,
) -> None:
    first = outbox.put(Pending("game", "g1"))
    second = outbox.put(Pending("game", "g1"))
    assert first.token != second.token
    assert outbox.entries() == [second], "one record per game"
    assert outbox.size() == 1
    assert not outbox.done(first), "the work failed again since it was read: keep it"
    assert outbox.entries() == [second]
    assert outbox.done(second)
    assert outbox.entries() == []


def test_games_and_tournaments_of_one_id_are_kept_apart(outbox: Outbox) -> None:
    outbox.put(Pending("game", "x"))
    outbox.put(Pending("tournament", "x", DEFINITION))
    assert {e.pending.kind for e in outbox.entries()} == {"game", "tournament"}


def test_entries_come_a_batch_at_a_time(outbox: Outbox) -> None:
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: outbox.put(Pending("game", f"g{i}")), range(250)))
    batch = outbox.entries(100)
    assert len(batch) == 100
    assert outbox.size() == 250
    for entry in batch:
        assert outbox.done(entry)
    rest = outbox.entries(1000)
    assert len(rest) == 150
    assert {e.pending.target for e in batch + rest} == {f"g{i}" for i in range(250)}
