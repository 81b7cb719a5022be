"""The reconciliation of games of no tournament over the real stack: a game in Redis whose bot
turn was never sent (as if its task were lost with a killed worker) is found through the
PostgreSQL projection and sent on; a tournament's game is left to the tournament's own; an
untimed game that waited the stale time for a client is aborted and frees its bots' slots."""

from __future__ import annotations

import pytest
import redis

from services.bootstrap.stores import build_views
from services.ops.migrate import migrate
from services.projection.projector import Projector
from services.settings import WorkerSettings, load_settings
from shared.app.admission import admit
from shared.app.bot_turns import next_bot_seat, play_bot_turns
from shared.app.deadlines import now_ms
from shared.app.games import create_game
from shared.app.loading import load
from shared.app.registry import register
from shared.app.tournaments import (
    abort_stale_games,
    create_tournament,
    load_tournament,
    reconcile_games,
    start_game,
)
from shared.messages.common import Clock, Seat
from shared.model.registry import BotSpec
from shared.model.tournaments.model import Entrant, TournamentDefinition, pending
from shared.ports.game_slots import GameCapReached, InMemoryGameSlots
from shared.ports.views.port import TournamentViews
from shared.store.port import FeedConsumer
from shared.store.redis_store import RedisEventStore

STALL_MS = 5_000
LIMIT = 1000
"""As many games as the workers' reconciliation looks at (`RECONCILE_LIMIT`)."""
TOURNAMENT = TournamentDefinition(
    game="autobus",
    entrants=[Entrant(bot="heuristic", version="1"), Entrant(bot="random", version="1")],
    table_size=2,
)
"""One game of two built-in bots."""


def project(database_url: str, consumer: FeedConsumer) -> None:
    """Projects every feed entry `consumer` has not read yet into the database."""
    with Projector(database_url, consumer) as projector:
        while projector.run_once(count=100):
            pass


def worker_views(namespace: str, database_url: str, store: RedisEventStore) -> TournamentViews:
    """Returns the views a worker of this stack reads: wired from its settings."""
    environ = {
        "CARDARENA_STORE": "redis",
        "CARDARENA_NAMESPACE": namespace,
        "DATABASE_URL": database_url,
    }
    return build_views(load_settings(environ, WorkerSettings), store)


def test_a_standalone_game_whose_bot_turn_was_lost_is_found_in_the_views_and_sent_on(
    redis_client: redis.Redis, namespace: str, database_url: str
) -> None:
    migrate(database_url)
    store = RedisEventStore(redis_client, namespace)
    consumer = store.consumer("projection", "p1")
    create_tournament(store, TOURNAMENT, "t")
    state, _ = load_tournament(store, "t")
    in_tournament = start_game(store, "t", state, pending(state)[0])
    seats = [Seat(bot="heuristic"), Seat(kind="external")]
    lost = create_game(store, "autobus", seats=seats, seed=1).game_id
    assert next_bot_seat(load(store, lost)) == 0, "the bot moves first; its turn is never sent"
    project(database_url, consumer)
    views = worker_views(namespace, database_url, store)

    standalone = views.standalone_games(LIMIT)
    assert standalone == [lost], "a tournament's game is not standalone"
    assert in_tournament not in standalone
    sent: list[str] = []
    assert reconcile_games(store, standalone, STALL_MS, now_ms(), sent.append) == 0, "moving"
    assert reconcile_games(store, standalone, STALL_MS, now_ms() + STALL_MS, sent.append) == 1
    assert sent == [lost]

    assert play_bot_turns(store, lost) > 0, "the task sent again plays the bot's moves"
    assert next_bot_seat(load(store, lost)) is None
    project(database_url, consumer)
    assert views.standalone_games(LIMIT) == [lost], "it runs on, waiting for its host"
    later = now_ms() + 10 * STALL_MS
    assert reconcile_games(store, [lost], STALL_MS, later, sent.append) == 0, "not the platform's"
    assert sent == [lost]


def test_an_untimed_game_nobody_moved_in_the_stale_time_is_aborted_and_frees_its_bots(
    redis_client: redis.Redis, namespace: str, database_url: str
) -> None:
    migrate(database_url)
    store = RedisEventStore(redis_client, namespace)
    consumer = store.consumer("projection", "p1")
    register(store, BotSpec(name="alice", game="autobus", kind="external"))
    alice = Seat(kind="external", name="alice", version="1")
    slots, cap = InMemoryGameSlots(), 1
    admission = admit(slots, store, [("seats[0]", "alice@1")], cap)
    stale = create_game(store, "autobus", seats=[alice, Seat(kind="external")], seed=1).game_id
    admission.confirm(stale)
    clock = Clock(move_seconds=5)
    timed = create_game(store, "autobus", seats=[Seat(kind="external")] * 2, seed=2, clock=clock)
    bots_turn = create_game(store, "autobus", seats=[Seat(bot="heuristic")] * 2, seed=3).game_id
    with pytest.raises(GameCapReached):
        admit(slots, store, [("seats[0]", "alice@1")], cap)
    project(database_url, consumer)
    standalone = worker_views(namespace, database_url, store).standalone_games(LIMIT)
    assert sorted(standalone) == sorted([stale, timed.game_id, bots_turn])

    assert abort_stale_games(store, standalone, STALL_MS, now_ms()) == [], "moved just now"
    assert abort_stale_games(store, standalone, 0, now_ms() + 10 * STALL_MS) == [], "0: never"
    later = now_ms() + STALL_MS
    assert abort_stale_games(store, standalone, STALL_MS, later) == [stale], (
        "a timed game forfeits its silent seats; a bot's turn is reconcile_games' to play on"
    )
    assert abort_stale_games(store, standalone, STALL_MS, later) == [], "aborted once"

    loaded = load(store, stale)
    assert loaded.aborted
    assert loaded.spec.result(loaded.state).reason == "stale"  # type: ignore[union-attr]
    admit(slots, store, [("seats[0]", "alice@1")], cap).cancel()
    project(database_url, consumer)
    assert stale not in worker_views(namespace, database_url, store).standalone_games(LIMIT)
