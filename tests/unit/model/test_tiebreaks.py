"""Tie-breaks (shared.model.tournaments.tiebreaks) against worked examples written out by hand,
and the property that no ranking depends on the order of entry.

Definitions: FIDE Handbook C.07, Tie-Break Regulations (2024): Buchholz is the sum of the
opponents' scores, cut-1 drops the lowest and median the highest and the lowest, Sonneborn-
Berger sums each opponent's score times the result against it, direct encounter counts the
games among the tied, a drawing of lots ends what is left; docs/reference/tournaments.md has
their k-seat forms."""

from __future__ import annotations

import random
from fractions import Fraction
from itertools import permutations

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.model.tournaments import tiebreaks
from shared.model.tournaments.model import (
    Entrant,
    GameRecorded,
    RoundScheduled,
    ScheduledGame,
    TournamentCreated,
    TournamentDefinition,
    TournamentState,
    advance,
    evolve,
    ranked,
    tiebreak_field,
)
from shared.model.tournaments.tiebreaks import Field, Played

A, B, C, D, E, F = range(6)


def won(round_no: int, winner: int, loser: int) -> Played:
    """Returns a two-seat game that `winner` won."""
    return Played(round_no, (winner, loser), (1, 2))


def test_sonneborn_berger_of_senseis_library_double_round_robin() -> None:
    # Sensei's Library, "Sonneborn-Berger" (senseis.xmp.net/?SonnebornBerger): four players,
    # two cycles, 1 a win and 0 a loss. A and B both score 4; A beat B, C, C, D (4+3+3+1 = 11),
    # B beat A, C, D, D (4+3+1+1 = 9), C beat B, D, D (4+1+1 = 6), D beat A (4).
    games = [
        won(1, A, B), won(1, A, C), won(1, A, D), won(1, B, C), won(1, B, D), won(1, C, D),
        won(2, B, A), won(2, A, C), won(2, D, A), won(2, C, B), won(2, B, D), won(2, C, D),
    ]  # fmt: skip
    data = Field(entrants=4, table_size=2, format="round_robin", seed="s", rounds=1, games=games)
    order, values = tiebreaks.rank(data)
    assert [v.points for v in values] == [4, 4, 3, 1]
    assert [v.sonneborn_berger for v in values] == [11, 9, 6, 4]
    assert order == [A, B, C, D]  # A before B on Sonneborn-Berger, whatever the lots


SWISS = [
    # A hand-made six-player, three-round Swiss of wins and losses (no rematch):
    #   round 1: A-D 1-0, B-E 1-0, C-F 1-0; round 2: A-B 1-0, C-D 1-0, E-F 1-0;
    #   round 3: C-A 1-0, B-F 1-0, D-E 1-0. Scores: A 2, B 2, C 3, D 1, E 1, F 0.
    won(1, A, D), won(1, B, E), won(1, C, F),
    won(2, A, B), won(2, C, D), won(2, E, F),
    won(3, C, A), won(3, B, F), won(3, D, E),
]  # fmt: skip


def test_buchholz_cut_1_and_sonneborn_berger_of_a_three_round_swiss() -> None:
    # Opponents' scores: A met D 1, B 2, C 3: Buchholz 6, cut-1 (drop 1) 5, SB (beat D, B) 3;
    # B met E 1, A 2, F 0: 3, 3, SB (E, F) 1; C met F 0, D 1, A 2: 3, 3, SB 3;
    # D met A 2, C 3, E 1: 6, 5, SB (E) 1; E met B 2, F 0, D 1: 3, 3, SB (F) 0;
    # F met C 3, E 1, B 2: 6, 5, SB 0.
    data = Field(entrants=6, table_size=2, format="swiss", seed="s", rounds=3, games=SWISS)
    order, values = tiebreaks.rank(data)
    assert [v.points for v in values] == [2, 2, 3, 1, 1, 0]
    assert [v.buchholz for v in values] == [6, 3, 3, 6, 3, 6]
    assert [v.median_buchholz for v in values] == [5, 3, 3, 5, 3, 5]
    assert [v.sonneborn_berger for v in values] == [3, 1, 3, 1, 0, 0]
    assert order == [C, A, B, D, E, F]  # A over B and D over E on Buchholz


