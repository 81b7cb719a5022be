"""The GameSlots contract (the cap on running games per bot), in memory and in Redis."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from shared.app.admission import admit
from shared.app.bot_turns import play_bot_turns
from shared.app.games import create_game
from shared.messages.common import Seat
from shared.ports.game_slots import GameCapReached, GameSlots, InMemoryGameSlots
from shared.store.memory import InMemoryEventStore
from shared.store.redis_limits import RedisGameSlots
from tests.support.stores import CLUSTER, redis_backend

BOT = "alice@1"


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.integration), CLUSTER])
def slots(request: pytest.FixtureRequest) -> GameSlots:
    """Returns each implementation in turn, empty (Redis, standalone and
    the module's Redis Cluster: this test's own key prefix)."""
    if request.param == "memory":
        return InMemoryGameSlots()
    client, namespace = redis_backend(request)
    return RedisGameSlots(client, namespace)


def test_reservations_stop_at_the_cap_and_confirmed_ones_become_games(slots: GameSlots) -> None:
    assert slots.reserve(BOT, "r1", 2, 60_000)
    assert slots.reserve(BOT, "r2", 2, 60_000)
    assert not slots.reserve(BOT, "r3", 2, 60_000)
    assert slots.reserve("bob@1", "r3", 2, 60_000)
    slots.confirm(BOT, "r1", "g1")
    assert slots.games(BOT) == ["g1"]
    slots.cancel(BOT, "r2")
    assert slots.reserve(BOT, "r4", 2, 60_000)
    assert not slots.reserve(BOT, "r5", 2, 60_000)
    slots.release(BOT, ["g1"])
    assert slots.games(BOT) == []
    assert slots.reserve(BOT, "r5", 2, 60_000)


def test_an_unconfirmed_reservation_expires(slots: GameSlots) -> None:
    assert slots.reserve(BOT, "r1", 1, 200)
    assert not slots.reserve(BOT, "r2", 1, 200)
    time.sleep(0.3)
    assert slots.reserve(BOT, "r2", 1, 200)


def test_concurrent_reservations_never_pass_the_cap(slots: GameSlots) -> None:
    with ThreadPoolExecutor(8) as pool:
        granted = list(pool.map(lambda i: slots.reserve(BOT, f"r{i}", 5, 60_000), range(40)))
    assert sum(granted) == 5


def test_admission_frees_the_slots_of_finished_games_and_refuses_a_full_bot(
    slots: GameSlots,
) -> None:
    store = InMemoryEventStore()
    seats = [Seat(kind="bot", bot="turner")] * 2
    finished = create_game(store, "beggar", seats=seats, seed=1).game_id
    play_bot_turns(store, finished)
    running = create_game(store, "beggar", seats=seats, seed=2).game_id
    admit(slots, store, [("seats[0]", BOT)], cap=2).confirm(finished)
    admit(slots, store, [("seats[1]", BOT)], cap=2).confirm(running)
    admitted = admit(slots, store, [("seats[0]", BOT), ("seats[1]", BOT)], cap=2)
    assert sorted(slots.games(BOT)) == [running]
    with pytest.raises(GameCapReached) as refused:
        admit(slots, store, [("seats[0]", "bob@1"), ("seats[3]", BOT)], cap=2)
    assert refused.value.field == "seats[3]"
    assert slots.reserve("bob@1", "probe", 1, 60_000)
    admitted.cancel()
    assert slots.reserve(BOT, "probe", 2, 60_000)


def test_a_cap_of_zero_admits_everything_and_holds_nothing(slots: GameSlots) -> None:
    store = InMemoryEventStore()
    for _ in range(3):
        admit(slots, store, [("seats[0]", BOT)], cap=0).confirm("g")
    assert slots.games(BOT) == []
