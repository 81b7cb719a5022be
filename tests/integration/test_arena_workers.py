"""An arena on a real Celery worker (four threads) over Redis: entrants are paired again as
their games end, never while one of their games is in progress, and a cancelled arena pairs
nobody more. (Its end is the unit tests', on an injected clock: an arena lasts 60 s at least.)
"""

from __future__ import annotations

import subprocess
import time

import msgspec
import pytest
import redis
from celery import Celery

from services.workers.dispatch import START_TOURNAMENT
from shared.app.tournaments import cancel_tournament, load_tournament
from shared.model.tournaments.model import (
    CODEC,
    Entrant,
    GameRecorded,
    RoundScheduled,
    TournamentDefinition,
    TournamentState,
    stream_id,
)
from shared.store.redis_store import RedisEventStore


def wait_for(store: RedisEventStore, tournament_id: str, records: int) -> TournamentState:
    """Waits until the tournament has recorded `records` games, failing after 90 s."""
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            state, _ = load_tournament(store, tournament_id)
        except LookupError:
            state = None
        if state is not None and len(state.records) >= records:
            return state
        time.sleep(0.2)
    pytest.fail(f"the arena did not record {records} games within 90 s")


def test_an_arena_on_the_workers_pairs_entrants_again_as_their_games_end(
    worker: subprocess.Popen[bytes],
    celery_app: Celery,
    redis_client: redis.Redis,
    namespace: str,
) -> None:
    definition = TournamentDefinition(
        game="autobus",
        entrants=[Entrant(bot=bot, version=str(i)) for i, bot in enumerate(["random"] * 5)],
        table_size=2,
        format="arena",
        duration_seconds=120,
        seed="workers",
    )
    store = RedisEventStore(redis_client, namespace=namespace)
    start = celery_app.tasks[START_TOURNAMENT]
    start.apply_async((msgspec.to_builtins(definition), "a1"), queue=f"{namespace}bots")
    wait_for(store, "a1", 6)
    cancel_tournament(store, "a1", "enough")
    events = CODEC.decode_all(store.read(stream_id("a1")))
    tables = {}
    busy: set[int] = set()
    pairings = 0
    for event in events:
        if isinstance(event, RoundScheduled):
            pairings += 1
            for game in event.games:
                assert not busy & set(game.table), (event.round, game.table, busy)
                busy |= set(game.table)
                tables[game.key] = game.table
        elif isinstance(event, GameRecorded):
            busy -= set(tables[event.key])
    assert pairings >= 3
    time.sleep(1)
    after = CODEC.decode_all(store.read(stream_id("a1")))
    assert not any(isinstance(e, RoundScheduled) for e in after[len(events) :])
