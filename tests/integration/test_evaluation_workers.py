"""A hosted evaluation on a real Celery worker over Redis: the workers play its built-in bots'
games and, after each unit's games end, record the unit and start the next, until the SPRT
decides; its games are never rated."""

from __future__ import annotations

import subprocess
import time

import pytest
import redis
from celery import Celery

from services.workers.dispatch import BOT_TURNS
from shared.app.evaluations import create_evaluation, load_evaluation, start_pending, unit_games
from shared.app.loading import load
from shared.app.registry import register
from shared.model.evaluations import Contestant, EvaluationDefinition, EvaluationState
from shared.model.registry import BotSpec
from shared.model.unrated import seats_reason
from shared.store.redis_store import RedisEventStore
from tests.support import deals


def wait_until_finished(
    store: RedisEventStore, evaluation_id: str, seconds: float
) -> EvaluationState:
    """Waits for the evaluation to finish, failing after `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        state, _ = load_evaluation(store, evaluation_id)
        if state.finished is not None:
            return state
        time.sleep(0.1)
    pytest.fail(f"the evaluation did not finish within {seconds}s")


def test_an_evaluation_on_the_workers_reaches_its_verdict(
    worker: subprocess.Popen[bytes],
    celery_app: Celery,
    redis_client: redis.Redis,
    namespace: str,
) -> None:
    store = deals.attached(RedisEventStore(redis_client, namespace=namespace))
    for name, strategy in (("smart", "heuristic"), ("plain", "random")):
        spec = BotSpec(name=name, game="shithead", kind="builtin", strategy=strategy)
        register(store, spec, registered_at="2026-12-05T00:00:00Z")
    definition = EvaluationDefinition(
        game="shithead",
        candidate=Contestant(bot="smart", version="1"),
        baseline=Contestant(bot="plain", version="1"),
        elo1=200,
        seed="7",
        max_games=200,
    )
    evaluation_id = create_evaluation(store, definition, "e1")
    bot_turns = celery_app.tasks[BOT_TURNS]

    def dispatch(game_id: str) -> None:
        bot_turns.apply_async((game_id,), queue=f"{namespace}bots")

    start_pending(store, evaluation_id, dispatch)
    state = wait_until_finished(store, evaluation_id, 60)
    assert state.finished is not None
    assert state.finished.verdict == "H1"
    assert state.games == 2 * len(state.llrs)
    for unit in state.recorded:
        for game_id in unit_games(evaluation_id, state, unit):
            loaded = load(store, game_id)
            assert loaded.spec.is_over(loaded.state)
            reason = seats_reason("shithead", loaded.created.seats)
            assert reason is not None
            assert reason.code == "evaluation"
