"""The game cache behind `shared.handlers.load`: a cached game folded on with the events its
stream gained is the game folded afresh, over the in-memory and the Redis store alike."""

from __future__ import annotations

import random

import pytest
import redis

from shared.handlers import (
    LoadedGame,
    UnknownGame,
    _fold,
    act,
    cache_of,
    caught_up,
    create_game,
    load,
)
from shared.messages.common import Clock, Seat
from shared.store.memory import InMemoryEventStore
from shared.store.port import EventStore
from shared.store.redis_store import RedisEventStore

pytestmark = pytest.mark.contract


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.integration)])
def store(request: pytest.FixtureRequest) -> EventStore:
    """Returns each store in turn (the Redis one under this test's namespace)."""
    if request.param == "memory":
        return InMemoryEventStore()
    client: redis.Redis = request.getfixturevalue("redis_client")
    namespace: str = request.getfixturevalue("namespace")
    return RedisEventStore(client, namespace)


def fresh(store: EventStore, game_id: str) -> LoadedGame:
    """Returns the game folded from its whole stream, without the cache."""
    return _fold(game_id, store.read(game_id))


def same(cached: LoadedGame, folded: LoadedGame) -> None:
    """Asserts two loads of one game agree on everything a caller reads."""
    assert (cached.version, cached.created) == (folded.version, folded.created)
    assert cached.state == folded.state
    assert cached.clock == folded.clock


@pytest.mark.parametrize("game", ["shithead", "autobus"])
def test_a_cached_game_folded_on_equals_the_game_folded_afresh_at_every_move(
    store: EventStore, game: str
) -> None:
    seats = [Seat(kind="external"), Seat(kind="external")]
    clock = Clock(move_seconds=600, bank_seconds=60)
    game_id = create_game(store, game, seats=seats, seed=4, clock=clock).game_id
    rng = random.Random(4)
    for _ in range(60):
        loaded = load(store, game_id)
        same(loaded, fresh(store, game_id))
        if loaded.spec.is_over(loaded.state):
            break
        seat = loaded.spec.to_move(loaded.state)[0]
        action = rng.choice(loaded.spec.legal_actions(loaded.state, seat))
        act(store, game_id, seat=seat, action=action, expected_version=loaded.version)
    assert cache_of(store).get(game_id) is not None


@pytest.mark.parametrize("game", ["shithead", "autobus"])
def test_an_untimed_game_folded_on_by_its_own_action_equals_the_game_folded_afresh(
    store: EventStore, game: str
) -> None:
    seats = [Seat(kind="external"), Seat(kind="external")]
    game_id = create_game(store, game, seats=seats, seed=7).game_id
    rng = random.Random(7)
    loaded = load(store, game_id)
    folded_on = 0
    for _ in range(80):
        if loaded.spec.is_over(loaded.state):
            break
        seat = loaded.spec.to_move(loaded.state)[0]
        action = rng.choice(loaded.spec.legal_actions(loaded.state, seat))
        outcome = act(
            store, game_id, seat=seat, action=action, expected_version=loaded.version, loaded=loaded
        )
        assert outcome.loaded is not None  # untimed, not a replay: folded on here
        same(outcome.loaded, fresh(store, game_id))
        assert cache_of(store).get(game_id) == outcome.loaded
        loaded, folded_on = outcome.loaded, folded_on + 1
    assert folded_on > 10


def test_a_timed_game_or_a_replay_is_not_folded_on_but_loaded(store: EventStore) -> None:
    seats = [Seat(kind="external"), Seat(kind="external")]
    clock = Clock(move_seconds=600, bank_seconds=60)
    game_id = create_game(store, "autobus", seats=seats, seed=3, clock=clock).game_id
    loaded = load(store, game_id)
    seat = loaded.spec.to_move(loaded.state)[0]
    action = loaded.spec.legal_actions(loaded.state, seat)[0]
    first = act(
        store,
        game_id,
        seat=seat,
        action=action,
        expected_version=loaded.version,
        idempotency_key="k",
        loaded=loaded,
    )
    assert first.loaded is None  # the clock folds by the store's timestamps
    retry = act(
        store,
        game_id,
        seat=seat,
        action=action,
        expected_version=loaded.version,
        idempotency_key="k",
        loaded=load(store, game_id),
    )
    assert retry.replayed
    assert retry.loaded is None
    assert (retry.first_version, retry.version) == (first.first_version, first.version)


def test_a_waiting_stream_catches_up_with_what_it_read_or_loads_when_it_missed_some(
    store: EventStore,
) -> None:
    seats = [Seat(kind="external"), Seat(kind="external")]
    game_id = create_game(store, "shithead", seats=seats, seed=5).game_id
    known = load(store, game_id)
    rng = random.Random(5)
    current = known
    for _ in range(3):
        seat = current.spec.to_move(current.state)[0]
        action = rng.choice(current.spec.legal_actions(current.state, seat))
        act(store, game_id, seat=seat, action=action, expected_version=current.version)
        current = load(store, game_id)
    gained = store.read(game_id, known.version)
    same(caught_up(store, known, gained), fresh(store, game_id))
    same(caught_up(store, known, gained[1:]), fresh(store, game_id))  # a gap: loaded afresh
    same(caught_up(store, known, []), fresh(store, game_id))


def test_a_game_appended_by_another_process_is_seen_by_the_cache(store: EventStore) -> None:
    seats = [Seat(kind="external"), Seat(kind="external")]
    game_id = create_game(store, "autobus", seats=seats, seed=2).game_id
    before = load(store, game_id)
    cache_of(store).forget(game_id)  # as if another process: it folds and appends
    seat = before.spec.to_move(before.state)[0]
    action = before.spec.legal_actions(before.state, seat)[0]
    act(store, game_id, seat=seat, action=action, expected_version=before.version)
    cache_of(store).put(before)  # this process still holds the older fold
    after = load(store, game_id)
    assert after.version > before.version
    same(after, fresh(store, game_id))


def test_a_dropped_stream_is_not_served_from_the_cache(store: EventStore) -> None:
    seats = [Seat(kind="bot", bot="turner")] * 2
    game_id = create_game(store, "beggar", seats=seats, seed=1).game_id
    load(store, game_id)
    assert store.drop(game_id)
    with pytest.raises(UnknownGame):
        load(store, game_id)
    assert cache_of(store).get(game_id) is None


def test_each_store_object_has_its_own_cache() -> None:
    first, second = InMemoryEventStore(), InMemoryEventStore()
    seats = [Seat(kind="bot", bot="turner")] * 2
    game_id = create_game(first, "beggar", seats=seats, seed=1, idempotency_key="k").game_id
    load(first, game_id)
    assert cache_of(second).get(game_id) is None
    assert cache_of(first) is cache_of(first)
