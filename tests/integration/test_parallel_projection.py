"""Projectors that share the feed's partitions: each projects its own side by side, ratings
are folded by the ordered step in feed order, and the views equal a rebuild, ratings
included; a projector that dies midway and comes back changes nothing."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import psycopg
import redis

from services.ops.migrate import migrate
from services.projection.projector import Projector
from services.projection.queries import checkpoint
from shared.app.bot_turns import play_bot_turns
from shared.app.games import create_game
from shared.messages.common import Seat
from shared.store.redis_store import RedisEventStore
from tests.support.projection import assert_views_equal_a_rebuild, views_snapshot

BOTS = ("ann", "ben", "cat", "dan")
GAMES = 40


def rated_games(store: RedisEventStore, count: int, first: int = 0) -> list[str]:
    """Plays `count` rated two-seat Hospodský autobus games of the bots in turn."""
    game_ids = []
    for n in range(first, first + count):
        names = (BOTS[n % 4], BOTS[(n + 1 + n // 4) % 4])
        if names[0] == names[1]:
            names = (names[0], BOTS[(BOTS.index(names[0]) + 1) % 4])
        seats = [Seat(kind="bot", bot="random", name=name, version="1") for name in names]
        game_id = create_game(store, "autobus", seats=seats, seed=n).game_id
        play_bot_turns(store, game_id)
        game_ids.append(game_id)
    return game_ids


def rated(database_url: str) -> int:
    """Returns how many games the ratings have folded (two history rows a game)."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM rating_history").fetchone()
    return int(row[0]) // 2 if row else 0


def wait_for(done: Callable[[], bool], what: str, seconds: float = 120) -> None:
    """Waits until `done()` holds; raises naming `what` when it does not within `seconds`."""
    deadline = time.monotonic() + seconds
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@contextmanager
def running(projector: Projector) -> Iterator[threading.Event]:
    """Runs `projector` in a thread until the block ends (or its event is set)."""
    stop = threading.Event()
    thread = threading.Thread(target=projector.run_forever, args=(stop,), kwargs={"block_ms": 50})
    thread.start()
    try:
        yield stop
    finally:
        stop.set()
        thread.join(timeout=30)


def projector_of(database_url: str, store: RedisEventStore, index: int, of: int = 2) -> Projector:
    """Returns projector `index` of `of`, owning the partitions whose number modulo `of` it is."""
    owned = [p for p in range(store.partitions) if p % of == index]
    consumer = store.consumer("projection", f"projector-{index}", partitions=owned)
    return Projector(database_url, consumer, partitions=store.partitions)


def test_two_projectors_share_the_partitions_and_the_views_equal_a_rebuild(
    redis_client: redis.Redis, namespace: str, database_url: str
) -> None:
    migrate(database_url)
    store = RedisEventStore(redis_client, namespace)
    first, second = projector_of(database_url, store, 0), projector_of(database_url, store, 1)

    with running(first), running(second):
        game_ids = rated_games(store, GAMES)
        wait_for(lambda: rated(database_url) == GAMES, "every game to be rated")

    with psycopg.connect(database_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT name FROM projection_checkpoints WHERE name LIKE 'main:p%'"
        ).fetchall()
    partitions_of_games = {store.partition_of(game_id) for game_id in game_ids}
    assert {f"main:p{p}" for p in partitions_of_games} <= {str(row[0]) for row in rows}
    assert {p % 2 for p in partitions_of_games} == {0, 1}  # both projectors had work
    assert assert_views_equal_a_rebuild(database_url) == GAMES


def test_a_projector_that_dies_midway_and_returns_changes_nothing(
    redis_client: redis.Redis, namespace: str, database_url: str
) -> None:
    migrate(database_url)
    store = RedisEventStore(redis_client, namespace)
    rated_games(store, GAMES // 2)
    survivor = projector_of(database_url, store, 0)
    doomed = projector_of(database_url, store, 1)
    doomed.run_once(count=7)  # a few entries projected and acked, then it is gone
    doomed.consumer.read(count=50)  # and some delivered that it never acked
    doomed.close()

    with running(survivor):
        rated_games(store, GAMES // 2, first=GAMES // 2)
        time.sleep(0.2)
        assert rated(database_url) < GAMES  # the ordered step waits for the odd partitions
        returned = projector_of(database_url, store, 1)
        with running(returned):
            wait_for(lambda: rated(database_url) == GAMES, "every game to be rated")
    live = views_snapshot(database_url)

    assert checkpoint(database_url) is not None
    assert assert_views_equal_a_rebuild(database_url) == GAMES
    assert views_snapshot(database_url) == live
