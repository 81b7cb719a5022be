"""Arena pairing (shared.model.tournaments.arena): free entrants are seated at once, nobody
with its last table's mates while that can be avoided, tables of neighbours in score, seats
balanced, the same tables for the same inputs and seed."""

from __future__ import annotations

import random
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.model.tournaments import arena
from shared.model.tournaments.arena import Table


def test_free_entrants_are_seated_by_score_neighbours() -> None:
    scores = {0: 9.0, 1: 1.0, 2: 8.0, 3: 0.0, 4: 5.0, 5: 4.0}
    tables, waiting = arena.pair(range(6), 2, scores, [], "s", rematch_ok=True)
    assert [set(t) for t in tables] == [{0, 2}, {4, 5}, {1, 3}]
    assert waiting == []


def test_the_last_opponent_is_skipped_for_the_next_in_score() -> None:
    scores = {0: 3.0, 1: 2.0, 2: 1.0, 3: 0.0}
    tables, _ = arena.pair(range(4), 2, scores, [(0, 1), (2, 3)], "s", rematch_ok=True)
    assert [set(t) for t in tables] == [{0, 2}, {1, 3}]


def test_a_rematch_waits_while_another_game_is_in_progress() -> None:
    tables, waiting = arena.pair([0, 1], 2, {}, [(0, 1)], "s", rematch_ok=False)
    assert tables == []
    assert sorted(waiting) == [0, 1]


def test_a_rematch_is_played_when_nobody_else_can_come() -> None:
    tables, waiting = arena.pair([0, 1], 2, {}, [(0, 1)], "s", rematch_ok=True)
    assert [set(t) for t in tables] == [{0, 1}]
    assert waiting == []


def test_the_entrant_with_the_most_games_waits_when_the_free_do_not_fill_tables() -> None:
    history: list[Table] = [(0, 1), (0, 2), (0, 1)]
    tables, waiting = arena.pair([0, 1, 2], 2, {}, history, "s", rematch_ok=True)
    assert waiting == [0]
    assert [set(t) for t in tables] == [{1, 2}]


def test_an_entrant_that_sat_first_more_often_sits_later() -> None:
    history: list[Table] = [(0, 2), (0, 3), (1, 4)]
    tables, _ = arena.pair([0, 1], 2, {}, history, "s", rematch_ok=True)
    assert tables == [(1, 0)]


def test_tables_of_three_seat_each_entrant_in_its_least_used_seat() -> None:
    history: list[Table] = [(0, 1, 2), (0, 1, 2)]
    tables, _ = arena.pair([0, 1, 2], 3, {}, history, "s", rematch_ok=True)
    (table,) = tables
    assert table.index(0) != 0
    assert table.index(1) != 1
    assert table.index(2) != 2


def test_max_tables_caps_the_tables_formed() -> None:
    tables, waiting = arena.pair(range(6), 2, {}, [], "s", rematch_ok=True, max_tables=1)
    assert len(tables) == 1
    assert len(waiting) == 4


def test_ties_in_score_are_broken_by_the_seeded_lots_not_the_order_of_entry() -> None:
    orders = {tuple(arena.ranked(range(8), {}, seed)) for seed in ("a", "b", "c", "d")}
    assert len(orders) == 4
    assert arena.ranked(range(8), {}, "a") == arena.ranked(list(reversed(range(8))), {}, "a")


@settings(max_examples=60, deadline=None)
@given(
    entrants=st.integers(2, 12),
    size=st.integers(2, 4),
    games=st.integers(1, 40),
    seed=st.text(max_size=8),
    draw=st.integers(0, 2**32),
)
def test_a_simulated_arena_keeps_every_promise(
    entrants: int, size: int, games: int, seed: str, draw: int
) -> None:
    """Plays an arena game by game: one random table of those in progress finishes, its
    entrants are freed and the free are paired. Each pairing seats each free entrant at most
    once, none busy, never twice in one table; a table repeats a pair of the last tables only
    when nothing else was in progress; the same inputs give the same tables."""
    if entrants < size:
        return
    rng = random.Random(draw)
    scores = dict.fromkeys(range(entrants), 0.0)
    history: list[Table] = []
    running: list[Table] = []
    for _ in range(games):
        busy = {e for t in running for e in t}
        free = [e for e in range(entrants) if e not in busy]
        last = arena.last_tables(history)
        tables, waiting = arena.pair(free, size, scores, history, seed, rematch_ok=not running)
        again, _ = arena.pair(free, size, scores, history, seed, rematch_ok=not running)
        assert again == tables
        seated = [e for t in tables for e in t]
        assert len(seated) == len(set(seated))
        assert set(seated) | set(waiting) == set(free)
        assert not set(seated) & set(waiting)
        assert all(len(t) == size for t in tables)
        if running:
            for table in tables:
                for a, b in combinations(table, 2):
                    assert a not in last.get(b, ())
                    assert b not in last.get(a, ())
        history.extend(tables)
        running.extend(tables)
        if not running:
            break
        done = running.pop(rng.randrange(len(running)))
        for place, entrant in enumerate(rng.sample(done, len(done)), start=1):
            scores[entrant] += size - place


@pytest.mark.parametrize(("size", "entrants"), [(2, 6), (2, 7), (3, 7), (4, 9)])
def test_seats_stay_balanced_over_a_long_arena(size: int, entrants: int) -> None:
    """Over 100 pairings nobody sits in one seat more than twice as often as in another."""
    scores = dict.fromkeys(range(entrants), 0.0)
    history: list[Table] = []
    rng = random.Random(7)
    for _ in range(100):
        tables, _ = arena.pair(range(entrants), size, scores, history, "seats", rematch_ok=True)
        for table in tables:
            scores[table[rng.randrange(size)]] += 1
        history.extend(tables)
    counts = arena.seat_counts(history, size)
    assert all(max(seats) - min(seats) <= 2 for seats in counts.values())
