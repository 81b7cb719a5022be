"""A finished tournament names its winner: a knockout's last entrant, else the first of the
final standings, ranked by its format's tie-breaks and at the last by the seeded drawing of
lots, never by the order of entry."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import msgspec
import pytest

from shared.app.tournaments import run_in_process
from shared.model.tournaments import model
from shared.model.tournaments.model import (
    Entrant,
    GameRecorded,
    RoundScheduled,
    TournamentCreated,
    TournamentDefinition,
    TournamentFinished,
    TournamentState,
    advance,
    evolve,
    ranking,
)
from shared.model.tournaments.standings import standings
from shared.ports import views
from shared.ports.views.memory import InMemoryTournamentViews
from shared.store.memory import InMemoryEventStore

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "payloads"
ENTRANTS = [Entrant(bot="random", version="1", name=f"bot{i}") for i in range(4)]


def played(
    definition: TournamentDefinition, rounds: Sequence[Sequence[list[int]]]
) -> TournamentState:
    """Returns the state after the process ran `definition`, each round's games ending with
    the given places (in the order `advance` scheduled them), and the events it returned."""
    state = evolve(None, TournamentCreated(definition=definition))
    for event in advance(state, "t"):
        state = evolve(state, event)
    for places_of_round in rounds:
        current = state.rounds[-1]
        assert len(current.games) == len(places_of_round)
        for game, places in zip(current.games, places_of_round, strict=True):
            recorded = GameRecorded(
                round=current.round,
                key=game.key,
                game_id=game.key,
                places=places,
                status="finished",
            )
            state = evolve(state, recorded)
            for event in advance(state, "t"):
                state = evolve(state, event)
    return state


def round_robin(entrants: int, size: int) -> TournamentDefinition:
    """Returns a round robin of the first `entrants` ENTRANTS at tables of `size`."""
    return TournamentDefinition(
        game="autobus", entrants=ENTRANTS[:entrants], table_size=size, seed="w"
    )


def test_a_round_robin_names_the_entrant_with_the_most_points() -> None:
    state = played(round_robin(3, 2), [[[2, 1], [1, 2], [1, 2]]])  # (0,1) (0,2) (1,2)
    assert state.status == "finished"
    assert state.winner == 1
    assert standings(state)[0].entrant == 1


def test_equal_points_go_to_sonneborn_berger() -> None:
    # Three at one table, twice (k = 3); Sonneborn-Berger: for each game and mate, the result
    # against the mate (1 better, 1/2 shared, 0 worse) times the mate's points, over k - 1.
    definition = TournamentDefinition(
        game="autobus", entrants=ENTRANTS[:3], table_size=3, games_per_table=2, seed="w"
    )
    state = played(definition, [[[1, 2, 3], [1, 2, 2]]])
    tables = [game.table for game in state.rounds[0].games]
    assert tables == [(0, 1, 2), (1, 2, 0)]  # the seats rotate: places are in seat order
    # Game 2: entrant 1 places 1, entrant 2 and entrant 0 share place 2.
    # Points: 0: 2 + 1 = 3; 1: 1 + 2 = 3; 2: 0 + 1 = 1.
    # SB of 0: game 1 beats 1 (3) and 2 (1): 4 / 2; game 2 shares with 2 (1/2 * 1), loses
    # to 1: 1/2 / 2. Total 2 + 1/4 = 2.25. SB of 1: game 1 beats 2 (1) = 1/2; game 2 beats
    # 2 (1) and 0 (3) = 2. Total 2.5.
    lines = standings(state)
    assert [(line.entrant, line.points) for line in lines] == [(1, 3.0), (0, 3.0), (2, 1.0)]
    assert [line.tiebreaks.sonneborn_berger for line in lines] == [
        2.5,
        2.25,
        0.75,
    ]
    assert [line.rank for line in lines] == [1, 2, 3]
    assert state.winner == 1


def test_a_first_place_shared_on_every_count_goes_to_the_drawing_of_lots() -> None:
    # A cycle: 0 beats 1, 2 beats 0, 1 beats 2: one point, equal Sonneborn-Berger and direct
    # encounter each; the seeded lots, not the order of entry, decide.
    state = played(round_robin(3, 2), [[[1, 2], [2, 1], [1, 2]]])
    lines = standings(state)
    assert {(line.points, line.wins, line.mean_place) for line in lines} == {(1.0, 1, 1.5)}
    assert {line.tiebreaks.sonneborn_berger for line in lines} == {1.0}
    assert {line.tiebreaks.direct_encounter for line in lines} == {1.0}
    lots = [line.tiebreaks.lot for line in lines]
    assert lots == [1, 2, 3]
    assert state.winner == lines[0].entrant


def test_direct_encounter_breaks_a_tie_of_points_and_sonneborn_berger() -> None:
    # (0,1) drawn: both place 1 (a point each); 0 and 1 each beat 2: equal points (2) and
    # Sonneborn-Berger (1/2 * 2 + 1 * 0 = 1); direct encounter equal (1/2): the lots decide,
    # and entrant 2 is last whatever they draw.
    state = played(round_robin(3, 2), [[[1, 1], [1, 2], [1, 2]]])
    lines = standings(state)
    assert [(line.points, line.wins) for line in lines] == [(2.0, 2), (2.0, 2), (0.0, 0)]
    assert lines[-1].entrant == 2
    assert {line.tiebreaks.direct_encounter for line in lines[:2]} == {0.5}
    assert lines[0].tiebreaks.lot < lines[1].tiebreaks.lot
    assert state.winner == lines[0].entrant


def test_swiss_names_its_winner_only_after_its_last_round() -> None:
    definition = TournamentDefinition(
        game="autobus", entrants=ENTRANTS, table_size=2, format="swiss", rounds=2, seed="w"
    )
    state = evolve(None, TournamentCreated(definition=definition))
    for event in advance(state, "t"):
        state = evolve(state, event)
    first = state.rounds[-1]
    for game in first.games:
        state = evolve(
            state,
            GameRecorded(round=1, key=game.key, game_id=game.key, places=[1, 2], status="finished"),
        )
    events = advance(state, "t")
    assert [type(e) for e in events] == [model.RoundCompleted, RoundScheduled]
    for event in events:
        state = evolve(state, event)
    assert state.winner is None
    second = state.rounds[-1]
    for game in second.games:
        state = evolve(
            state,
            GameRecorded(round=2, key=game.key, game_id=game.key, places=[2, 1], status="finished"),
        )
    events = advance(state, "t")
    finished = events[-1]
    assert isinstance(finished, TournamentFinished)
    state = evolve(state, events[0])
    state = evolve(state, finished)
    assert finished.winner == ranking(state)[0] == standings(state)[0].entrant == state.winner
    top = standings(state)[0]
    assert top.points == max(line.points for line in standings(state))


def test_swiss_with_a_bye_counts_it_as_a_win_s_points() -> None:
    definition = TournamentDefinition(
        game="autobus", entrants=ENTRANTS[:3], table_size=2, format="swiss", rounds=1, seed="w"
    )
    state = played(definition, [[[2, 1]]])
    (bye,) = state.rounds[0].byes
    (table,) = [game.table for game in state.rounds[0].games]
    lines = {line.entrant: line for line in standings(state)}
    assert lines[bye].points == lines[table[1]].points == 1.0
    assert lines[bye].games == 0
    assert lines[bye].mean_place is None
    assert lines[bye].win_rate_low is None
    # Equal points; Buchholz: the bye counts as a round against its own points (1), the
    # table's winner met an opponent of 0 points.
    assert lines[bye].tiebreaks.buchholz == 1.0
    assert state.winner == bye


def test_a_finished_event_of_an_older_stream_without_a_winner_folds_to_the_standings_first() -> (
    None
):
    state = played(round_robin(3, 2), [[[2, 1], [1, 2], [1, 2]]])
    before = msgspec.structs.replace(state, status="running", winner=None)
    assert evolve(before, TournamentFinished(winner=None)).winner == 1


@pytest.mark.parametrize("fmt", ["round_robin", "swiss", "duplicate", "knockout"])
def test_every_format_run_in_process_names_a_winner_the_views_show(fmt: str) -> None:
    definition = TournamentDefinition(
        game="autobus",
        entrants=[
            Entrant(bot=b, name=f"{b}{i}") for i, b in enumerate(["heuristic", "random"] * 2)
        ],
        table_size=2,
        format=fmt,  # type: ignore[arg-type]
        rounds=2,
        seed="5",
    )
    store = InMemoryEventStore()
    state = run_in_process(store, definition, "t")
    assert state.status == "finished"
    assert state.winner is not None
    if fmt != "knockout":
        assert state.winner == standings(state)[0].entrant
    (line,) = InMemoryTournamentViews(store).tournaments()
    assert line.winner == state.winner
    assert views.fold.summary("t", state, 0).winner == state.winner


def test_a_knockout_table_tied_on_points_goes_to_the_lots_not_the_first_seat() -> None:
    # Two entrants, a table of two games with the seats rotating: each wins once, 1 point
    # each. The winner is the first of the seeded drawing, whoever sat first.
    definition = TournamentDefinition(
        game="autobus",
        entrants=ENTRANTS[:2],
        table_size=2,
        format="knockout",
        games_per_table=2,
        seed="w",
    )
    state = played(definition, [[[1, 2], [1, 2]]])  # seat 0 wins both games: one each
    assert [game.table for game in state.rounds[0].games] == [(0, 1), (1, 0)]
    lines = standings(state)
    assert {line.points for line in lines} == {1.0}
    drawn_first = min(lines, key=lambda line: line.tiebreaks.lot).entrant
    assert state.winner == drawn_first == lines[0].entrant
    assert [line.stage for line in lines] == [1, 0]


def test_a_knockout_ranks_by_the_rounds_each_came_through() -> None:
    definition = TournamentDefinition(
        game="autobus", entrants=ENTRANTS, table_size=2, format="knockout", seed="w"
    )
    # Round one: (0, 1) won by 1, (2, 3) won by 3; the final (1, 3) won by 3.
    state = played(definition, [[[2, 1], [2, 1]], [[2, 1]]])
    lines = standings(state)
    assert state.winner == lines[0].entrant == 3
    assert [(line.entrant, line.stage) for line in lines][:2] == [(3, 2), (1, 1)]
    assert {line.entrant for line in lines[2:]} == {0, 2}


def test_a_definition_stored_before_names_reads_with_the_default_name() -> None:
    payloads = json.loads((GOLDEN / "v1.json").read_text())["tournament"]
    created = msgspec.msgpack.decode(
        bytes.fromhex(payloads["TournamentCreated"]), type=model.AnyTournamentEvent
    )
    assert isinstance(created, TournamentCreated)
    assert model.display_name(created.definition).endswith(
        {"round_robin": "round robin", "swiss": "Swiss"}.get(
            created.definition.format, created.definition.format
        )
    )
    assert model.description_of(created.definition) is None
