"""The views' contract for hosted evaluations, in memory and on PostgreSQL (the projection):
an evaluation's games, even between two host bots, are listed as `evaluation` and never
rated, and the projection takes the evaluation's own stream in its stride."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import redis

from services.ops.migrate import migrate
from services.projection.projector import Projector
from services.projection.views import PostgresTournamentViews
from shared.app.evaluations import create_evaluation, load_evaluation, start_pending
from shared.app.registry import register
from shared.app.runtime import InProcessDispatcher
from shared.model.evaluations import Contestant, EvaluationDefinition
from shared.model.registry import BotSpec
from shared.ports.views.memory import InMemoryTournamentViews
from shared.ports.views.port import TournamentViews
from shared.store.memory import InMemoryEventStore
from shared.store.port import EventStore
from shared.store.redis_store import RedisEventStore

Views = tuple[EventStore, Callable[[], TournamentViews]]


@pytest.fixture(params=["memory", pytest.param("postgres", marks=pytest.mark.integration)])
def views(request: pytest.FixtureRequest) -> Views:
    """Returns a store and its views (projected first, on PostgreSQL), each in turn."""
    if request.param == "memory":
        store = InMemoryEventStore()
        memory = InMemoryTournamentViews(store)
        return store, lambda: memory
    client: redis.Redis = request.getfixturevalue("redis_client")
    database_url: str = request.getfixturevalue("database_url")
    migrate(database_url)
    redis_store = RedisEventStore(client, request.getfixturevalue("namespace"))
    consumer = redis_store.consumer("projection", "p1")
    projected = PostgresTournamentViews(database_url)

    def caught_up() -> TournamentViews:
        with Projector(database_url, consumer) as projector:
            while projector.run_once(count=250):
                pass
        return projected

    return redis_store, caught_up


def test_an_evaluation_of_two_host_bots_rates_none_of_its_games(views: Views) -> None:
    store, read = views
    for name, strategy in (("smart", "heuristic"), ("plain", "random")):
        register(store, BotSpec(name=name, game="autobus", strategy=strategy))
    definition = EvaluationDefinition(
        game="autobus",
        candidate=Contestant(bot="smart", version="1"),
        baseline=Contestant(bot="plain", version="1"),
        elo1=200,
        seed="3",
        max_games=8,
    )
    evaluation_id = create_evaluation(store, definition, "e-host")
    start_pending(store, evaluation_id, InProcessDispatcher(store).dispatch)
    state, _ = load_evaluation(store, evaluation_id)
    assert state.finished is not None
    lines = read().recent_games(limit=100)
    assert len(lines) == state.started * 2
    assert {(line.rated, line.unrated.code if line.unrated else None) for line in lines} == {
        (False, "evaluation")
    }
    assert read().leaderboard("autobus") == []
