"""Standings and ratings computed from a tournament's recorded games.

Points: at a table of k seats, place p earns k - p points (a two-player win 1, a loss 0;
shared places earn the same), and a bye earns a win's k - 1. Ratings: OpenSkill's
Plackett-Luce model on the full finishing order of every game, in the order the games
were scheduled, per game and per bot version; leaderboards sort by the conservative
estimate mu - 3 sigma. A duplicate tournament ranks by its `score` first: each game's
points minus the mean points of the same seat on the same deal at the deal's other tables,
as duplicate bridge compares a board across tables, so that the luck of a deal cancels.
Games without decisions (Beggar-my-neighbour) are never rated.
Ratings fold the games in schedule order (round, then table), not in the order they
finished, so a tournament rates the same in-process and on concurrent workers. The
leaderboard takes a tournament's games in the same order (`shared.ports.views.fold`: a
round's games when the round completes, table by table), so from fresh ratings the
standings' ratings and the leaderboard's are the same floats for the same games.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction

import msgspec
from openskill.models import PlackettLuce

from shared.catalog import get_game
from shared.model.tournaments.model import (
    TournamentState,
    _results,
    duplicate_scores,
    ranked,
    tiebreak_field,
)
from shared.model.tournaments.tiebreaks import Values


class Rating(msgspec.Struct, frozen=True):
    """An OpenSkill rating: mean, uncertainty and the conservative estimate mu - 3 sigma."""

    mu: float
    sigma: float

    @property
    def ordinal(self) -> float:
        """Returns mu - 3 sigma."""
        return self.mu - 3 * self.sigma


class Tiebreaks(msgspec.Struct, frozen=True, kw_only=True):
    """An entrant's tie-break values; null: not a criterion of the tournament's format (see
    `order` in the standings), or, for direct encounter, not applied (no tie, or not every two
    of the tied entrants met)."""

    buchholz: float | None = None
    """Swiss: the sum over its rounds of the mean final points of its table mates (a bye:
    its own points)."""
    median_buchholz: float | None = None
    """Swiss: Buchholz without the highest and the lowest round (fewer than 5 rounds: without
    the lowest only, cut-1); a bye's round is cut first."""
    sonneborn_berger: float | None = None
    """Swiss, round robin, duplicate: over its games, for each table mate, its result against
    the mate (1 placed better, 1/2 shared a place, 0 placed worse) times the mate's points,
    divided by table size - 1."""
    direct_encounter: float | None = None
    """Swiss, round robin: among the entrants tied with it on everything before, the sum of
    its mean results against each; null when not applied."""
    lot: int = 0
    """Its place (from 1, lower first) in the drawing of lots seeded by the tournament's seed,
    which ends every tie."""


class Standing(msgspec.Struct, frozen=True):
    """One entrant's line of the standings."""

    entrant: int
    """The entrant's index in the tournament's `entrants`."""
    name: str
    """The entrant's label."""
    games: int
    """Games played."""
    points: float
    """Points: at a table of k seats, place p earns k - p (a bye earns k - 1)."""
    wins: int
    """Games it placed first in."""
    mean_place: float | None
    """Its mean finishing place; null before its first game."""
    win_rate_low: float | None
    """The low end of the 95% Wilson interval of its win rate; null before its first game."""
    win_rate_high: float | None
    """The high end of the 95% Wilson interval of its win rate; null before its first game."""
    rating: float | None = None
    """Its OpenSkill ordinal (mu - 3 sigma) over the tournament's games; null when unrated."""
    uncertainty: float | None = None
    """Its OpenSkill sigma; null when unrated."""
    score: float | None = None
    """Duplicate: the sum of its seat-by-seat comparisons on each deal (None otherwise)."""
    rank: int = 0
    """Its place in the standings, from 1: every tie broken (by the lot at the last)."""
    tiebreaks: Tiebreaks = msgspec.field(default_factory=Tiebreaks)
    """Its tie-break values, in its format's order (see `docs/reference/tournaments.md`)."""
    stage: int | None = None
    """Knockout: how many rounds it came through (the winner: every round); null otherwise."""


