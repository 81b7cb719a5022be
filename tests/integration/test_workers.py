"""Bot turns on a real Celery worker, with the real Redis as broker and event store."""

from __future__ import annotations

import subprocess
import time

import redis
from celery import Celery

from services.workers.dispatch import BOT_TURNS, CeleryDispatcher
from shared.app.bot_turns import play_bot_turns
from shared.app.games import create_game
from shared.app.loading import load
from shared.catalog import get_game
from shared.messages.common import GameFinished
from shared.store.redis_store import RedisEventStore


def wait_until_over(store: RedisEventStore, game_ids: list[str], seconds: float = 60) -> None:
    """Waits until every game is over, failing after `seconds`."""
    deadline = time.monotonic() + seconds
    pending = set(game_ids)
    while pending and time.monotonic() < deadline:
        for game_id in list(pending):
            loaded = load(store, game_id)
            if loaded.spec.is_over(loaded.state):
                pending.discard(game_id)
        time.sleep(0.1)
    assert not pending, f"games not finished in {seconds}s: {sorted(pending)}"


def test_the_bot_turn_task_acks_late_so_a_killed_worker_runs_it_again(celery_app: Celery) -> None:
    assert celery_app.tasks[BOT_TURNS].acks_late is True
    assert celery_app.conf.task_reject_on_worker_lost is True
    assert celery_app.conf.worker_prefetch_multiplier == 1


def test_a_worker_plays_dispatched_games_to_their_end_and_duplicates_append_nothing_twice(
    worker: subprocess.Popen[bytes], celery_app: Celery, redis_client: redis.Redis, namespace: str
) -> None:
    store = RedisEventStore(redis_client, namespace=namespace)
    dispatcher = CeleryDispatcher(celery_app, f"{namespace}bots")
    game_ids = [create_game(store, "beggar", players=4, seed=seed).game_id for seed in range(6)]
    for game_id in game_ids:
        dispatcher.dispatch(game_id)
        dispatcher.dispatch(game_id)
    wait_until_over(store, game_ids)
    spec = get_game("beggar")
    for seed, game_id in enumerate(game_ids):
        recorded = store.read(game_id)
        assert [e.version for e in recorded] == list(range(1, len(recorded) + 1))
        events = spec.codec.decode_all(recorded)
        assert sum(isinstance(e, GameFinished) for e in events) == 1
        alone = spec.fold([spec.deal(spec.ruleset(None), 4, seed)])
        while not spec.is_over(alone):
            (seat,) = spec.to_move(alone)
            for event in spec.decide(alone, seat, spec.legal_actions(alone, seat)[0]):
                alone = spec.evolve(alone, event)
        assert spec.fold(events) == alone


def test_a_bot_run_repeated_on_redis_appends_nothing(
    redis_client: redis.Redis, namespace: str
) -> None:
    store = RedisEventStore(redis_client, namespace=namespace)
    game_id = create_game(store, "beggar", players=2, seed=8).game_id
    assert play_bot_turns(store, game_id) > 0
    version = store.version(game_id)
    assert play_bot_turns(store, game_id) == 0
    assert store.version(game_id) == version
