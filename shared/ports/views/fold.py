"""The pure fold behind the tournament views, shared by the in-memory twin and PostgreSQL.

Rated games: a game with decisions (never Beggar-my-neighbour) whose every seat has a
rating key (a tournament seat: `name@version`, see `Seat.rating_key`), each key on one
seat only (a bot version playing itself has no defined update), no two seats of one account
other than the host's (`shared.model.accounts.same_account`: one owner never feeds itself),
and a place per seat.
Ratings are per game and per key, and fold the rated games in feed order: a game of no
tournament at its GameFinished; a tournament's games when their round completes
(RoundCompleted; those recorded in an unfinished round when the tournament is cancelled),
in schedule order, which is the order the standings rate them in, so for the same games
from fresh ratings the standings' ratings and the leaderboard's are the same floats. A
tournament game that ends after its tournament was cancelled counts for nothing, and is
not rated. The live projection meets these events in feed order and a rebuild reads the
archive ordered by feed position (numerically), so both reach the same floats.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta

import msgspec

from shared.catalog import get_game
from shared.errors import GameNotFound
from shared.messages.common import Event, Result, Seat
from shared.model.accounts import shared_account
from shared.model.tournaments.model import (
    GameRecorded,
    RoundCompleted,
    TournamentCancelled,
    TournamentState,
    description_of,
    display_name,
)
from shared.model.tournaments.standings import Rating, update_ratings
from shared.model.unrated import rated_flag, unrated_reason
from shared.ports.views.port import (
    GameSummary,
    LeaderboardEntry,
    RatingPoint,
    TournamentSummary,
)

TOURNAMENT_PREFIX = "tournament:"
"""Tournament streams are `tournament:<id>` (see `shared.model.tournaments.model.stream_id`)."""

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)


def to_datetime(ms: int) -> datetime:
    """Returns the UTC instant `ms` milliseconds after the epoch, exactly."""
    return _EPOCH + ms * _MS


def tournament_id_of(stream: str) -> str:
    """Returns the tournament id of the stream `tournament:<id>`."""
    return stream.removeprefix(TOURNAMENT_PREFIX)


class RatedGame(msgspec.Struct, frozen=True):
    """A finished rated game: which game, its id, (key, place) per seat, when it ended."""

    game: str
    game_id: str
    order: list[tuple[str, int]]
    finished_ms: int


def rated_game(
    game: str, game_id: str, seats: Sequence[Seat], result: Result, finished_ms: int
) -> RatedGame | None:
    """Returns the finished game as a rated game, None when it is not rated."""
    try:
        spec = get_game(game)
    except GameNotFound:
        return None
    keys = [seat.rating_key for seat in seats]
    if not spec.has_decisions or len(result.places) != len(keys):
        return None
    rated = [key for key in keys if key is not None]
    if len(rated) != len(keys) or len(set(rated)) != len(rated):
        return None
    if shared_account([s.account if isinstance(s.account, str) else None for s in seats]):
        return None
    return RatedGame(game, game_id, list(zip(rated, result.places, strict=True)), finished_ms)


RATING_EVENTS = ("RoundCompleted", "TournamentCancelled")
"""The tournament events at which the leaderboard takes a tournament's games in."""


def rated_at(state: TournamentState, event: Event) -> list[GameRecorded]:
    """Returns the records of the tournament games the leaderboard rates at `event` (folded
    into `state` already), in schedule order: a completed round's (an arena's, at its end:
    every pairing's), or at a cancellation those of the rounds not completed."""
    if isinstance(event, RoundCompleted):
        arena = state.definition.format == "arena"  # its one RoundCompleted completes them all
        rounds = [
            rnd
            for rnd in state.rounds
            if rnd.round == event.round or (arena and rnd.round < event.round)
        ]
    elif isinstance(event, TournamentCancelled):
        rounds = [rnd for rnd in state.rounds if rnd.round > state.completed]
    else:
        return []
    records = {record.key: record for record in state.records}
    return [records[g.key] for rnd in rounds for g in rnd.games if g.key in records]


