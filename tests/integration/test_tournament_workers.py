"""A tournament on a real Celery worker: the same games and standings as in-process."""

from __future__ import annotations

import subprocess
import time

import msgspec
import pytest
import redis
from celery import Celery

from services.workers.dispatch import START_TOURNAMENT
from shared.app.tournaments import load_tournament, run_in_process
from shared.model.tournaments.model import Entrant, TournamentDefinition, TournamentState
from shared.model.tournaments.standings import standings
from shared.store.memory import InMemoryEventStore
from shared.store.redis_store import RedisEventStore
from tests.support import deals


def wait_until_finished(
    store: RedisEventStore, tournament_id: str, seconds: float
) -> TournamentState:
    """Waits for the tournament to finish, failing after `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            state, _ = load_tournament(store, tournament_id)
        except LookupError:
            state = None
        if state is not None and state.status == "finished":
            return state
        time.sleep(0.2)
    pytest.fail(f"the tournament did not finish within {seconds}s")


@pytest.mark.parametrize("fmt", ["round_robin", "swiss"])
def test_a_tournament_on_the_workers_gives_the_in_process_games_and_standings(
    worker: subprocess.Popen[bytes],
    celery_app: Celery,
    redis_client: redis.Redis,
    namespace: str,
    fmt: str,
) -> None:
    definition = TournamentDefinition(
        game="autobus",
        entrants=[
            Entrant(bot="heuristic"),
            Entrant(bot="random", name="r1"),
            Entrant(bot="random", name="r2"),
        ],
        table_size=2,
        format=fmt,  # type: ignore[arg-type]
        games_per_table=2,
        rounds=2,
        seed="11",
    )
    store = RedisEventStore(redis_client, namespace=namespace)
    start_tournament = celery_app.tasks[START_TOURNAMENT]
    start_tournament.apply_async((msgspec.to_builtins(definition), "t1"), queue=f"{namespace}bots")
    on_workers = wait_until_finished(store, "t1", 120)
    same_deployment = deals.attached(InMemoryEventStore())  # the workers' deal secret
    in_process = run_in_process(same_deployment, definition, "t1")
    by_key = {r.key: (r.places, r.status) for r in in_process.records}
    assert {r.key: (r.places, r.status) for r in on_workers.records} == by_key
    assert standings(on_workers) == standings(in_process)
