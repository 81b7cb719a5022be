"""Tie-breaks: how a tournament ranks entrants equal on points, as pure functions.

The definitions follow FIDE's tie-break regulations (FIDE Handbook C.07), generalized to
tables of k seats, where place p earns k - p points (docs/reference/tournaments.md states
them and the order of each format):

- the *result* of entrant e against a table mate o in one game is 1 when e placed better,
  1/2 when they shared a place, 0 when e placed worse (for k = 2: a chess game's score);
- *Buchholz* (Swiss): the sum over e's rounds of the round's contribution: the mean final
  points of its table mates that round (k = 2: the opponent's points); a round e sat out (a
  bye) contributes e's own final points, FIDE's "dummy opponent";
- *median Buchholz*: Buchholz without the highest and the lowest contribution (a Swiss of
  fewer than `MEDIAN_ROUNDS` rounds: without the lowest only, Buchholz cut-1); byes are cut
  first;
- *Sonneborn-Berger*: the sum over e's games of, for each table mate o, e's result against
  o times o's final points, divided by k - 1 (k = 2: the sum of the points of the beaten
  opponents, half of the drawn ones');
- *direct encounter*: among a group still tied on everything before it, the sum over the
  others of the group of e's mean result against each; applied only when every two of the
  group have shared a table (null otherwise);
- *wins* (arena): the games e placed first in (a shared first counts);
- *lot*: e's place in a drawing of lots seeded by the tournament's seed (a hash of the seed
  and the entrant's index, never the order of entry itself), which ends every tie.

Values are computed in exact fractions, so a ranking never depends on the order sums run in.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

Format = Literal["round_robin", "swiss", "duplicate", "knockout", "arena"]
Criterion = Literal[
    "score",
    "stage",
    "points",
    "wins",
    "buchholz",
    "median_buchholz",
    "sonneborn_berger",
    "direct_encounter",
    "lot",
]

ORDER: Mapping[str, tuple[Criterion, ...]] = {
    "swiss": (
        "points",
        "buchholz",
        "median_buchholz",
        "sonneborn_berger",
        "direct_encounter",
        "lot",
    ),
    "round_robin": ("points", "sonneborn_berger", "direct_encounter", "lot"),
    "duplicate": ("score", "points", "sonneborn_berger", "lot"),
    "knockout": ("stage", "points", "lot"),
    "arena": ("points", "wins", "sonneborn_berger", "lot"),
}
"""Each format's ranking: its criteria in order, each higher first but the lot (lower first)."""

MEDIAN_ROUNDS = 5
"""A Swiss of at least this many rounds cuts the highest and the lowest Buchholz contribution
(median); a shorter one only the lowest (cut-1)."""


@dataclass(frozen=True)
class Played:
    """One recorded game: its round, its table (entrants in seat order) and their places."""

    round: int
    table: tuple[int, ...]
    places: tuple[int, ...]


@dataclass(frozen=True)
class Field:
    """What the tie-breaks read of a tournament: its games, byes and what its format adds."""

    entrants: int
    table_size: int
    format: Format
    seed: str
    rounds: int
    """Swiss: the rounds it plays (chooses median or cut-1)."""
    games: Sequence[Played]
    byes: Mapping[int, Sequence[int]] = field(default_factory=dict)
    """The byes of each completed round, by round."""
    games_per_bye: int = 1
    """How many games a bye stands for (a Swiss or knockout table's `games_per_table`): a bye
    earns a win's k - 1 points for each."""
    scores: Mapping[int, Fraction] = field(default_factory=dict)
    """Duplicate: each entrant's seat-by-seat score."""
    stages: Mapping[int, int] = field(default_factory=dict)
    """Knockout: how many completed rounds each entrant came through (the winner: all)."""


@dataclass(frozen=True)
class Values:
    """One entrant's tie-break values (None: not a criterion of its format, or not applied)."""

    points: Fraction
    buchholz: Fraction | None = None
    median_buchholz: Fraction | None = None
    sonneborn_berger: Fraction | None = None
    direct_encounter: Fraction | None = None
    lot: int = 0


def result(mine: int, theirs: int) -> Fraction:
    """Returns the result of a place against another's: 1 better, 1/2 shared, 0 worse."""
    if mine < theirs:
        return Fraction(1)
    return Fraction(1, 2) if mine == theirs else Fraction(0)


def points(data: Field) -> list[Fraction]:
    """Returns each entrant's points: k - place per game, k - 1 per game a bye of a completed
    round stands for."""
    k = data.table_size
    totals = [Fraction(0)] * data.entrants
    for game in data.games:
        for entrant, place in zip(game.table, game.places, strict=True):
            totals[entrant] += k - place
    for byes in data.byes.values():
        for entrant in byes:
            totals[entrant] += (k - 1) * data.games_per_bye
    return totals


def wins(data: Field) -> list[Fraction]:
    """Returns how many games each entrant placed first in (a shared first counts)."""
    totals = [Fraction(0)] * data.entrants
    for game in data.games:
        for entrant, place in zip(game.table, game.places, strict=True):
            totals[entrant] += place == 1
    return totals


def lots(entrants: int, seed: str) -> list[int]:
    """Returns each entrant's place (from 1) in the drawing of lots seeded by `seed`."""
    drawn = sorted(
        range(entrants), key=lambda e: hashlib.sha256(f"{seed}:lot:{e}".encode()).digest()
    )
    places = [0] * entrants
    for place, entrant in enumerate(drawn, start=1):
        places[entrant] = place
    return places


