"""The views' contract for hosted evaluations, in memory and on PostgreSQL (the projection):
an evaluation's games, even between two host bots, are listed as `evaluation` and never
rated, and the projection takes the evaluation's own stream in its stride."""

from __future__ import annotations

from shared.app.evaluations import create_evaluation, load_evaluation, start_pending
from shared.app.registry import register
from shared.app.runtime import InProcessDispatcher
from shared.model.evaluations import Contestant, EvaluationDefinition
from shared.model.registry import BotSpec
from tests.support.stores import Views


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
