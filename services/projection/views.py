"""The PostgreSQL reader of the tournament views: the `TournamentViews` port over migration 002
(and, for the list of games and the running games of no tournament, over the `games` view of
migration 001).

Reads what the projection has committed, so it lags the event store by the projection's
delay. Opens one connection per read (the API's reads are few and short).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC
from typing import Any

import msgspec
import psycopg
from msgspec import UNSET

from services.projection.changes import to_ms
from services.projection.queries import Target, connected
from shared.messages.common import Seat
from shared.model.tournaments.model import (
    Format,
    TournamentDefinition,
    description_of,
    display_name,
)
from shared.model.tournaments.standings import Standing
from shared.ports.views.fold import game_summary
from shared.ports.views.port import (
    GameSummary,
    LeaderboardEntry,
    RatingPoint,
    TournamentStandings,
    TournamentStatus,
    TournamentSummary,
    TournamentViews,
    ViewsUnavailable,
)

_LIST = (
    "SELECT tournament_id, game, format, status, table_size,"
    " ARRAY(SELECT label FROM tournament_entrants e WHERE e.tournament_id = t.tournament_id"
    " ORDER BY entrant) AS entrants, rounds, games_scheduled, games_played, winner, created_at,"
    " definition->'name', definition->'description' FROM tournaments t"
    " WHERE (%(status)s::text IS NULL OR status = %(status)s)"
    " AND (%(game)s::text IS NULL OR game = %(game)s)"
    " ORDER BY created_ms DESC, created_seq DESC LIMIT %(limit)s"
)
"""The newest tournaments, each with the name and description its stored definition holds
(JSON null where it has none: a row written before names, or a host who gave none)."""
_STATUS = "SELECT status FROM tournaments WHERE tournament_id = %s"
_STANDINGS = (
    "SELECT entrant, name, games, points, wins, mean_place, win_rate_low, win_rate_high,"
    " rating, uncertainty, line FROM tournament_standings WHERE tournament_id = %s ORDER BY rank"
)
_LEADERBOARD = (
    "SELECT key, games, mu, sigma, ordinal FROM ratings WHERE game = %s"
    " ORDER BY ordinal DESC, key LIMIT %s"
)
_HISTORY = (
    "SELECT key, game_id, place, games, mu, sigma, ordinal, finished_at FROM rating_history"
    " WHERE game = %s AND key = %s ORDER BY feed_ms, feed_seq"
)
_STANDALONE = (
    "SELECT game_id FROM games g WHERE status = 'playing'"
    " AND NOT EXISTS (SELECT 1 FROM tournament_games t WHERE t.game_id = g.game_id)"
    " ORDER BY created_at, game_id LIMIT %s"
)
"""Running games (the projection writes `playing` until the GameFinished) of no tournament:
on the index `games_status_created_at`, each checked on `tournament_games_game_id`."""

_RECENT = (
    "SELECT g.game_id, g.game, g.seats, g.created_at, g.status, g.finished_at, e.data,"
    " g.forked_from, CASE WHEN g.status = 'aborted' THEN COALESCE(g.result->>'reason', '') END,"
    " EXISTS (SELECT 1 FROM tournament_games tg JOIN tournaments t USING (tournament_id)"
    " WHERE tg.game_id = g.game_id AND t.status = 'cancelled' AND tg.status IS NULL)"
    " FROM games g LEFT JOIN events e ON e.game_id = g.game_id AND e.version = 1"
    " WHERE (%(status)s::text IS NULL OR g.status = %(status)s)"
    " AND (%(game)s::text IS NULL OR g.game = %(game)s)"
    ' ORDER BY g.created_at DESC, g.game_id COLLATE "C" DESC LIMIT %(limit)s'
)
"""The newest games (the projection writes `playing`, then the result's status), on the index
`games_created_at` (or `games_status_created_at` with a status), each with its archived
GameCreated (version 1 of every game's stream), which the same transaction as its row wrote:
its tournament comes from there, never from a tournament's rows that another partition's
projection may not have written yet. Whether a cancelled tournament left it unrecorded (why
it is not rated) does come from the tournament's rows, as the projection has them: see
`shared.model.unrated`."""


class _Created(msgspec.Struct):
    """The one field of a stored GameCreated the list reads (the others are ignored)."""

    tournament: str = ""


_created = msgspec.msgpack.Decoder(_Created)


class PostgresTournamentViews(TournamentViews):
    """The tournament views in the projection's database at `target`."""

    def __init__(self, target: Target) -> None:
        self._target = target

    @contextmanager
    def _cursor(self) -> Iterator[psycopg.Cursor[Any]]:
        """Yields a cursor; an unreachable database raises ViewsUnavailable."""
        try:
            with connected(self._target) as conn, conn.cursor() as cur:
                yield cur
        except psycopg.OperationalError as error:
            raise ViewsUnavailable(f"the views' database is unavailable: {error}") from error

    def tournaments(
        self, status: TournamentStatus | None = None, game: str | None = None, limit: int = 50
    ) -> list[TournamentSummary]:
        with self._cursor() as cur:
            rows = cur.execute(_LIST, {"status": status, "game": game, "limit": limit}).fetchall()
        return [_summary(row) for row in rows]

    def standings(self, tournament_id: str) -> TournamentStandings | None:
        with self._cursor() as cur:
            found = cur.execute(_STATUS, (tournament_id,)).fetchone()
            if found is None:
                return None
            lines = [_standing(row) for row in cur.execute(_STANDINGS, (tournament_id,))]
        return TournamentStandings(tournament_id, found[0], lines)

    def leaderboard(self, game: str, limit: int = 100) -> list[LeaderboardEntry]:
        with self._cursor() as cur:
            return [LeaderboardEntry(*row) for row in cur.execute(_LEADERBOARD, (game, limit))]

    def rating_history(self, game: str, key: str) -> list[RatingPoint]:
        with self._cursor() as cur:
            rows = cur.execute(_HISTORY, (game, key)).fetchall()
        return [_point(row) for row in rows]

    def recent_games(
        self, game: str | None = None, status: str | None = None, limit: int = 20
    ) -> list[GameSummary]:
        with self._cursor() as cur:
            params = {"status": status, "game": game, "limit": limit}
            rows = cur.execute(_RECENT, params).fetchall()
        return [_game(row) for row in rows]

    def standalone_games(self, limit: int) -> list[str]:
        with self._cursor() as cur:
            return [str(row[0]) for row in cur.execute(_STANDALONE, (limit,))]


def _summary(row: tuple[Any, ...]) -> TournamentSummary:
    """Returns the tournament a `_LIST` row describes."""
    tournament_id, game, format_, status, size, entrants, *counts, at, name, text = row
    rounds, scheduled, played, winner = counts
    named = _named(game, format_, size, name, text)
    return TournamentSummary(
        tournament_id=tournament_id,
        name=display_name(named),
        description=description_of(named),
        game=game,
        format=format_,
        status=status,
        table_size=size,
        entrants=list(entrants),
        rounds=rounds,
        games_scheduled=scheduled,
        games_played=played,
        winner=winner,
        created_at=at.astimezone(UTC),
    )


def _named(
    game: str, format_: Format, size: int, name: str | None, description: str | None
) -> TournamentDefinition:
    """Returns a definition with the fields that name a tournament (the rest are not read):
    the host's name and description where the stored definition has them, else unset."""
    return TournamentDefinition(
        game=game,
        entrants=[],
        table_size=size,
        format=format_,
        name=UNSET if name is None else name,
        description=UNSET if description is None else description,
    )


def _standing(row: tuple[Any, ...]) -> Standing:
    """Returns the standings line a `_STANDINGS` row holds: its JSON, else (a row written
    before the column) its columns."""
    *columns, line = row
    return Standing(*columns) if line is None else msgspec.convert(line, Standing)


def _game(row: tuple[Any, ...]) -> GameSummary:
    """Returns the line of the list of games a `_RECENT` row describes."""
    game_id, game, seats, created_at, status, finished_at, data, *rating = row
    forked_from, abort_reason, cancelled_unrecorded = rating
    finished = None if finished_at is None else (status, to_ms(finished_at))
    seated = msgspec.convert(seats, list[Seat])
    tournament = _created.decode(data).tournament if data is not None else None
    return game_summary(
        game_id,
        game,
        seated,
        to_ms(created_at),
        tournament,
        finished,
        forked=forked_from is not None,
        abort_reason=abort_reason,
        cancelled_unrecorded=bool(cancelled_unrecorded),
    )


def _point(row: tuple[Any, ...]) -> RatingPoint:
    """Returns the rating point a `_HISTORY` row holds."""
    key, game_id, place, games, mu, sigma, ordinal, at = row
    return RatingPoint(key, game_id, place, games, mu, sigma, ordinal, at.astimezone(UTC))
