"""The game cache behind `shared.app.loading.load`: a cached game folded on with the events its
stream gained is the game folded afresh, over the in-memory and the Redis store alike."""

from __future__ import annotations

import random

import pytest
import redis

from shared.app.games import act, create_game
from shared.app.loading import LoadedGame, _fold, cache_of, caught_up, current, load
from shared.catalog import game_names, get_game
from shared.errors import UnknownGame
from shared.messages.common import Clock, Seat
from shared.model.idempotency import client_key
from shared.store.memory import InMemoryEventStore
from shared.store.port import ConcurrencyConflict, EventStore
from shared.store.redis_store import RedisEventStore

DECISION_GAMES = [game for game in game_names() if get_game(game).has_decisions]
"""The games whose seats the tests move: those with decisions."""


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


@pytest.mark.parametrize("game", DECISION_GAMES)
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


@pytest.mark.parametrize("game", DECISION_GAMES)
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
        idempotency_key=client_key("host", "k"),
        loaded=loaded,
    )
    assert first.loaded is None  # the clock folds by the store's timestamps
    retry = act(
        store,
        game_id,
        seat=seat,
        action=action,
        expected_version=loaded.version,
        idempotency_key=client_key("host", "k"),
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


def _first_move(loaded: LoadedGame) -> tuple[int, object]:
    seat = loaded.spec.to_move(loaded.state)[0]
    return seat, loaded.spec.legal_actions(loaded.state, seat)[0]


def test_a_move_at_the_cached_version_is_decided_on_the_cached_game(store: EventStore) -> None:
    seats = [Seat(kind="external"), Seat(kind="external")]
    game_id = create_game(store, "autobus", seats=seats, seed=3).game_id
    known = load(store, game_id)
    assert current(store, game_id, known.version) is known  # no read of the stream
    seat, action = _first_move(known)
    moved = act(
        store,
        game_id,
        seat=seat,
        action=action,
        expected_version=known.version,
        loaded=current(store, game_id, known.version),
    )
    assert moved.loaded is not None
    same(moved.loaded, fresh(store, game_id))
    same(current(store, game_id, known.version), fresh(store, game_id))  # other: a load


def test_a_stale_cached_game_costs_a_conflict_and_appends_nothing(store: EventStore) -> None:
    seats = [Seat(kind="external"), Seat(kind="external")]
    game_id = create_game(store, "autobus", seats=seats, seed=4).game_id
    before = load(store, game_id)
    seat, action = _first_move(before)
    cache_of(store).forget(game_id)  # another process moves the game on
    act(store, game_id, seat=seat, action=action, expected_version=before.version)
    version = store.version(game_id)
    cache_of(store).forget(game_id)
    cache_of(store).put(before)  # this process still holds the older fold

    stale = current(store, game_id, before.version)
    assert stale is before
    later = fresh(store, game_id)
    again_seat, again = _first_move(later)
    with pytest.raises(ConcurrencyConflict):
        # A client as stale as the fold: its move is decided on it, and refused by the append.
        act(
            store,
            game_id,
            seat=seat,
            action=action,
            expected_version=before.version,
            loaded=stale,
        )
    assert store.version(game_id) == version
    up_to_date = current(store, game_id, version)  # a client ahead of the fold: a load
    same(up_to_date, later)
    act(
        store,
        game_id,
        seat=again_seat,
        action=again,
        expected_version=version,
        loaded=up_to_date,
    )
    assert store.version(game_id) > version


def test_a_timed_game_is_always_loaded(store: EventStore) -> None:
    seats = [Seat(kind="external"), Seat(kind="external")]
    clock = Clock(move_seconds=600, bank_seconds=60)
    game_id = create_game(store, "autobus", seats=seats, seed=5, clock=clock).game_id
    before = load(store, game_id)
    assert before.clock is not None
    seat, action = _first_move(before)
    act(store, game_id, seat=seat, action=action, expected_version=before.version)
    cache_of(store).forget(game_id)
    cache_of(store).put(before)  # a stale fold at the version asked for: read past it
    loaded = current(store, game_id, before.version)
    assert loaded.version > before.version
    same(loaded, fresh(store, game_id))


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
