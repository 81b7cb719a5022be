"""Folds tournaments and ratings into their PostgreSQL views (migration 002).

A tournament that a batch touches is refolded whole from its archived stream, which the
batch's transaction has just extended: its rows are deleted and written again. Rated
games fold into `ratings` and `rating_history` in feed order (see `shared.ports.views.fold`);
a rebuild reads the archive's GameFinished events ordered by feed position, numerically,
and so reaches the same ratings as the live projection.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, NamedTuple

import msgspec
import psycopg
from psycopg.types.json import Jsonb

from services.projection.changes import decode
from services.projection.queries import recorded_from_row
from shared.messages.common import GameCreated, GameFinished, Result, Seat
from shared.messages.envelope import RecordedEvent
from shared.model.idempotency import game_id_for
from shared.model.tournaments import model, seeds
from shared.model.tournaments.standings import standings
from shared.ports.views.fold import (
    RATING_EVENTS,
    RatedGame,
    RatingBook,
    rated_at,
    rated_game,
    summary,
    tournament_id_of,
)
from shared.ports.views.port import LeaderboardEntry
from shared.store.port import FeedEntry, position_key

Cursor = psycopg.Cursor[Any]

FEED_ORDER = (
    "split_part(feed_position, '-', 1)::bigint,"
    " COALESCE(NULLIF(split_part(feed_position, '-', 2), ''), '0')::bigint,"
    " game_id, version"
)
"""Orders archived events by feed position, numerically (`"ms-seq"`; a bare `"ms"` is seq 0),
ties (entries of different partitions) by game and version: the order of
`shared.store.merged.merge_key`, in which the projection folds them live."""

FEED_ORDER_DESC = ", ".join(
    f"{part} DESC"
    for part in (
        "split_part(feed_position, '-', 1)::bigint",
        "COALESCE(NULLIF(split_part(feed_position, '-', 2), ''), '0')::bigint",
        "game_id",
        "version",
    )
)
"""`FEED_ORDER` backwards."""

SELECT_WITH_POSITION = (
    "SELECT game_id, kind, version, type, data, schema, recorded_at, feed_position FROM events"
)
"""Selects archived events with their feed position; callers add the WHERE and ORDER BY."""

_TRUNCATE = "TRUNCATE tournaments, tournament_entrants, tournament_games, tournament_standings"
_TRUNCATE_RATINGS = "TRUNCATE ratings, rating_history"
_FEED_KEY = (
    "(split_part(feed_position, '-', 1)::bigint,"
    " COALESCE(NULLIF(split_part(feed_position, '-', 2), ''), '0')::bigint)"
)


def rating_events(where: str, order: str = FEED_ORDER) -> str:
    """Returns the SELECT (`SELECT_WITH_POSITION`'s columns) of the archived events the
    ratings fold, in `order`, that also match `where` (a condition on the feed position):
    the GameFinished of games (kind not the tournament's: the first parameter), and the
    tournaments' RATING_EVENTS (kind the tournament's: the second). Each half reads its own
    partial index (migrations 006 and 007); `where`'s parameters follow, once per half."""
    kinds = ", ".join(f"'{name}'" for name in RATING_EVENTS)
    games = f"{SELECT_WITH_POSITION} WHERE type = 'GameFinished' AND kind <> %s AND {where}"
    rounds = f"{SELECT_WITH_POSITION} WHERE type IN ({kinds}) AND kind = %s AND {where}"
    # Constants of this package only: no input reaches the text (its values are parameters).
    return f"SELECT * FROM ({games} UNION ALL {rounds}) AS rated ORDER BY {order}"  # noqa: S608


_FINISHED_BELOW = rating_events(f"{_FEED_KEY} < (%s, %s)")
"""The rating events below a position key (parameters: the two kinds, each with the key)."""
_DELETE_TOURNAMENTS = "DELETE FROM tournaments WHERE tournament_id = ANY(%s)"
_INSERT_TOURNAMENT = (
    "INSERT INTO tournaments (tournament_id, game, format, status, table_size, rounds,"
    " games_scheduled, games_played, winner, definition, version, created_at, created_ms,"
    " created_seq) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)
_INSERT_ENTRANT = (
    "INSERT INTO tournament_entrants (tournament_id, entrant, label, bot, version, name)"
    " VALUES (%s, %s, %s, %s, %s, %s)"
)
_INSERT_GAME = (
    "INSERT INTO tournament_games (tournament_id, key, round, game_id, entrants, deal, places,"
    " status) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
)
_INSERT_STANDING = (
    "INSERT INTO tournament_standings (tournament_id, rank, entrant, name, games, points, wins,"
    " mean_place, win_rate_low, win_rate_high, rating, uncertainty, line)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)
_SELECT_SEATS = (
    "SELECT game_id, game, seats FROM games WHERE game_id = ANY(%s) AND forked_from IS NULL"
)
"""The seats of the rated candidates among some games: a fork (a what-if) is never rated."""
_SELECT_RATINGS = (
    "SELECT game, key, games, mu, sigma, ordinal FROM ratings"
    " WHERE (game, key) IN (SELECT * FROM unnest(%s::text[], %s::text[]))"
)
_UPSERT_RATING = (
    "INSERT INTO ratings (game, key, games, mu, sigma, ordinal) VALUES (%s, %s, %s, %s, %s, %s)"
    " ON CONFLICT (game, key) DO UPDATE SET games = excluded.games, mu = excluded.mu,"
    " sigma = excluded.sigma, ordinal = excluded.ordinal"
)
_INSERT_POINT = (
    "INSERT INTO rating_history (game, key, game_id, place, games, mu, sigma, ordinal,"
    " finished_at, feed_ms, feed_seq) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)


class Positioned(NamedTuple):
    """An archived or fed event with its position in the global feed."""

    position: str
    event: RecordedEvent


ArchivedWithPosition = tuple[str, str, int, str, bytes, int, datetime, str]
"""An `events` row as `SELECT_WITH_POSITION` returns it."""


def positioned_from_row(row: ArchivedWithPosition) -> Positioned:
    """Returns the event a `SELECT_WITH_POSITION` row archives, with its feed position."""
    return Positioned(row[7], recorded_from_row(row[:7]))


def update_tournament_views(cur: Cursor, entries: Sequence[FeedEntry]) -> None:
    """Folds a batch's tournaments in; runs after the batch is archived. (Its rated games are
    folded by the ordered step, `services.projection.ratings`.)"""
    touched = {e.event.game_id for e in entries if e.event.kind == model.KIND}
    refold_tournaments(cur, sorted(touched))


def finished(recorded: RecordedEvent) -> bool:
    """Returns whether the ratings fold `recorded`: a game's GameFinished, or a tournament's
    event that rates its games (`RATING_EVENTS`)."""
    if recorded.kind == model.KIND:
        return recorded.type in RATING_EVENTS
    return recorded.type == "GameFinished"


def refold_tournaments(cur: Cursor, streams: Sequence[str]) -> int:
    """Rewrites the rows of the tournaments of `streams` from their archived events."""
    if not streams:
        return 0
    cur.execute(
        SELECT_WITH_POSITION + " WHERE game_id = ANY(%s) ORDER BY game_id, version",
        (list(streams),),
    )
    by_stream: dict[str, list[Positioned]] = {}
    for row in cur.fetchall():
        item = positioned_from_row(row)
        by_stream.setdefault(item.event.game_id, []).append(item)
    cur.execute(_DELETE_TOURNAMENTS, ([tournament_id_of(s) for s in by_stream],))
    for stream, events in by_stream.items():
        _write_tournament(cur, tournament_id_of(stream), events)
    return len(by_stream)


def _write_tournament(cur: Cursor, tournament_id: str, events: Sequence[Positioned]) -> None:
    """Inserts the rows of one tournament, folded from its whole stream."""
    state = model.fold([decode(item.event) for item in events])
    first, last = events[0], events[-1]
    line = summary(tournament_id, state, first.event.recorded_at)
    d = state.definition
    shown = seeds.withheld(d) if seeds.may_run(state) else d
    created_ms, created_seq = position_key(first.position)
    cur.execute(
        _INSERT_TOURNAMENT,
        (
            tournament_id, line.game, line.format, line.status, line.table_size, line.rounds,
            line.games_scheduled, line.games_played, line.winner, Jsonb(msgspec.to_builtins(shown)),
            last.event.version, line.created_at, created_ms, created_seq,
        ),
    )  # fmt: skip
    cur.executemany(
        _INSERT_ENTRANT,
        [
            (tournament_id, index, e.label, e.bot, e.version, e.name)
            for index, e in enumerate(d.entrants)
        ],
    )
    cur.executemany(_INSERT_GAME, _game_rows(tournament_id, state))
    cur.executemany(
        _INSERT_STANDING,
        [
            (
                tournament_id, rank, s.entrant, s.name, s.games, s.points, s.wins, s.mean_place,
                s.win_rate_low, s.win_rate_high, s.rating, s.uncertainty,
                Jsonb(msgspec.to_builtins(s)),
            )
            for rank, s in enumerate(standings(state), start=1)
        ],
    )  # fmt: skip


def _game_rows(tournament_id: str, state: model.TournamentState) -> list[tuple[Any, ...]]:
    """Returns the `tournament_games` rows of every scheduled game of the tournament."""
    records = {record.key: record for record in state.records}
    rows = []
    for rnd in state.rounds:
        for game in rnd.games:
            record = records.get(game.key)
            rows.append(
                (
                    tournament_id, game.key, rnd.round,
                    record.game_id if record else game_id_for(game.key), list(game.table),
                    game.deal, record.places if record else None, record.status if record else None,
                )
            )  # fmt: skip
    return rows


def fold_ratings(cur: Cursor, finished: Sequence[Positioned]) -> int:
    """Folds rating events (`finished`) into the ratings, in feed order: a GameFinished of a
    game of no tournament rates that game; a tournament's RoundCompleted or
    TournamentCancelled rates its games of that round (of the rounds not completed), in
    schedule order (`shared.ports.views.fold`); a tournament's game already rated (folded at
    its GameFinished before this rule) is not rated twice.

    Reads each game's seats from the `games` view, so runs after that view took the same
    events in. Returns how many of the games were rated.
    """
    if not finished:
        return 0
    ordered = sorted(
        finished,
        key=lambda item: (*position_key(item.position), item.event.game_id, item.event.version),
    )
    candidates = [_candidates(cur, item) for item in ordered]
    ids = sorted({game_id for found in candidates for game_id, _ in found})
    cur.execute(_SELECT_SEATS, (ids,))
    seats = {row[0]: (row[1], _seats(row[2])) for row in cur.fetchall()}
    of_tournaments = _tournament_games(cur, [i for i in ids if i in seats])
    rated: list[tuple[Positioned, RatedGame]] = []
    for item, found in zip(ordered, candidates, strict=True):
        from_round = item.event.kind == model.KIND
        for game_id, result in found:
            known = seats.get(game_id)
            if known is None or (game_id in of_tournaments) != from_round:
                continue
            game = rated_game(known[0], game_id, known[1], result, item.event.recorded_at)
            if game is not None:
                rated.append((item, game))
    if rated:
        _apply(cur, rated)
    return len(rated)


def _candidates(cur: Cursor, item: Positioned) -> list[tuple[str, Result]]:
    """Returns the games a rating event may rate, with their results, in the order to rate
    them: a GameFinished's game; a tournament event's games (its stream folded up to it)."""
    event = decode(item.event)
    if isinstance(event, GameFinished):
        return [(item.event.game_id, event.result)]
    cur.execute(
        SELECT_WITH_POSITION + " WHERE game_id = %s AND version <= %s ORDER BY version",
        (item.event.game_id, item.event.version),
    )
    state = model.fold([decode(positioned_from_row(row).event) for row in cur.fetchall()])
    already = _rated_before(cur, [record.game_id for record in rated_at(state, event)])
    return [
        (record.game_id, Result(record.status, list(record.places)))
        for record in rated_at(state, event)
        if record.game_id not in already
    ]


def _rated_before(cur: Cursor, game_ids: Sequence[str]) -> set[str]:
    """Returns which of the games have rating points already."""
    cur.execute("SELECT DISTINCT game_id FROM rating_history WHERE game_id = ANY(%s)", (game_ids,))
    return {str(row[0]) for row in cur.fetchall()}


def _tournament_games(cur: Cursor, game_ids: Sequence[str]) -> set[str]:
    """Returns which of the games are a tournament's (their GameCreated, archived in the same
    partition as their end, names it): the leaderboard rates them with their round."""
    cur.execute(SELECT_WITH_POSITION + " WHERE game_id = ANY(%s) AND version = 1", (game_ids,))
    found = set()
    for row in cur.fetchall():
        created = decode(positioned_from_row(row).event)
        if isinstance(created, GameCreated) and created.tournament:
            found.add(str(row[0]))
    return found


def _seats(value: Any) -> list[Seat]:
    """Returns the seats of a `games.seats` jsonb value."""
    return msgspec.convert(value, list[Seat])


def _apply(cur: Cursor, rated: Sequence[tuple[Positioned, RatedGame]]) -> None:
    """Folds rated games into the ratings of their keys; writes the ratings and history rows."""
    pairs = sorted({(game.game, key) for _, game in rated for key, _ in game.order})
    cur.execute(_SELECT_RATINGS, ([g for g, _ in pairs], [k for _, k in pairs]))
    book = RatingBook((row[0], LeaderboardEntry(*row[1:])) for row in cur.fetchall())
    history = []
    for item, game in rated:
        ms, seq = position_key(item.position)
        for p in book.apply(game):
            history.append(
                (game.game, p.key, p.game_id, p.place, p.games, p.mu, p.sigma, p.ordinal,
                 p.finished_at, ms, seq)
            )  # fmt: skip
    cur.executemany(
        _UPSERT_RATING,
        [(game, key, e.games, e.mu, e.sigma, e.ordinal) for (game, key), e in book.entries.items()],
    )
    cur.executemany(_INSERT_POINT, history)


def rebuild_tournament_views(conn: psycopg.Connection[Any], chunk: int = 1000) -> tuple[int, int]:
    """Empties and refills the tournament and rating views from the archive.

    Runs inside the caller's transaction, after the `games` view was rebuilt; returns how
    many tournaments and rated games it folded.
    """
    conn.execute(_TRUNCATE)
    streams = [
        str(row[0])
        for row in conn.execute(
            "SELECT DISTINCT game_id FROM events WHERE kind = %s ORDER BY game_id",
            (model.KIND,),
        ).fetchall()
    ]
    folded = 0
    with conn.cursor() as target:
        for start in range(0, len(streams), chunk):
            folded += refold_tournaments(target, streams[start : start + chunk])
    return folded, rebuild_ratings(conn, chunk)


def rebuild_ratings(
    conn: psycopg.Connection[Any], chunk: int = 1000, below: tuple[int, int] | None = None
) -> int:
    """Empties and refills the ratings from every archived finished game (`below`: before
    that position key only), in feed order; returns how many were rated. Runs inside the
    caller's transaction."""
    conn.execute(_TRUNCATE_RATINGS)
    rated = 0
    bound = (2**63 - 1, 2**63 - 1) if below is None else below
    with conn.cursor(name="rebuild_finished") as source, conn.cursor() as target:
        source.execute(_FINISHED_BELOW, (model.KIND, *bound, model.KIND, *bound))
        while rows := source.fetchmany(chunk):
            rated += fold_ratings(target, [positioned_from_row(row) for row in rows])
    return rated
