"""Swiss pairing after the Dutch system (FIDE Handbook C.04.3), for tables of k seats.

A pure function of the field, its history and the tournament's seed (docs/reference/
tournaments.md states the rules):

1. Entrants are ranked by points, then by a pairing number drawn from the seed (a hash per
   entrant, fixed for the tournament): the score groups are the runs of equal points.
2. Byes (n mod k a round): the lowest ranked of the entrants with the fewest byes so far, so
   nobody gets a second bye while another has none; a bye scores a win, k - 1 points.
3. Tables are filled from the top: the highest ranked entrant left sits with the entrants at
   1/k, 2/k, ... of its score group (k = 2: the top half meets the bottom half, S1 against
   S2), an entrant left over floats down to the next group. No two entrants share a table
   twice while a rematch-free round exists: the search backtracks (up to `SEARCH_BUDGET`
   steps) before it accepts a rematch; then it seats greedily with the fewest repeated pairs
   and swaps entrants between tables (nearest tables first) while a swap repeats fewer. It first
   also keeps apart two entrants that must sit in the same seat (`must_sit`, FIDE's
   absolute colour preference), and drops that wish before it accepts a rematch.
4. Seats ("colours") are balanced: the members of a table pick seats in the order of the
   strength of their preference (how unevenly they have sat so far), then rank; each takes
   the free seat it has taken least, else not the one it took last, else the first.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from itertools import combinations

Table = tuple[int, ...]

SEARCH_BUDGET = 20_000
"""How many partial tables the search tries before it settles for a round with rematches."""


class _Budget:
    """Counts the steps of one search."""

    def __init__(self, steps: int) -> None:
        self.left = steps

    def spend(self) -> bool:
        """Returns whether a step was left (and takes it)."""
        self.left -= 1
        return self.left >= 0


def pairing_numbers(entrants: int, seed: str) -> list[bytes]:
    """Returns each entrant's pairing number, the order within a score group (lower first)."""
    return [hashlib.sha256(f"{seed}:pairing:{e}".encode()).digest() for e in range(entrants)]


def pair(
    entrants: int,
    table_size: int,
    points: Mapping[int, float],
    history: Sequence[Table],
    byes_had: Mapping[int, int],
    seed: str,
) -> tuple[list[Table], list[int]]:
    """Returns one round's tables (entrants in seat order, best table first) and its byes.

    `history` lists every game played so far (each table in seat order), `byes_had` how many
    byes each entrant has had.
    """
    numbers = pairing_numbers(entrants, seed)
    order = sorted(range(entrants), key=lambda e: (-points.get(e, 0.0), numbers[e]))
    byes = choose_byes(order, entrants % table_size, byes_had)
    pool = [e for e in order if e not in byes]
    met = {frozenset(p) for table in history for p in combinations(table, 2)}
    seats = seat_counts(entrants, table_size, history)
    last = {e: seat for table in history for seat, e in enumerate(table)}
    scores = {e: points.get(e, 0.0) for e in range(entrants)}
    musts = must_sit(seats)
    found = _search(pool, table_size, scores, met, musts, _Budget(SEARCH_BUDGET))
    if found is None:
        found = _search(pool, table_size, scores, met, {}, _Budget(SEARCH_BUDGET))
    if found is None:
        found = _fewer_by_swaps(_fewest_rematches(pool, table_size, scores, met), met)
    groups = found
    rank = {e: i for i, e in enumerate(order)}
    return [assign_seats(g, seats, last, rank) for g in groups], byes


def choose_byes(order: Sequence[int], count: int, byes_had: Mapping[int, int]) -> list[int]:
    """Returns `count` entrants for a bye: the lowest ranked among those with fewest byes."""
    if count == 0:
        return []
    lowest_first = list(reversed(order))
    chosen = sorted(lowest_first, key=lambda e: byes_had.get(e, 0))[:count]
    return sorted(chosen, key=order.index)


def seat_counts(entrants: int, table_size: int, history: Sequence[Table]) -> list[list[int]]:
    """Returns how often each entrant has sat in each seat."""
    counts = [[0] * table_size for _ in range(entrants)]
    for table in history:
        for seat, entrant in enumerate(table):
            if seat < table_size:
                counts[entrant][seat] += 1
    return counts


def must_sit(counts: Sequence[Sequence[int]]) -> dict[int, int]:
    """Returns the entrants with an absolute seat preference and the seat: those that have
    sat in some seat at least twice more than in another, and have one least-used seat
    (k = 2: FIDE's absolute colour preference, a colour difference of 2)."""
    musts: dict[int, int] = {}
    for entrant, seats in enumerate(counts):
        least = min(seats)
        if max(seats) - least >= 2 and seats.count(least) == 1:
            musts[entrant] = seats.index(least)
    return musts


def assign_seats(
    members: Sequence[int],
    counts: Sequence[Sequence[int]],
    last: Mapping[int, int],
    rank: Mapping[int, int],
) -> Table:
    """Returns the table `members` in seat order, each seat balanced as the module says."""
    size = len(members)
    strength = {e: max(counts[e]) - min(counts[e]) for e in members}
    free = list(range(size))
    table = [0] * size
    for entrant in sorted(members, key=lambda e: (-strength[e], rank[e])):
        seat = min(free, key=lambda s: (counts[entrant][s], last.get(entrant) == s, s))
        free.remove(seat)
        table[seat] = entrant
    return tuple(table)


