"""Tournament formats: which entrants sit at which tables, as pure functions.

Entrants are indices 0..n-1 into the tournament's field. A table lists entrants in seat
order. Every function is deterministic: the same field, history and seed give the same
tables, so a tournament replays identically wherever it runs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from itertools import combinations

from msgspec import Struct

from shared.model.tournaments import swiss

Table = tuple[int, ...]


class PlannedGame(Struct, frozen=True):
    """One game of a round: its table (entrants in seat order) and the seed of its deal."""

    table: Table
    seed: str
    deal: str = ""
    """Games sharing a `deal` label were dealt the same cards (duplicate format)."""


def game_seed(tournament_seed: str, round_no: int, index: int) -> str:
    """Returns the seed of the `index`th game of round `round_no`."""
    return hashlib.sha256(f"{tournament_seed}:{round_no}:{index}".encode()).hexdigest()[:16]


def rotations(table: Table) -> list[Table]:
    """Returns every cyclic rotation of `table`'s seats, the table itself first."""
    return [table[i:] + table[:i] for i in range(len(table))]


def round_robin(
    entrants: int, table_size: int, games_per_table: int, seed: str
) -> list[PlannedGame]:
    """Returns every combination of entrants at a table, each played `games_per_table` times.

    The seats rotate from one game of a table to the next, so every entrant of a table
    sits in every seat when `games_per_table` is a multiple of the table size.
    """
    games: list[PlannedGame] = []
    for table in combinations(range(entrants), table_size):
        turns = rotations(table)
        for repeat in range(games_per_table):
            games.append(PlannedGame(turns[repeat % table_size], game_seed(seed, 1, len(games))))
    return games


def duplicate_tables(entrants: int, table_size: int) -> int:
    """Returns how many tables play each deal of a duplicate tournament: as many as the
    field fills (0 or 1: the field is too small for duplicate)."""
    return entrants // table_size if table_size > 0 else 0


def duplicate(entrants: int, table_size: int, cycles: int, seed: str) -> list[PlannedGame]:
    """Returns `cycles` cycles of `entrants` deals, each deal played with the same cards at
    `duplicate_tables` tables of disjoint entrants, so that nobody plays a deal twice.

    In deal j of cycle c, the entrant e sits at position (o_c(e) + j) mod n of the n
    positions (n = entrants; o_c an order of the field: the entrants' own in the first
    cycle, then a fixed shuffle per cycle that varies table mates and the entrants compared
    seat by seat); position p is seat p mod k of table p // k (k = table size), and the
    positions past the last full table sit the deal out. Over a cycle every entrant takes
    every position once: it plays each seat n // k times and sits out n mod k deals.
    """
    tables = duplicate_tables(entrants, table_size)
    if tables < 2:
        return []
    games: list[PlannedGame] = []
    for cycle in range(cycles):
        order = _cycle_order(entrants, cycle)
        for shift in range(entrants):
            deal = cycle * entrants + shift
            deal_seed = game_seed(seed, 1, deal)
            seated = [0] * (tables * table_size)
            for rank, entrant in enumerate(order):
                position = (rank + shift) % entrants
                if position < len(seated):
                    seated[position] = entrant
            games.extend(
                PlannedGame(
                    tuple(seated[t * table_size : (t + 1) * table_size]), deal_seed, str(deal)
                )
                for t in range(tables)
            )
    return games


def _cycle_order(entrants: int, cycle: int) -> list[int]:
    """Returns the order of the field in a duplicate cycle: its own first, then a shuffle
    fixed by the field's size and the cycle (no seed: the tables are public anyway)."""
    if cycle == 0:
        return list(range(entrants))
    return sorted(
        range(entrants), key=lambda e: hashlib.sha256(f"duplicate:{cycle}:{e}".encode()).digest()
    )


def swiss_round(
    entrants: int,
    table_size: int,
    round_no: int,
    scores: Mapping[int, float],
    history: Sequence[Table],
    byes_had: Mapping[int, int],
    seed: str,
    games_per_table: int = 1,
) -> tuple[list[PlannedGame], list[int]]:
    """Returns one Swiss round's games and the entrants with a bye: the tables of
    `shared.model.tournaments.swiss.pair` (score groups, no rematch while one can be
    avoided, seats balanced), each played `games_per_table` times with its seats rotating."""
    tables, byes = swiss.pair(entrants, table_size, scores, history, byes_had, seed)
    return _played(tables, round_no, seed, games_per_table), byes


def _played(
    tables: Sequence[Table], round_no: int, seed: str, games_per_table: int
) -> list[PlannedGame]:
    """Returns the games of a round's tables: each `games_per_table` times, seats rotating."""
    games: list[PlannedGame] = []
    for table in tables:
        turns = rotations(table)
        for repeat in range(games_per_table):
            games.append(
                PlannedGame(turns[repeat % len(table)], game_seed(seed, round_no, len(games)))
            )
    return games


def knockout_round(
    alive: Sequence[int], table_size: int, round_no: int, seed: str, games_per_table: int = 1
) -> tuple[list[PlannedGame], list[int]]:
    """Returns one knockout round: tables of the entrants still in, each playing
    `games_per_table` games with its seats rotating, and those with a bye.

    When the field does not divide, the last entrants (by seeding order) get byes; a table
    of the remaining entrants is formed only when at least two are left.
    """
    tables: list[Table] = []
    byes: list[int] = []
    pool = list(alive)
    while pool:
        table, pool = tuple(pool[:table_size]), pool[table_size:]
        if len(table) < 2:
            byes.extend(table)
            break
        tables.append(table)
    return _played(tables, round_no, seed, games_per_table), byes


def met_pairs(tables: Sequence[Table]) -> set[frozenset[int]]:
    """Returns every pair of entrants that have shared a table."""
    return {frozenset(pair) for table in tables for pair in combinations(table, 2)}