def wilson(successes: int, trials: int, z: float = 1.959964) -> tuple[float, float]:
    """Returns the Wilson score interval (95% by default) of a success rate."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    margin = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - margin), min(1.0, centre + margin)


def update_ratings(
    ratings: Mapping[str, Rating], order: Sequence[tuple[str, int]]
) -> dict[str, Rating]:
    """Returns `ratings` after one game: `order` lists (player key, place) for every seat."""
    model = PlackettLuce()
    teams = [
        [model.rating(mu=r.mu, sigma=r.sigma) if (r := ratings.get(key)) else model.rating()]
        for key, _ in order
    ]
    rated = model.rate(teams, ranks=[float(place) for _, place in order])
    updated = dict(ratings)
    for (key, _), team in zip(order, rated, strict=True):
        updated[key] = Rating(team[0].mu, team[0].sigma)
    return updated


def standings(state: TournamentState) -> list[Standing]:
    """Returns the standings, best first, in `ranking`'s order (each format's tie-breaks,
    `shared.model.tournaments.tiebreaks.ORDER`); the first line is a finished tournament's
    winner."""
    d = state.definition
    names = [entrant.label for entrant in d.entrants]
    games = [0] * len(names)
    wins = [0] * len(names)
    place_sum = [0] * len(names)
    for entrant, place in _results(state):
        games[entrant] += 1
        wins[entrant] += place == 1
        place_sum[entrant] += place
    order, values = ranked(state)
    ratings = tournament_ratings(state)
    scores = duplicate_scores(state) if d.format == "duplicate" else None
    stages = _stages_of(state)
    lines = []
    for index, name in enumerate(names):
        low, high = wilson(wins[index], games[index]) if games[index] else (None, None)
        rating = ratings.get(index) if ratings is not None else None
        lines.append(
            Standing(
                entrant=index,
                name=name,
                games=games[index],
                points=float(values[index].points),
                wins=wins[index],
                mean_place=place_sum[index] / games[index] if games[index] else None,
                win_rate_low=low,
                win_rate_high=high,
                rating=rating.ordinal if rating else None,
                uncertainty=rating.sigma if rating else None,
                score=scores.get(index, 0.0) if scores is not None else None,
                tiebreaks=tiebreaks_of(values[index]),
                stage=stages.get(index, 0) if stages is not None else None,
            )
        )
    return [
        msgspec.structs.replace(lines[entrant], rank=rank)
        for rank, entrant in enumerate(order, start=1)
    ]


def tiebreaks_of(values: Values) -> Tiebreaks:
    """Returns the wire form of an entrant's tie-break values."""

    def number(value: Fraction | None) -> float | None:
        return None if value is None else float(value)

    return Tiebreaks(
        buchholz=number(values.buchholz),
        median_buchholz=number(values.median_buchholz),
        sonneborn_berger=number(values.sonneborn_berger),
        direct_encounter=number(values.direct_encounter),
        lot=values.lot,
    )


def _stages_of(state: TournamentState) -> dict[int, int] | None:
    """Returns a knockout's stages (see `tiebreak_field`), None for another format."""
    if state.definition.format != "knockout":
        return None
    return dict(tiebreak_field(state).stages)


def tournament_ratings(state: TournamentState) -> dict[int, Rating] | None:
    """Returns each entrant's rating over the tournament's games, None for an unrated game.

    Entrants are rated apart even when two of them are the same bot version, since they
    may share a table.
    """
    if not get_game(state.definition.game).has_decisions:
        return None
    records = {record.key: record for record in state.records}
    ratings: dict[str, Rating] = {}
    for game in (game for rnd in state.rounds for game in rnd.games):
        record = records.get(game.key)
        if record is not None:
            order = [(str(e), place) for e, place in zip(game.table, record.places, strict=True)]
            ratings = update_ratings(ratings, order)
    return {int(key): rating for key, rating in ratings.items()}
