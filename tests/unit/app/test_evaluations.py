"""Hosted evaluations over the in-memory store: a unit is recorded once its games end, and
the reconciliation moves on an evaluation whose game ends were lost."""

from __future__ import annotations

from shared.app.bot_turns import play_bot_turns
from shared.app.deadlines import now_ms
from shared.app.evaluations import (
    create_evaluation,
    load_evaluation,
    reconcile,
    start_pending,
    unit_games,
)
from shared.app.registry import register
from shared.model.evaluations import IN_FLIGHT, Contestant, EvaluationDefinition
from shared.model.registry import BotSpec
from shared.store.memory import InMemoryEventStore


def evaluation(store: InMemoryEventStore) -> str:
    """Registers two host bots and creates an evaluation of one against the other."""
    for name, strategy in (("smart", "heuristic"), ("plain", "random")):
        register(store, BotSpec(name=name, game="shithead", strategy=strategy))
    definition = EvaluationDefinition(
        game="shithead",
        candidate=Contestant(bot="smart", version="1"),
        baseline=Contestant(bot="plain", version="1"),
        elo1=200,
        seed="7",
        max_games=100,
    )
    return create_evaluation(store, definition, "e1")


def test_the_reconciliation_records_units_whose_game_ends_were_lost() -> None:
    store = InMemoryEventStore()
    evaluation_id = evaluation(store)
    lost: list[str] = []
    start_pending(store, evaluation_id, lost.append)  # dispatched nowhere: nobody hears
    for game_id in lost:
        play_bot_turns(store, game_id)  # played to the end, its hook lost
    state, _ = load_evaluation(store, evaluation_id)
    assert (state.recorded, state.in_flight) == ({}, list(range(IN_FLIGHT)))
    sent: list[str] = []
    assert reconcile(store, 0, now_ms(), sent.append) == 1
    state, _ = load_evaluation(store, evaluation_id)
    assert sorted(state.recorded) == list(range(IN_FLIGHT))
    assert sent == [g for unit in state.in_flight for g in unit_games(evaluation_id, state, unit)]
    assert state.in_flight == [IN_FLIGHT + unit for unit in range(IN_FLIGHT)]  # the next ones
    assert reconcile(store, 60_000, now_ms(), sent.append) == 0  # it just moved: left alone


def test_the_reconciliation_creates_a_unit_s_missing_games() -> None:
    store = InMemoryEventStore()
    evaluation_id = evaluation(store)  # recorded, its games never created (a crash)
    sent: list[str] = []
    assert reconcile(store, 0, now_ms(), sent.append) == 1
    state, _ = load_evaluation(store, evaluation_id)
    assert sent == [g for unit in state.in_flight for g in unit_games(evaluation_id, state, unit)]
    assert all(store.version(game_id) > 0 for game_id in sent)
