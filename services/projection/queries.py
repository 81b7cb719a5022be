"""Reads of the projection's tables, for the API and the CLI."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import dict_row

from services.projection.changes import to_ms
from shared.messages.envelope import RecordedEvent
from shared.store.port import position_key

Target = str | psycopg.Connection[Any]
"""A conninfo string (a connection is opened and closed per call) or an open connection."""

ArchivedRow = tuple[str, str, int, str, bytes, int, datetime]
"""An `events` row as `SELECT_ARCHIVED` returns it."""

SELECT_ARCHIVED = "SELECT game_id, kind, version, type, data, schema, recorded_at FROM events"
"""Selects archived events as `ArchivedRow`s; callers add the WHERE and ORDER BY."""


@contextmanager
def connected(target: Target) -> Iterator[psycopg.Connection[Any]]:
    """Yields `target` itself, or a new autocommit connection to it that is closed afterwards."""
    if isinstance(target, str):
        with psycopg.connect(target, autocommit=True) as conn:
            yield conn
    else:
        yield target


def recorded_from_row(row: ArchivedRow) -> RecordedEvent:
    """Returns the event an `events` row archives."""
    game_id, kind, version, type_, data, schema, recorded_at = row
    return RecordedEvent(game_id, kind, version, type_, bytes(data), schema, to_ms(recorded_at))


def get_game_row(target: Target, game_id: str) -> dict[str, Any] | None:
    """Returns the `games` row of `game_id` as a dict, None when the view has no such game."""
    with connected(target) as conn, conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            "SELECT game_id, game, ruleset, status, seats, version, result, created_at,"
            " finished_at FROM games WHERE game_id = %s",
            (game_id,),
        )
        return cur.fetchone()


def list_games(target: Target, status: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
    """Returns up to `limit` `games` rows, newest first, only those in `status` when given."""
    with connected(target) as conn, conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            "SELECT game_id, game, ruleset, status, seats, version, result, created_at,"
            " finished_at FROM games WHERE (%(status)s::text IS NULL OR status = %(status)s)"
            " ORDER BY created_at DESC, game_id LIMIT %(limit)s",
            {"status": status, "limit": limit},
        )
        return cur.fetchall()


def archived_events(target: Target, game_id: str) -> list[RecordedEvent]:
    """Returns the archived events of `game_id`, in version order."""
    with connected(target) as conn:
        rows = conn.execute(
            SELECT_ARCHIVED + " WHERE game_id = %s ORDER BY version", (game_id,)
        ).fetchall()
    return [recorded_from_row(row) for row in rows]


def checkpoint(target: Target, name: str = "main") -> str | None:
    """Returns the newest feed position projection `name` has committed in any partition
    (its one checkpoint before partitions), None before its first batch."""
    with connected(target) as conn:
        rows = conn.execute(
            "SELECT position FROM projection_checkpoints WHERE name = %s OR name ~ %s",
            (name, f"^{re.escape(name)}:p[0-9]+$"),
        ).fetchall()
    return max((str(row[0]) for row in rows), key=position_key, default=None)