def test_median_buchholz_drops_the_highest_and_the_lowest_from_five_rounds_on() -> None:
    data = Field(entrants=6, table_size=2, format="swiss", seed="s", rounds=5, games=SWISS)
    _, values = tiebreaks.rank(data)
    assert [v.median_buchholz for v in values] == [2, 1, 1, 2, 1, 2]


def test_a_bye_counts_as_a_round_against_its_own_score_and_is_cut_first() -> None:
    # Three players, three rounds, one bye a round (a win's point): A beats B (C's bye), C
    # beats A (B's bye), B beats C (A's bye): 2 points each. A's rounds: B (2), C (2), its
    # bye (its own 2): Buchholz 6; cut-1 drops the bye first: 4.
    games = [won(1, A, B), won(2, C, A), won(3, B, C)]
    data = Field(
        entrants=3,
        table_size=2,
        format="swiss",
        seed="s",
        rounds=3,
        games=games,
        byes={1: [C], 2: [B], 3: [A]},
    )
    _, values = tiebreaks.rank(data)
    assert [v.points for v in values] == [2, 2, 2]
    assert [v.buchholz for v in values] == [6, 6, 6]
    assert [v.median_buchholz for v in values] == [4, 4, 4]


def test_at_tables_of_three_direct_encounter_ranks_above_the_lots() -> None:
    # Four entrants, every table of three once (k = 3: place 1 earns 2, 2 earns 1, 3 none):
    #   (A, B, C) all share place 1; (A, B, D) places 1, 2, 2; (A, C, D) places 2, 1, 3;
    #   (B, C, D) places 2, 2, 1. Points: A 5, B 4, C 5, D 3. Sonneborn-Berger of A: table
    #   one, 1/2 of B's 4 and of C's 5 (4.5); table two, all of B's 4 and D's 3 (7); table
    #   three, D's 3; each over k - 1 = 2: 2.25 + 3.5 + 1.5 = 7.25, and C's the same. A and
    #   C met twice: shared a place (1/2 each), then C placed better (1 to C): mean 1/4 to A,
    #   3/4 to C, so C ranks first though A is drawn first.
    games = [
        Played(1, (A, B, C), (1, 1, 1)),
        Played(1, (A, B, D), (1, 2, 2)),
        Played(1, (A, C, D), (2, 1, 3)),
        Played(1, (B, C, D), (2, 2, 1)),
    ]
    data = Field(entrants=4, table_size=3, format="round_robin", seed="x", rounds=1, games=games)
    order, values = tiebreaks.rank(data)
    assert [v.points for v in values] == [5, 4, 5, 3]
    assert values[A].sonneborn_berger == values[C].sonneborn_berger == Fraction(29, 4)
    assert (values[A].direct_encounter, values[C].direct_encounter) == (
        Fraction(1, 4),
        Fraction(3, 4),
    )
    assert values[A].lot < values[C].lot
    assert order == [C, A, B, D]
    assert values[B].direct_encounter is None  # nobody tied with it


def test_direct_encounter_applies_only_when_every_two_of_the_tied_met() -> None:
    met = {(A, B): [Fraction(1)], (B, A): [Fraction(0)]}
    assert tiebreaks.direct_encounter([A, B], met) == {A: Fraction(1), B: Fraction(0)}
    assert tiebreaks.direct_encounter([A, B, C], met) is None


def test_the_lots_are_a_seeded_drawing_not_the_order_of_entry() -> None:
    drawings = {tuple(tiebreaks.lots(6, f"seed-{i}")) for i in range(20)}
    assert len(drawings) > 1
    assert all(sorted(drawing) == [1, 2, 3, 4, 5, 6] for drawing in drawings)
    assert tiebreaks.lots(6, "seed-1") == tiebreaks.lots(6, "seed-1")


# The winner never depends on the order of entry: a finished tournament's results, its
# entrants permuted, rank the same up to the drawing of lots.


def finished(definition: TournamentDefinition, rng: random.Random) -> TournamentState:
    """Returns `definition` run to its end, each game's places drawn from `rng` (ties too)."""
    state = evolve(None, TournamentCreated(definition=definition))
    for event in advance(state, "t"):
        state = evolve(state, event)
    while state.status == "running":
        for game in state.rounds[-1].games:
            scores = [rng.randint(0, 2) for _ in game.table]
            places = [1 + sum(other > mine for other in scores) for mine in scores]
            recorded = GameRecorded(
                round=state.rounds[-1].round,
                key=game.key,
                game_id=game.key,
                places=places,
                status="finished",
            )
            state = evolve(state, recorded)
            for event in advance(state, "t"):
                state = evolve(state, event)
    return state


