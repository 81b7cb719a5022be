"""The bot index contract: which games and challenges wait for a bot, for the twin (folding an
in-memory store's feed) and the stack (the projection's PostgreSQL views at its checkpoint and
the Redis feed after it, with a real projector run over the feed)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta

import msgspec
import pytest
import redis

from services.ops.migrate import migrate
from services.projection.bot_index import ProjectedBotIndex
from services.projection.projector import Projector
from services.projection.queries import checkpoint
from shared.catalog import get_game
from shared.messages.codec import encode
from shared.messages.common import GameAborted, GameCreated, Result, Seat
from shared.model.challenges import (
    ChallengeAccepted,
    ChallengeCancelled,
    ChallengeDeclined,
)
from shared.ports.bot_index import BotIndex, FeedBotIndex
from shared.store.memory import InMemoryEventStore
from shared.store.port import EventStore, position_key
from shared.store.redis_store import RedisEventStore
from tests.support.bot_index import (
    ALICE,
    BOB,
    CAROL,
    NOW,
    answer,
    challenge,
    create,
    external,
    finish,
)


@dataclass
class Rig:
    """A store, a way to make an index over it (a fresh one: a process starting), and the
    projection of what the store holds so far (nothing to do for the twin)."""

    store: EventStore
    make_index: Callable[[], BotIndex]
    project: Callable[[], None]


def _memory_rig() -> Rig:
    store = InMemoryEventStore(partitions=4)
    return Rig(store, lambda: FeedBotIndex(store), lambda: None)


def _stack_rig(client: redis.Redis, namespace: str, database_url: str) -> Iterator[Rig]:
    migrate(database_url)
    store = RedisEventStore(client, namespace)
    projector = Projector(database_url, store.consumer("projection", "p1"))

    def project() -> None:
        """Projects the whole feed (the consumer hands out an entry once its ms has passed):
        until the checkpoint is at the feed's last entry."""
        last = max(position_key(store.partition_position(p)) for p in range(store.partitions))
        for _ in range(500):
            time.sleep(0.002)
            projector.run_once(500)
            done = checkpoint(database_url)
            if done is not None and position_key(done) >= last:
                return
        raise AssertionError(f"the projection did not reach {last}")

    yield Rig(store, lambda: ProjectedBotIndex(store, database_url, prune_every=2), project)
    projector.close()


@pytest.fixture(params=["memory", pytest.param("stack", marks=pytest.mark.integration)])
def rig(request: pytest.FixtureRequest) -> Iterator[Rig]:
    """Returns each implementation's rig in turn."""
    if request.param == "memory":
        yield _memory_rig()
        return
    client: redis.Redis = request.getfixturevalue("redis_client")
    namespace: str = request.getfixturevalue("namespace")
    database_url: str = request.getfixturevalue("database_url")
    yield from _stack_rig(client, namespace, database_url)


def refreshed(rig: Rig, index: BotIndex | None = None) -> BotIndex:
    """Returns `index` (else a fresh one) refreshed."""
    index = index if index is not None else rig.make_index()
    index.refresh()
    return index


def test_a_bot_with_no_games_has_no_games_seats_or_challenges(rig: Rig) -> None:
    create(rig.store, "g-other", external(BOB), Seat(bot="turner"))
    challenge(rig.store, "c-other", BOB, expires=NOW + timedelta(hours=1))
    rig.project()
    index = refreshed(rig)

    assert index.running(CAROL) == []
    assert index.seats_of(CAROL, "g-other") == []
    assert index.seats_of(CAROL, "g-never-created") == []
    assert index.challenges_of(CAROL, NOW) == []
    assert index.running(BOB) == ["g-other"]


def test_games_created_and_finished_before_and_after_the_checkpoint(rig: Rig) -> None:
    store = rig.store
    create(store, "g-done-early", external(ALICE), Seat(bot="turner"))
    create(store, "g-running-early", Seat(bot="turner"), external(ALICE))
    create(store, "g-done-late", external(ALICE), Seat(bot="turner"))
    finish(store, "g-done-early")
    rig.project()
    along = refreshed(rig)
    create(store, "g-running-late", external(ALICE), external(BOB))
    finish(store, "g-done-late")
    create(store, "g-bob", external(BOB), Seat(bot="turner"))

    for index in (refreshed(rig, along), refreshed(rig)):
        assert sorted(index.running(ALICE)) == ["g-running-early", "g-running-late"]
        assert sorted(index.running(BOB)) == ["g-bob", "g-running-late"]
        assert index.seats_of(ALICE, "g-done-early") == [0]
        assert index.seats_of(ALICE, "g-running-early") == [1]
        assert index.seats_of(ALICE, "g-running-late") == [0]
        assert index.seats_of(BOB, "g-running-late") == [1]

    finish(store, "g-running-early")
    rig.project()
    for index in (refreshed(rig, along), refreshed(rig)):
        assert sorted(index.running(ALICE)) == ["g-running-late"]
        assert index.seats_of(ALICE, "g-running-early") == [1]


