"""Resignations and aborts through the real stack's projection: a resignation is rated like any
loss, an aborted game is not rated, shows as aborted, and no longer runs for its bots."""

from __future__ import annotations

import pytest
import redis

from services.ops.migrate import migrate
from services.projection.bot_index import ProjectedBotIndex
from services.projection.projector import Projector
from services.projection.queries import get_game_row
from services.projection.views import PostgresTournamentViews
from shared.app.games import abort_game, act, create_game
from shared.app.registry import register
from shared.messages.common import Seat
from shared.model.registry import BotSpec
from shared.model.tournaments.standings import update_ratings
from shared.store.port import FeedConsumer
from shared.store.redis_store import RedisEventStore

ALICE, BOB = "alice@1", "bob@1"


def project(database_url: str, consumer: FeedConsumer) -> None:
    """Projects every feed entry `consumer` has not read yet (ratings included)."""
    with Projector(database_url, consumer) as projector:
        while projector.run_once(count=100):
            pass


def bound(name: str) -> Seat:
    """Returns a seat bound to the registered external bot `name@1`."""
    return Seat(kind="external", name=name, version="1")


def test_a_resignation_is_rated_as_a_loss_and_an_abort_is_not_rated(
    redis_client: redis.Redis, namespace: str, database_url: str
) -> None:
    migrate(database_url)
    store = RedisEventStore(redis_client, namespace)
    consumer = store.consumer("projection", "p1")
    for name in ("alice", "bob"):
        register(store, BotSpec(name=name, game="shithead", kind="external"))
    seats = [bound("alice"), bound("bob")]
    resigned = create_game(store, "shithead", seats=seats, seed=1).game_id
    act(
        store,
        resigned,
        seat=0,
        action={"type": "Resign"},
        expected_version=store.version(resigned),
    )
    aborted = create_game(store, "shithead", seats=seats, seed=2).game_id
    running = create_game(store, "shithead", seats=seats, seed=3).game_id
    project(database_url, consumer)
    index = ProjectedBotIndex(store, database_url)
    index.refresh()
    assert sorted(index.running(ALICE)) == sorted([aborted, running])

    abort_game(store, aborted, "host")
    project(database_url, consumer)

    resigned_row = get_game_row(database_url, resigned)
    assert resigned_row is not None
    assert (resigned_row["status"], resigned_row["result"]["places"]) == ("finished", [2, 1])
    aborted_row = get_game_row(database_url, aborted)
    assert aborted_row is not None
    assert aborted_row["status"] == "aborted"
    assert aborted_row["result"]["places"] == []
    assert aborted_row["finished_at"] is not None

    views = PostgresTournamentViews(database_url)
    board = {entry.key: entry for entry in views.leaderboard("shithead")}
    expected = update_ratings({}, [(ALICE, 2), (BOB, 1)])
    assert {key: entry.games for key, entry in board.items()} == {ALICE: 1, BOB: 1}
    for key in (ALICE, BOB):
        assert board[key].mu == pytest.approx(expected[key].mu)
        assert board[key].sigma == pytest.approx(expected[key].sigma)
    assert board[BOB].mu > board[ALICE].mu
    assert [point.game_id for point in views.rating_history("shithead", ALICE)] == [resigned]
    assert views.standalone_games(100) == [running]

    fresh = ProjectedBotIndex(store, database_url)
    fresh.refresh()
    assert fresh.running(ALICE) == [running]
    index.refresh()
    assert index.running(ALICE) == [running]
