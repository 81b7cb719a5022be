"""A hosted evaluation's fold and `advance`: how many units start, when it finishes, what a
void unit counts."""

from __future__ import annotations

from shared.model.evaluations import (
    IN_FLIGHT,
    Contestant,
    EvaluationDefinition,
    EvaluationFinished,
    EvaluationStarted,
    EvaluationState,
    UnitRecorded,
    UnitStarted,
    advance,
    evolve,
)


def started(**fields: object) -> EvaluationState:
    """Returns a fresh evaluation of A against B with `fields` for its definition."""
    definition = EvaluationDefinition(
        game="shithead",
        candidate=Contestant(bot="a", version="1"),
        baseline=Contestant(bot="b", version="1"),
        **fields,  # type: ignore[arg-type]
    )
    return evolve(None, EvaluationStarted(definition=definition))


def run(state: EvaluationState, *events: object) -> EvaluationState:
    """Returns `state` after `events` and what `advance` appends after each."""
    for event in events:
        state = evolve(state, event)  # type: ignore[arg-type]
        for following in advance(state):
            state = evolve(state, following)
    return state


def test_a_fresh_evaluation_starts_a_few_units_at_a_time() -> None:
    assert advance(started()) == [UnitStarted(unit=u) for u in range(IN_FLIGHT)]


def test_no_unit_starts_past_max_games() -> None:
    state = started(max_games=3)  # one pair fits, not two
    assert advance(state) == [UnitStarted(unit=0)]
    state = run(state, UnitStarted(unit=0), UnitRecorded(unit=0, games=["g0", "g1"], score=2))
    assert state.finished is not None
    assert (state.finished.verdict, state.finished.games, state.started) == ("inconclusive", 2, 1)


def test_a_crossed_bound_finishes_at_once_and_a_late_unit_counts_for_nothing() -> None:
    state = run(started(elo1=400), UnitStarted(unit=0), UnitStarted(unit=1))
    unit = 0
    while state.finished is None:
        in_flight = state.in_flight[0]
        state = run(state, UnitRecorded(unit=in_flight, games=[], score=4))
        unit += 1
    assert isinstance(state.finished, EvaluationFinished)
    assert state.finished.verdict == "H1"
    assert state.finished.units == len(state.llrs) == unit
    late = state.in_flight[0]
    after = run(state, UnitRecorded(unit=late, games=[], score=0))
    assert (after.counts, advance(after)) == (state.counts, [])


def test_a_void_unit_counts_nothing_and_another_takes_its_place() -> None:
    state = run(started(), UnitStarted(unit=0), UnitStarted(unit=1))
    state = run(state, UnitRecorded(unit=0, games=[], void=True))
    assert (sum(state.counts), state.llrs, state.in_flight) == (0, [], [1, 2])