def relabelled(state: TournamentState, moved: list[int]) -> TournamentState:
    """Returns `state` with entrant e entered as `moved[e]`: the same games, tables and places."""
    d = state.definition
    entrants = [d.entrants[0]] * len(d.entrants)
    for old, new in enumerate(moved):
        entrants[new] = d.entrants[old]
    rounds = tuple(
        RoundScheduled(
            round=rnd.round,
            games=[
                ScheduledGame(
                    key=g.key, table=tuple(moved[e] for e in g.table), seed=g.seed, deal=g.deal
                )
                for g in rnd.games
            ],
            byes=[moved[e] for e in rnd.byes],
        )
        for rnd in state.rounds
    )
    definition = msgspec.structs.replace(d, entrants=entrants)
    return msgspec.structs.replace(state, definition=definition, rounds=rounds)


def unlotted(state: TournamentState) -> list[tuple[Fraction | None, ...]]:
    """Returns the standings' values but the lot, best first."""
    order, values = ranked(state)
    data = tiebreak_field(state)
    return [
        (
            data.scores.get(e),
            Fraction(data.stages[e]) if e in data.stages else None,
            values[e].points,
            values[e].buchholz,
            values[e].median_buchholz,
            values[e].sonneborn_berger,
            values[e].direct_encounter,
        )
        for e in order
    ]


def drew_a_knockout_table(state: TournamentState) -> bool:
    """Returns whether a knockout table's best points were shared (its winner drawn by lot)."""
    places = {record.key: record.places for record in state.records}
    size = state.definition.table_size
    for rnd in state.rounds:
        tables: dict[frozenset[int], dict[int, int]] = {}
        for game in rnd.games:
            totals = tables.setdefault(frozenset(game.table), {})
            for entrant, place in zip(game.table, places[game.key], strict=True):
                totals[entrant] = totals.get(entrant, 0) + size - place
        if any(list(t.values()).count(max(t.values())) > 1 for t in tables.values()):
            return True
    return False


@settings(derandomize=True, max_examples=200, deadline=None)
@given(
    fmt=st.sampled_from(["round_robin", "swiss", "duplicate", "knockout"]),
    size=st.sampled_from([2, 3]),
    extra=st.integers(0, 4),
    seed=st.integers(0, 10**6),
    shuffle=st.integers(0, 10**6),
)
def test_permuting_the_order_of_entry_changes_no_ranking_but_the_lots(
    fmt: str, size: int, extra: int, seed: int, shuffle: int
) -> None:
    entrants = 2 * size + extra if fmt == "duplicate" else size + extra
    definition = TournamentDefinition(
        game="autobus",
        entrants=[Entrant(bot="random", version=str(i)) for i in range(entrants)],
        table_size=size,
        format=fmt,  # type: ignore[arg-type]
        rounds=3,
        seed=f"seed-{seed}",
    )
    state = finished(definition, random.Random(seed))
    moved = list(range(entrants))
    random.Random(shuffle).shuffle(moved)
    permuted = relabelled(state, moved)
    assert unlotted(permuted) == unlotted(state)
    original, _ = ranked(state)
    again, _ = ranked(permuted)
    if fmt == "knockout" and drew_a_knockout_table(state):
        return  # who went through a tied table was drawn by lot: only the values compare
    # Who is where: the same entrant at each place, or entrants tied on everything but lots.
    keys = dict(zip(original, unlotted(state), strict=True))
    for first, second in zip(original, again, strict=True):
        old_of_second = moved.index(second)
        assert first == old_of_second or keys[first] == keys[old_of_second]


def test_every_permutation_of_a_small_round_robin_names_a_winner_tied_with_the_first() -> None:
    definition = TournamentDefinition(
        game="autobus",
        entrants=[Entrant(bot="random", version=str(i)) for i in range(4)],
        table_size=2,
        games_per_table=2,
        seed="perm",
    )
    state = finished(definition, random.Random(4))
    best = unlotted(state)[0]
    for moved in permutations(range(4)):
        permuted = relabelled(state, list(moved))
        assert unlotted(permuted)[0] == best
