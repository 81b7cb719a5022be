"""Stream retention and the archive against real Redis and PostgreSQL: finished games'
streams leave Redis only once archived and old enough, and still read and replay from the
archive; every archived finished game folds to its result."""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta
from typing import Any

import psycopg
import pytest
import redis
from litestar import Litestar
from litestar.testing import TestClient

from services.game.app import create_app
from services.ops.migrate import migrate
from services.projection.archive import PostgresEventArchive
from services.projection.projector import Projector
from services.projection.queries import get_game_row, list_games
from services.projection.retention import Retention
from shared.app.bot_turns import play_bot_turns
from shared.app.games import create_game
from shared.app.loading import loaded_from
from shared.app.runtime import InProcessDispatcher
from shared.catalog import game_names, get_game
from shared.messages.common import Seat
from shared.store.redis_store import RedisEventStore

HOUR = 3600


@pytest.fixture
def db(database_url: str) -> str:
    """Returns the URL of this test's database, migrated."""
    migrate(database_url)
    return database_url


@pytest.fixture
def store(redis_client: redis.Redis, namespace: str) -> RedisEventStore:
    """Returns an event store under this test's own Redis namespace."""
    return RedisEventStore(redis_client, namespace)


def projector(db: str, redis_client: redis.Redis, namespace: str, **kwargs: Any) -> Projector:
    """Returns a projector of this test's feed into `db`."""
    consumer = RedisEventStore(redis_client, namespace).consumer("projection", "p1")
    return Projector(db, consumer, **kwargs)


def drain(runner: Projector) -> None:
    """Runs batches until one projects nothing new."""
    while runner.run_once(200):
        pass


def finished(store: RedisEventStore, game: str, players: int, seed: int) -> str:
    """Creates a game of built-in bots and plays it to its end; returns its id."""
    game_id = create_game(store, game, players=players, seed=seed).game_id
    play_bot_turns(store, game_id)
    return game_id


def running(store: RedisEventStore) -> str:
    """Creates a Shithead game that waits for an external seat; returns its id."""
    seats = [Seat(kind="external"), Seat(kind="bot", bot="random")]
    game_id = create_game(store, "shithead", seats=seats, seed=4).game_id
    play_bot_turns(store, game_id)
    return game_id


def reads(client: TestClient[Litestar], game_id: str) -> dict[str, Any]:
    """Returns the bodies of the game, a seat's view, some events and two replays."""
    paths: list[tuple[str, dict[str, Any]]] = [
        ("", {}),
        ("/view", {"seat": 0}),
        ("/events", {"after": 2, "limit": 10}),
        ("/replay", {}),
        ("/replay", {"version": 12, "seat": 1}),
    ]
    bodies = {}
    for path, params in paths:
        response = client.get(f"/v1/games/{game_id}{path}", params=params)
        assert response.status_code == 200, response.text
        bodies[f"{path}?{sorted(params.items())}"] = response.json()
    return bodies


def test_a_finished_stream_is_dropped_only_once_archived_and_old_and_then_reads_from_the_archive(
    db: str, store: RedisEventStore, redis_client: redis.Redis, namespace: str
) -> None:
    game_id = finished(store, "shithead", 2, 7)
    playing = running(store)
    archive = PostgresEventArchive(db)
    retention = Retention(db, store, archive, HOUR)
    far = datetime.now().astimezone() + timedelta(days=3650)
    app = create_app(store, InProcessDispatcher(store), archive=archive)
    with TestClient(app) as client:
        before = reads(client, game_id)

        assert retention.sweep(far) == []
        with projector(db, redis_client, namespace) as runner:
            drain(runner)
        row = get_game_row(db, game_id)
        assert row is not None
        ended: datetime = row["finished_at"]
        with psycopg.connect(db, autocommit=True) as conn:
            lost = conn.execute(
                "DELETE FROM events WHERE game_id = %s AND version = 3 RETURNING *", (game_id,)
            ).fetchone()
        assert retention.sweep(far) == []
        assert store.read(game_id)
        with psycopg.connect(db, autocommit=True) as conn:
            conn.execute("INSERT INTO events VALUES (%s, %s, %s, %s, %s, %s, %s, %s)", lost)

        assert retention.sweep(ended + timedelta(seconds=HOUR - 1)) == []
        assert retention.sweep(ended + timedelta(seconds=HOUR + 1)) == [game_id]
        assert store.read(game_id) == []
        assert store.version(game_id) == row["version"]
        assert retention.sweep(far) == []
        assert store.read(playing)

        after = reads(client, game_id)
    assert after == before
    assert after["?[]"]["status"] != "playing"