def rated_record(
    game: str, seats: Sequence[Seat], record: GameRecorded, at_ms: int
) -> RatedGame | None:
    """Returns a tournament's recorded game as a rated game, None when it is not rated."""
    result = Result(record.status, list(record.places))
    return rated_game(game, record.game_id, seats, result, at_ms)


def rate(current: Mapping[str, LeaderboardEntry], game: RatedGame) -> list[RatingPoint]:
    """Returns each seat's rating after `game`, in seat order, from the keys' `current` entries."""
    before = {key: Rating(entry.mu, entry.sigma) for key, entry in current.items()}
    after = update_ratings(before, game.order)
    at = to_datetime(game.finished_ms)
    points = []
    for key, place in game.order:
        rating, known = after[key], current.get(key)
        games = (known.games if known else 0) + 1
        points.append(
            RatingPoint(
                key, game.game_id, place, games, rating.mu, rating.sigma, rating.ordinal, at
            )
        )
    return points


def entry_of(point: RatingPoint) -> LeaderboardEntry:
    """Returns the leaderboard entry a rating point leaves its key with."""
    return LeaderboardEntry(point.key, point.games, point.mu, point.sigma, point.ordinal)


def ranked(entries: Iterable[LeaderboardEntry]) -> list[LeaderboardEntry]:
    """Returns `entries` in leaderboard order: ordinal descending, then key."""
    return sorted(entries, key=lambda entry: (-entry.ordinal, entry.key))


class RatingBook:
    """Leaderboard entries per game and key, folded one rated game at a time."""

    def __init__(self, entries: Iterable[tuple[str, LeaderboardEntry]] = ()) -> None:
        self.entries: dict[tuple[str, str], LeaderboardEntry] = {
            (game, entry.key): entry for game, entry in entries
        }

    def apply(self, game: RatedGame) -> list[RatingPoint]:
        """Folds one rated game in; returns its rating points, in seat order."""
        current = {
            key: entry
            for key, _ in game.order
            if (entry := self.entries.get((game.game, key))) is not None
        }
        points = rate(current, game)
        for point in points:
            self.entries[game.game, point.key] = entry_of(point)
        return points


def summary(tournament_id: str, state: TournamentState, created_ms: int) -> TournamentSummary:
    """Returns a tournament's line of the list from its folded state."""
    d = state.definition
    return TournamentSummary(
        tournament_id=tournament_id,
        name=display_name(d),
        description=description_of(d),
        game=d.game,
        format=d.format,
        status=state.status,
        table_size=d.table_size,
        entrants=[entrant.label for entrant in d.entrants],
        rounds=len(state.rounds),
        games_scheduled=sum(len(rnd.games) for rnd in state.rounds),
        games_played=len(state.records),
        winner=state.winner,
        created_at=to_datetime(created_ms),
    )


def seat_label(seat: Seat) -> str:
    """Returns a seat's label in the list of games: `name@version` for a seat with a version
    (its name, else its built-in bot), else its name, its built-in bot, or its kind."""
    who = seat.name or seat.bot or seat.kind
    return f"{who}@{seat.version}" if seat.version else who


def game_summary(
    game_id: str,
    game: str,
    seats: Sequence[Seat],
    created_ms: int,
    tournament_id: str | None,
    finished: tuple[str, int] | None = None,
    *,
    forked: bool = False,
    abort_reason: str | None = None,
    cancelled_unrecorded: bool = False,
) -> GameSummary:
    """Returns a game's line of the list; `finished` is its result's status and the time (ms)
    of its GameFinished, None while it runs; the rest says why it is not rated (see
    `shared.model.unrated.unrated_reason`)."""
    status, finished_at = ("playing", None) if finished is None else finished
    unrated = unrated_reason(
        game,
        seats,
        forked=forked,
        abort_reason=abort_reason,
        cancelled_unrecorded=cancelled_unrecorded,
    )
    return GameSummary(
        game_id=game_id,
        game=game,
        status=status,
        seats=[seat_label(seat) for seat in seats],
        created_at=to_datetime(created_ms),
        finished_at=None if finished_at is None else to_datetime(finished_at),
        tournament_id=tournament_id or None,
        rated=rated_flag(unrated, finished is not None),
        unrated=unrated,
    )