def abort(store: EventStore, game_id: str) -> None:
    """Appends the platform's GameAborted to a game created by `create`."""
    aborted = GameAborted(result=Result(status="aborted", places=[], reason="host"))
    store.append(game_id, "beggar", store.version(game_id), [encode(aborted)])


def test_an_aborted_game_is_no_longer_running_before_or_after_the_checkpoint(rig: Rig) -> None:
    store = rig.store
    create(store, "g-aborted-early", external(ALICE), Seat(bot="turner"))
    create(store, "g-aborted-late", Seat(bot="turner"), external(ALICE))
    abort(store, "g-aborted-early")
    rig.project()
    along = refreshed(rig)
    abort(store, "g-aborted-late")

    for index in (refreshed(rig, along), refreshed(rig)):
        assert index.running(ALICE) == []
        assert index.seats_of(ALICE, "g-aborted-late") == [1]
    rig.project()
    assert refreshed(rig).running(ALICE) == []


def test_a_game_with_seats_bound_to_two_bots_is_each_ones(rig: Rig) -> None:
    create(rig.store, "g-pair", external(ALICE), external(BOB), external(ALICE))
    rig.project()
    create(rig.store, "g-pair-late", external(BOB), Seat(bot="turner"), external(ALICE))

    index = refreshed(rig)

    assert index.seats_of(ALICE, "g-pair") == [0, 2]
    assert index.seats_of(BOB, "g-pair") == [1]
    assert index.seats_of(ALICE, "g-pair-late") == [2]
    assert index.seats_of(BOB, "g-pair-late") == [0]
    assert sorted(index.running(ALICE)) == ["g-pair", "g-pair-late"]
    assert sorted(index.running(BOB)) == ["g-pair", "g-pair-late"]


def test_a_dropped_stream_keeps_its_seats_and_is_not_running(rig: Rig) -> None:
    create(rig.store, "g-archived", Seat(bot="turner"), external(ALICE))
    finish(rig.store, "g-archived")
    create(rig.store, "g-live", external(ALICE), Seat(bot="turner"))
    rig.project()
    assert rig.store.drop("g-archived")

    index = refreshed(rig)

    assert rig.store.read("g-archived") == []
    assert index.seats_of(ALICE, "g-archived") == [1]
    assert index.seats_of(BOB, "g-archived") == []
    assert index.running(ALICE) == ["g-live"]


def test_challenges_wait_until_answered_closed_or_expired(rig: Rig) -> None:
    store, later = rig.store, NOW + timedelta(hours=1)
    challenge(store, "c-both", ALICE, BOB, expires=later)
    challenge(store, "c-alice", ALICE, expires=later)
    challenge(store, "c-expired", ALICE, expires=NOW)
    challenge(store, "c-cancelled-early", ALICE, expires=later)
    answer(store, "c-cancelled-early", ChallengeCancelled(by=""))
    rig.project()
    along = refreshed(rig)
    answer(store, "c-both", ChallengeAccepted(bot=ALICE))
    challenge(store, "c-late", ALICE, BOB, expires=later)
    challenge(store, "c-declined", ALICE, expires=later)
    answer(store, "c-declined", ChallengeDeclined(bot=ALICE, reason="busy"))

    for index in (refreshed(rig, along), refreshed(rig)):
        assert index.challenges_of(ALICE, NOW) == ["c-alice", "c-late"]
        assert index.challenges_of(BOB, NOW) == ["c-both", "c-late"]
        before = NOW - timedelta(seconds=1)
        assert index.challenges_of(ALICE, before) == ["c-alice", "c-expired", "c-late"]

    answer(store, "c-late", ChallengeDeclined(bot=BOB))
    rig.project()
    answer(store, "c-alice", ChallengeCancelled(by=""))
    for index in (refreshed(rig, along), refreshed(rig)):
        assert index.challenges_of(ALICE, NOW) == []
        assert index.challenges_of(BOB, NOW) == ["c-both"]


def test_a_stream_the_projection_holds_as_dead_letters_is_indexed_as_the_feed_says(
    rig: Rig,
) -> None:
    ruleset = {**msgspec.to_builtins(get_game("beggar").ruleset("classic")), "note": "a\x00b"}
    poisoned = GameCreated(game="beggar", ruleset=ruleset, seats=[external(ALICE), external(BOB)])
    rig.store.append("g-poisoned", "beggar", 0, [encode(poisoned)])  # PostgreSQL holds no NUL
    time.sleep(0.005)  # the checkpoint passes the dead letter: a later ms than its
    create(rig.store, "g-fine", external(ALICE), Seat(bot="turner"))
    rig.project()

    assert sorted(refreshed(rig).running(ALICE)) == ["g-fine", "g-poisoned"]
    finish(rig.store, "g-poisoned")  # held behind the dead letter
    rig.project()
    index = refreshed(rig)
    assert index.running(ALICE) == ["g-fine"]
    assert index.running(BOB) == []
    assert index.seats_of(BOB, "g-poisoned") == [1]
