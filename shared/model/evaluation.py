"""Candidate evaluation on duplicate deals: who sits where, and what a game scores.

An evaluation asks whether a candidate (A) is better than a baseline (B) at a table of `n`
seats. It plays units, and each unit is one deal played `n` times:

- game `r` of a unit seats A alone in seat `(n - r) % n` and B in every other seat (the
  tournament's `rotations` of the table A, B, ..., B), so that over its `n` games A sits
  once in every seat and every game of the unit is dealt the same cards. With `n = 2` a unit
  is the familiar pair: the deal played twice with the seats swapped;
- a game scores for A, in half points, 2 for each B seat it places ahead of, 1 for each it
  ties and 0 for each that places ahead of it: `2 * (n - 1)` at most;
- the unit scores the sum over its `n` games, from 0 to `2 * m` with `m = n * (n - 1)`
  pairwise comparisons of A with a B seat (`m = 2` for a pair: Fishtest's pentanomial).

The statistics (`shared.model.sprt`) take the units' scores as `2m + 1` bins and model the
expected score of one comparison as logistic Elo: the Elo an evaluation reports is A's over
one B seat at a table where every other seat plays B. The unit is the independent sample, so
whatever links the games of a unit (the shared deal, seat advantages, B seats helping each
other) is inside the model, not a breach of it. When A and B are one strategy, the rotation
makes A's expected unit score exactly `m`, half of the most, whatever the seats are worth.

Unit `k` of an evaluation seeded `s` is dealt from `deal_seed(s, k)`: the seed a duplicate
tournament's schedule gives its `k`th deal (`shared.model.tournaments.formats.game_seed`). A
hosted evaluation keys it as every platform game (`shared.model.deal_keys.derive`); a local
one deals from it as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from shared.model.tournaments.formats import game_seed, rotations

Role = Literal["candidate", "baseline"]
"""Who plays a seat: the candidate (A) or the baseline (B)."""
CANDIDATE: Role = "candidate"
BASELINE: Role = "baseline"


def comparisons(table_size: int) -> int:
    """Returns m, the pairwise comparisons of A with a B seat in one unit: n (n - 1)."""
    return table_size * (table_size - 1)


def bins(table_size: int) -> int:
    """Returns how many unit scores there are (0 to 2m half points): 2m + 1."""
    return 2 * comparisons(table_size) + 1


def seatings(table_size: int) -> list[tuple[Role, ...]]:
    """Returns the role of each seat in each game of a unit, game by game: A alone, rotated
    through every seat (game `r` seats A at `(n - r) % n`)."""
    return [
        tuple(CANDIDATE if seat == 0 else BASELINE for seat in turn)
        for turn in rotations(tuple(range(table_size)))
    ]


def candidate_seat(roles: Sequence[Role]) -> int:
    """Returns the seat A plays among a game's `roles`."""
    return list(roles).index(CANDIDATE)


def half_points(places: Sequence[int], seat: int) -> int:
    """Returns what a game with `places` (1 best, ties sharing) scores for A in `seat`: 2 per
    other seat placed behind it, 1 per seat tied with it, 0 per seat ahead of it."""
    mine = places[seat]
    return sum(
        2 if mine < place else 1 if mine == place else 0
        for other, place in enumerate(places)
        if other != seat
    )


def deal_seed(seed: str, unit: int) -> str:
    """Returns the seed of unit `unit`'s deal in an evaluation seeded `seed`."""
    return game_seed(seed, 1, unit)