def test_the_projection_service_sweeps_after_its_batches_and_never_drops_a_running_game(
    db: str, store: RedisEventStore, redis_client: redis.Redis, namespace: str
) -> None:
    games = [finished(store, "beggar", 3, 2), finished(store, "autobus", 2, 3)]
    playing = running(store)
    retention = Retention(db, store, PostgresEventArchive(db), 0, every_s=0)
    stop = threading.Event()
    runner = projector(db, redis_client, namespace, retention=retention)
    thread = threading.Thread(target=runner.run_forever, args=(stop,), kwargs={"block_ms": 20})
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while any(store.read(game_id) for game_id in games) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        stop.set()
        thread.join(timeout=10)

    assert [store.read(game_id) for game_id in games] == [[], []]
    assert store.read(playing)
    row = get_game_row(db, playing)
    assert row is not None
    assert row["finished_at"] is None


def test_every_archived_finished_game_folds_to_its_result(
    db: str, store: RedisEventStore, redis_client: redis.Redis, namespace: str
) -> None:
    plays = [
        (game, players)
        for game in game_names()
        for players in sorted({get_game(game).min_players, min(get_game(game).max_players, 4)})
    ]
    game_ids = [finished(store, game, players, seed) for seed, (game, players) in enumerate(plays)]
    with projector(db, redis_client, namespace) as runner:
        drain(runner)
    archive = PostgresEventArchive(db)

    rows = [row for row in list_games(db, limit=100) if row["result"] is not None]

    assert sorted(row["game_id"] for row in rows) == sorted(game_ids)
    for row in rows:
        log = archive.read(row["game_id"])
        assert archive.holds(row["game_id"], len(log))
        loaded = loaded_from(row["game_id"], log)
        result = loaded.spec.result(loaded.state)
        assert result is not None
        assert row["result"]["places"] == result.places
        assert row["result"]["status"] == result.status
        assert log == store.read(row["game_id"])


def test_a_fork_is_projected_with_its_original_and_never_rated(
    db: str, store: RedisEventStore, redis_client: redis.Redis, namespace: str
) -> None:
    seats = [Seat(kind="bot", bot="random", name=name, version="1") for name in ("ann", "ben")]
    game_id = create_game(store, "shithead", seats=seats, seed=4).game_id
    play_bot_turns(store, game_id)
    with TestClient(create_app(store, InProcessDispatcher(store))) as client:
        forked = client.post(f"/v1/games/{game_id}/fork", params={"version": 30})
    assert forked.status_code == 201, forked.text
    fork_id = forked.json()["game_id"]
    with projector(db, redis_client, namespace) as runner:
        drain(runner)

    with psycopg.connect(db) as conn:
        rows: dict[str, str | None] = dict(
            conn.execute("SELECT game_id, forked_from FROM games").fetchall()
        )
        ratings = conn.execute("SELECT key, games FROM ratings ORDER BY key").fetchall()
        history = {row[0] for row in conn.execute("SELECT game_id FROM rating_history")}
    assert rows == {game_id: None, fork_id: game_id}
    assert ratings == [("ann@1", 1), ("ben@1", 1)]
    assert history == {game_id}
