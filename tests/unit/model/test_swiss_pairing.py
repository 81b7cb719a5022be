"""Swiss pairing (shared.model.tournaments.swiss) as the Dutch system runs it (FIDE Handbook
C.04.3): the first round folds the field by pairing number, score groups meet within
themselves, nobody meets twice while a round can avoid it, byes go to different entrants,
seats stay balanced."""

from __future__ import annotations

import random
from collections.abc import Sequence
from itertools import combinations

from hypothesis import given, settings
from hypothesis import strategies as st

from shared.model.tournaments import swiss
from shared.model.tournaments.swiss import Table


def play(
    entrants: int, size: int, rounds: int, rng: random.Random, seed: str = "s"
) -> tuple[list[list[Table]], list[list[int]]]:
    """Returns each round's tables and byes, each game's places drawn from `rng` (ties too)."""
    points = dict.fromkeys(range(entrants), 0.0)
    history: list[Table] = []
    byes_had: dict[int, int] = {}
    all_tables, all_byes = [], []
    for _ in range(rounds):
        tables, byes = swiss.pair(entrants, size, points, history, byes_had, seed)
        for entrant in byes:
            byes_had[entrant] = byes_had.get(entrant, 0) + 1
            points[entrant] += size - 1
        for table in tables:
            scores = [rng.randint(0, 2) for _ in table]
            for entrant, mine in zip(table, scores, strict=True):
                points[entrant] += size - (1 + sum(other > mine for other in scores))
        history.extend(tables)
        all_tables.append(tables)
        all_byes.append(byes)
    return all_tables, all_byes


def pairs(tables: Sequence[Table]) -> set[frozenset[int]]:
    """Returns every pair of entrants that shares a table."""
    return {frozenset(pair) for table in tables for pair in combinations(table, 2)}


def rematch_free_exists(pool: list[int], size: int, met: set[frozenset[int]]) -> bool:
    """Returns whether `pool` splits into tables of `size` with no pair in `met` (exhaustive)."""
    if not pool:
        return True
    top, rest = pool[0], pool[1:]
    for mates in combinations(rest, size - 1):
        table = (top, *mates)
        if any(frozenset(p) in met for p in combinations(table, 2)):
            continue
        if rematch_free_exists([e for e in rest if e not in mates], size, met):
            return True
    return False


def test_the_first_round_folds_the_field_top_half_against_bottom_half() -> None:
    # Dutch system, round 1 of eight: 1-5, 2-6, 3-7, 4-8 by pairing number.
    numbers = swiss.pairing_numbers(8, "fold")
    order = sorted(range(8), key=lambda e: numbers[e])
    tables, byes = swiss.pair(8, 2, {}, [], {}, "fold")
    assert byes == []
    assert [set(table) for table in tables] == [{order[i], order[i + 4]} for i in range(4)]


def test_at_tables_of_three_the_first_round_takes_one_of_each_third() -> None:
    numbers = swiss.pairing_numbers(6, "thirds")
    order = sorted(range(6), key=lambda e: numbers[e])
    tables, _ = swiss.pair(6, 3, {}, [], {}, "thirds")
    assert [set(table) for table in tables] == [
        {order[0], order[2], order[4]},
        {order[1], order[3], order[5]},
    ]


def test_score_groups_meet_within_themselves() -> None:
    # After a round of eight without shared places: four winners, four losers; each group of
    # four is paired within itself.
    points = {e: float(e < 4) for e in range(8)}
    history = [(0, 4), (1, 5), (2, 6), (3, 7)]
    tables, _ = swiss.pair(8, 2, points, history, {}, "groups")
    assert {frozenset(points[e] for e in table) for table in tables} == {
        frozenset({1.0}),
        frozenset({0.0}),
    }
    assert not pairs(tables) & pairs(history)


def test_the_bye_goes_to_the_lowest_ranked_without_one() -> None:
    points = {0: 2.0, 1: 1.0, 2: 1.0, 3: 0.0, 4: 0.0}
    numbers = swiss.pairing_numbers(5, "bye")
    lowest = max((3, 4), key=lambda e: numbers[e])
    assert swiss.pair(5, 2, points, [], {}, "bye")[1] == [lowest]
    other = min((3, 4), key=lambda e: numbers[e])
    assert swiss.pair(5, 2, points, [], {lowest: 1}, "bye")[1] == [other]


def test_seats_go_to_whoever_sat_there_least() -> None:
    counts = [[2, 0], [0, 1]]
    assert swiss.assign_seats([0, 1], counts, {0: 0, 1: 1}, {0: 0, 1: 1}) == (1, 0)
    assert swiss.must_sit(counts) == {0: 1}


@settings(derandomize=True, max_examples=120, deadline=None)
@given(
    size=st.sampled_from([2, 2, 3, 4]),
    extra=st.integers(0, 7),
    rounds=st.integers(1, 8),
    seed=st.integers(0, 10**6),
)
def test_no_rematch_while_avoidable_byes_to_different_entrants_and_seats_balanced(
    size: int, extra: int, rounds: int, seed: int
) -> None:
    entrants = size + extra
    rounds_tables, rounds_byes = play(entrants, size, rounds, random.Random(seed), f"p{seed}")
    met: set[frozenset[int]] = set()
    byes_had: dict[int, int] = {}
    for tables, byes in zip(rounds_tables, rounds_byes, strict=True):
        seated = sorted(e for table in tables for e in table)
        assert sorted(seated + byes) == list(range(entrants))  # everyone once
        assert all(len(table) == size for table in tables)
        assert len(byes) == entrants % size
        if pairs(tables) & met:  # a rematch: only when no round without one existed
            assert not rematch_free_exists(seated, size, met)
        met |= pairs(tables)
        for entrant in byes:
            byes_had[entrant] = byes_had.get(entrant, 0) + 1
        # Nobody has a second bye while someone has none.
        assert (
            max(byes_had.values(), default=0) - min(byes_had.get(e, 0) for e in range(entrants))
            <= 1
        )
    history = [table for tables in rounds_tables for table in tables]
    counts = swiss.seat_counts(entrants, size, history)
    worst = max(max(seats) - min(seats) for seats in counts)
    assert worst <= (2 if size == 2 else 3)