def _search(
    pool: Sequence[int],
    size: int,
    scores: Mapping[int, float],
    met: set[frozenset[int]],
    musts: Mapping[int, int],
    budget: _Budget,
) -> list[Table] | None:
    """Returns the first split of `pool` into tables in preference order with no rematch and
    no two entrants that must sit in the same seat (`musts`), None when there is none (or
    the budget ran out)."""
    if not pool:
        return []
    top, rest = pool[0], list(pool[1:])
    for mates in _mates(top, rest, size, scores, met, musts, budget):
        left = [e for e in rest if e not in mates]
        found = _search(left, size, scores, met, musts, budget)
        if found is not None:
            return [(top, *mates), *found]
        if budget.left < 0:
            return None
    return None


def _mates(
    top: int,
    rest: Sequence[int],
    size: int,
    scores: Mapping[int, float],
    met: set[frozenset[int]],
    musts: Mapping[int, int],
    budget: _Budget,
    chosen: tuple[int, ...] = (),
) -> Iterator[tuple[int, ...]]:
    """Yields the sets of table mates of `top` that meet nobody again and need no seat another
    needs, best first."""
    if len(chosen) == size - 1:
        yield chosen
        return
    table = (top, *chosen)
    for candidate in _preferred(top, rest, size, scores, len(chosen) + 1):
        if candidate in chosen or any(frozenset((candidate, t)) in met for t in table):
            continue
        need = musts.get(candidate)
        if need is not None and any(musts.get(t) == need for t in table):
            continue
        if chosen and _place(rest, candidate) < _place(rest, chosen[-1]):
            continue  # each set once: mates in the order of the pool
        if not budget.spend():
            return
        yield from _mates(top, rest, size, scores, met, musts, budget, (*chosen, candidate))


def _preferred(
    top: int, rest: Sequence[int], size: int, scores: Mapping[int, float], slot: int
) -> list[int]:
    """Returns the candidates for the `slot`th mate of `top`, best first: its own score group
    before lower ones, and within a group the nearest to the slot's place (1/k of the group
    for the first mate, 2/k for the second...)."""
    group = {e: i for i, e in enumerate(e for e in rest if scores[e] == scores[top])}
    span = (len(group) + 1) // size
    ideal = slot * span - 1
    place = {e: i for i, e in enumerate(rest)}

    def key(e: int) -> tuple[float, int, int]:
        if e in group:
            return (0.0, abs(group[e] - ideal), place[e])
        return (scores[top] - scores[e], 0, place[e])

    return sorted(rest, key=key)


def _place(pool: Sequence[int], entrant: int) -> int:
    """Returns the place of `entrant` in `pool` (pools are ranked lists of distinct entrants)."""
    return pool.index(entrant)


def _fewest_rematches(
    pool: Sequence[int], size: int, scores: Mapping[int, float], met: set[frozenset[int]]
) -> list[Table]:
    """Returns tables from the top with, for each, the mates that repeat the fewest pairs
    (then in preference order): the round when no rematch-free one was found."""
    left = list(pool)
    tables: list[Table] = []
    while left:
        top, rest = left[0], left[1:]
        chosen: list[int] = []
        for slot in range(1, size):
            table = [top, *chosen]
            preferred = [e for e in _preferred(top, rest, size, scores, slot) if e not in chosen]
            pick = min(
                enumerate(preferred),
                key=lambda item: (sum(frozenset((item[1], t)) in met for t in table), item[0]),
            )[1]
            chosen.append(pick)
        tables.append((top, *chosen))
        left = [e for e in rest if e not in chosen]
    return tables


def _rematches(table: Sequence[int], met: set[frozenset[int]]) -> int:
    """Returns how many pairs of `table` have met before."""
    return sum(frozenset(pair) in met for pair in combinations(table, 2))


def _fewer_by_swaps(tables: list[Table], met: set[frozenset[int]]) -> list[Table]:
    """Returns `tables` after swapping two entrants of two tables (the nearest tables, the
    first members first) while a swap lowers the repeated pairs, at most `SEARCH_BUDGET`
    swaps looked at."""
    current = [list(table) for table in tables]
    looked = 0
    improved = True
    while improved and looked < SEARCH_BUDGET:
        improved = False
        for gap in range(1, len(current)):
            for i in range(len(current) - gap):
                first, second = current[i], current[i + gap]
                before = _rematches(first, met) + _rematches(second, met)
                if before == 0:
                    continue
                for a in range(len(first)):
                    for b in range(len(second)):
                        looked += 1
                        first[a], second[b] = second[b], first[a]
                        if _rematches(first, met) + _rematches(second, met) < before:
                            improved = True
                            break
                        first[a], second[b] = second[b], first[a]
                    if improved:
                        break
                if improved:
                    break
            if improved:
                break
    return [tuple(table) for table in current]