def buchholz(data: Field, totals: Sequence[Fraction]) -> tuple[list[Fraction], list[Fraction]]:
    """Returns each entrant's Buchholz and median (or cut-1) Buchholz."""
    mates: dict[tuple[int, int], set[int]] = {}
    for game in data.games:
        for entrant in game.table:
            mates.setdefault((entrant, game.round), set()).update(
                other for other in game.table if other != entrant
            )
    contributions: list[list[tuple[bool, Fraction]]] = [[] for _ in range(data.entrants)]
    for (entrant, _), others in sorted(mates.items()):
        mean = sum((totals[o] for o in others), Fraction(0)) / len(others)
        contributions[entrant].append((True, mean))
    for byes in data.byes.values():
        for entrant in byes:
            contributions[entrant].append((False, totals[entrant]))
    full, cut = [], []
    for own in contributions:
        full.append(sum((value for _, value in own), Fraction(0)))
        ranked = sorted(own)  # byes (False) first, then the lowest
        kept = ranked[1:-1] if data.rounds >= MEDIAN_ROUNDS else ranked[1:]
        cut.append(sum((value for _, value in kept), Fraction(0)))
    return full, cut


def sonneborn_berger(data: Field, totals: Sequence[Fraction]) -> list[Fraction]:
    """Returns each entrant's Sonneborn-Berger score."""
    values = [Fraction(0)] * data.entrants
    for game in data.games:
        seats = list(zip(game.table, game.places, strict=True))
        for entrant, place in seats:
            for other, theirs in seats:
                if other != entrant:
                    values[entrant] += result(place, theirs) * totals[other] / (len(seats) - 1)
    return values


def encounters(data: Field) -> dict[tuple[int, int], list[Fraction]]:
    """Returns the results of each entrant against each table mate, game by game."""
    met: dict[tuple[int, int], list[Fraction]] = {}
    for game in data.games:
        seats = list(zip(game.table, game.places, strict=True))
        for entrant, place in seats:
            for other, theirs in seats:
                if other != entrant:
                    met.setdefault((entrant, other), []).append(result(place, theirs))
    return met


def direct_encounter(
    group: Sequence[int], met: Mapping[tuple[int, int], Sequence[Fraction]]
) -> dict[int, Fraction] | None:
    """Returns each member's direct encounter within `group`, None unless every two met."""
    if any((a, b) not in met for a in group for b in group if a != b):
        return None
    return {
        a: sum((sum(met[a, b], Fraction(0)) / len(met[a, b]) for b in group if b != a), Fraction(0))
        for a in group
    }


def rank(data: Field) -> tuple[list[int], list[Values]]:
    """Returns the entrants best first under their format's `ORDER`, and each one's values."""
    totals = points(data)
    drawn = lots(data.entrants, data.seed)
    order = ORDER[data.format]
    keys: dict[str, Sequence[Fraction | None]] = {"points": totals}
    if "buchholz" in order:
        keys["buchholz"], keys["median_buchholz"] = buchholz(data, totals)
    if "sonneborn_berger" in order:
        keys["sonneborn_berger"] = sonneborn_berger(data, totals)
    if "score" in order:
        keys["score"] = [data.scores.get(e, Fraction(0)) for e in range(data.entrants)]
    if "stage" in order:
        keys["stage"] = [Fraction(data.stages.get(e, 0)) for e in range(data.entrants)]
    if "wins" in order:
        keys["wins"] = wins(data)
    encounter: list[Fraction | None] = [None] * data.entrants
    ranked = _ranked(data, order, keys, encounter, drawn)
    values = [
        Values(
            points=totals[e],
            buchholz=_at(keys, "buchholz", e),
            median_buchholz=_at(keys, "median_buchholz", e),
            sonneborn_berger=_at(keys, "sonneborn_berger", e),
            direct_encounter=encounter[e],
            lot=drawn[e],
        )
        for e in range(data.entrants)
    ]
    return ranked, values


def _at(keys: Mapping[str, Sequence[Fraction | None]], name: str, entrant: int) -> Fraction | None:
    """Returns an entrant's value of the criterion `name`, None when its format has none."""
    return keys[name][entrant] if name in keys else None


def _ranked(
    data: Field,
    order: Sequence[Criterion],
    keys: Mapping[str, Sequence[Fraction | None]],
    encounter: list[Fraction | None],
    drawn: Sequence[int],
) -> list[int]:
    """Returns the entrants sorted by `order` (where direct encounter, if any, comes last but
    the lot); fills `encounter` for the tied groups it applies to."""
    criteria = [name for name in order if name not in ("direct_encounter", "lot")]

    def base(entrant: int) -> tuple[Fraction, ...]:
        return tuple(-(keys[name][entrant] or Fraction(0)) for name in criteria)

    if "direct_encounter" in order:
        met = encounters(data)
        groups: dict[tuple[Fraction, ...], list[int]] = {}
        for entrant in range(data.entrants):
            groups.setdefault(base(entrant), []).append(entrant)
        for group in groups.values():
            found = direct_encounter(group, met) if len(group) > 1 else None
            for entrant, value in (found or {}).items():
                encounter[entrant] = value
    return sorted(
        range(data.entrants),
        key=lambda e: (base(e), -(encounter[e] or Fraction(0)), drawn[e]),
    )
