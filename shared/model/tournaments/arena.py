"""Arena pairing: who sits at which table when entrants become free, as pure functions.

An arena (the Lichess arena, for cards) pairs its entrants as they become free, for a fixed
duration, rather than round by round. Lichess' arena pairing (lila's `AntmaPairing`) ranks
the waiting players, forbids a pair that just played together, and matches players close
in rank; this module does the same for tables of k seats:

- the free entrants are ranked by score, highest first, ties by a drawing of lots seeded by
  the tournament's seed (never the order of entry);
- when they do not fill whole tables, those who have played the most games wait (ties: the
  lowest ranked), so that the games played stay level;
- tables are formed from the top of the ranking down, each from the highest ranked entrant
  left and the next ones in rank order with whom nobody at the table sat at its last table
  (no immediate rematch); a table that cannot be filled so is formed anyway with the next
  ones in rank order only when `rematch_ok` (nothing else is in progress, so waiting would
  bring nobody new), else its first entrant waits for the next pairing;
- seats are balanced: at each table the entrant whose seat counts are the most uneven
  chooses first, and takes the seat it sat in least (ties: not its last seat, then the
  lowest), so an entrant that sat first more often sits later.

Same inputs, same tables: the pairing is deterministic given the tournament's seed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

Table = tuple[int, ...]


def lot_key(seed: str, entrant: int) -> bytes:
    """Returns an entrant's place in the arena's drawing of lots (lower first)."""
    return hashlib.sha256(f"{seed}:arena:{entrant}".encode()).digest()


def ranked(free: Sequence[int], scores: Mapping[int, float], seed: str) -> list[int]:
    """Returns `free` best first: by score, then by the seeded drawing of lots."""
    return sorted(set(free), key=lambda e: (-scores.get(e, 0.0), lot_key(seed, e)))


def last_tables(history: Sequence[Table]) -> dict[int, Table]:
    """Returns each entrant's last table in `history` (tables in the order they were formed)."""
    last: dict[int, Table] = {}
    for table in history:
        for entrant in table:
            last[entrant] = table
    return last


def seat_counts(history: Sequence[Table], table_size: int) -> dict[int, list[int]]:
    """Returns how often each entrant of `history` has sat in each seat."""
    counts: dict[int, list[int]] = {}
    for table in history:
        for seat, entrant in enumerate(table):
            if seat < table_size:
                counts.setdefault(entrant, [0] * table_size)[seat] += 1
    return counts


def _conflict(a: int, b: int, last: Mapping[int, Table]) -> bool:
    """Returns whether `a` and `b` sat at each other's last table."""
    return b in last.get(a, ()) or a in last.get(b, ())


def pair(
    free: Sequence[int],
    table_size: int,
    scores: Mapping[int, float],
    history: Sequence[Table],
    seed: str,
    *,
    rematch_ok: bool,
    max_tables: int | None = None,
) -> tuple[list[Table], list[int]]:
    """Returns the tables to start now (entrants in seat order, best ranked table first) and
    the free entrants who wait, best ranked first, as the module says.

    `history` lists every table formed so far, in order (it gives each entrant's last table,
    games played and seat counts); `max_tables` caps the tables formed (None: no cap).
    """
    order = ranked(free, scores, seed)
    position = {e: i for i, e in enumerate(order)}
    last = last_tables(history)
    counts = seat_counts(history, table_size)
    played = {e: sum(c) for e, c in counts.items()}
    tables_wanted = len(order) // table_size if table_size > 0 else 0
    if max_tables is not None:
        tables_wanted = min(tables_wanted, max(0, max_tables))
    seated_count = tables_wanted * table_size
    by_games = sorted(order, key=lambda e: (-played.get(e, 0), -position[e]))
    waiting = set(by_games[: len(order) - seated_count])
    pool = [e for e in order if e not in waiting]
    tables: list[Table] = []
    while len(pool) >= table_size:
        members = [pool[0]]
        for candidate in pool[1:]:
            if len(members) == table_size:
                break
            if not any(_conflict(candidate, m, last) for m in members):
                members.append(candidate)
        if len(members) < table_size:
            if not rematch_ok:
                waiting.add(pool.pop(0))
                continue
            members = pool[:table_size]
        tables.append(seat(members, counts, last, position, table_size))
        pool = [e for e in pool if e not in members]
    waiting.update(pool)
    return tables, sorted(waiting, key=position.__getitem__)


def seat(
    members: Sequence[int],
    counts: Mapping[int, Sequence[int]],
    last: Mapping[int, Table],
    position: Mapping[int, int],
    table_size: int,
) -> Table:
    """Returns `members` in seat order: the most uneven seat counts choose first (ties: the
    better ranked), each the seat it sat in least (ties: not its last seat, then the lowest)."""
    zero = [0] * table_size

    def own(e: int) -> Sequence[int]:
        return counts.get(e, zero)

    def last_seat(e: int) -> int | None:
        table = last.get(e)
        return table.index(e) if table is not None else None

    free_seats = list(range(len(members)))
    table = [0] * len(members)
    for entrant in sorted(members, key=lambda e: (min(own(e)) - max(own(e)), position[e])):
        chosen = min(free_seats, key=lambda s: (own(entrant)[s], last_seat(entrant) == s, s))
        free_seats.remove(chosen)
        table[chosen] = entrant
    return tuple(table)
