"""The ordered step of the projection: ratings, folded in one order that a rebuild repeats.

Games, the archive and tournaments are each a stream's own, so projectors that share the
feed's partitions project them side by side. Ratings are not: a game's rating change
depends on every rated game before it, across partitions. So ratings are folded apart, by
one step at a time (a PostgreSQL advisory lock), in feed order (`FEED_ORDER`: position,
then game and version) and only below the watermark of every partition: the point below
which that partition's projector has projected everything (`advance_watermarks`, after a
read that handed out every entry before the feed clock). The step's own checkpoint says
how far ratings are folded. A finished game that arrives below it (an entry claimed late
from a dead projector, a dead letter projected on a retry) makes the batch that archives it
refold every rating, in the same order, so the ratings always equal a rebuild's.

Checkpoint rows (`projection_checkpoints`) of projection `name`: `<name>:p<n>`, the newest
position projected of partition n; `<name>:below:p<n>`, its watermark; `<name>:ratings`.
A database written by a projection before partitions has one row `<name>` (its newest
position, every partition's, ratings folded up to it): it stands in for all of them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import psycopg

from services.projection.changes import latest
from services.projection.tournament_folds import (
    FEED_ORDER_DESC,
    fold_ratings,
    positioned_from_row,
    rating_events,
    rebuild_ratings,
)
from shared.model.tournaments import model
from shared.store.port import FeedEntry, position_key

Cursor = psycopg.Cursor[Any]
Key = tuple[int, int]

RATINGS_LOCK = 0x726174696E677321
"""The advisory lock of the ordered step ("ratings!" in ASCII)."""

_READ = "SELECT position FROM projection_checkpoints WHERE name = %s"
_STORE = (
    "INSERT INTO projection_checkpoints (name, position) VALUES (%s, %s)"
    " ON CONFLICT (name) DO UPDATE SET position = excluded.position, updated_at = now()"
)
_READ_MANY_LOCKED = (
    "SELECT name, position FROM projection_checkpoints WHERE name = ANY(%s)"
    " ORDER BY name FOR UPDATE"
)
_STORE_MANY = (
    "INSERT INTO projection_checkpoints (name, position)"
    " SELECT * FROM unnest(%s::text[], %s::text[])"
    " ON CONFLICT (name) DO UPDATE SET position = excluded.position, updated_at = now()"
)
_FEED_KEY = (
    "(split_part(feed_position, '-', 1)::bigint,"
    " COALESCE(NULLIF(split_part(feed_position, '-', 2), ''), '0')::bigint)"
)
_FINISHED_BETWEEN = rating_events(f"{_FEED_KEY} >= (%s, %s) AND {_FEED_KEY} < (%s, %s)")
"""The rating events between two position keys (parameters: each kind, with both keys)."""

_LAST_FINISHED = rating_events("TRUE", FEED_ORDER_DESC) + " LIMIT 1"
"""The last rating event in feed order (parameters: the two kinds)."""


def checkpoint_name(name: str, partition: int) -> str:
    """Returns the row of partition `partition`'s newest projected position."""
    return f"{name}:p{partition}"


def watermark_name(name: str, partition: int) -> str:
    """Returns the row of partition `partition`'s watermark."""
    return f"{name}:below:p{partition}"


def ratings_name(name: str) -> str:
    """Returns the row of the ordered step's checkpoint."""
    return f"{name}:ratings"


def text(key: Key) -> str:
    """Returns a position key as a position."""
    return f"{key[0]}-{key[1]}"


def after(position: str) -> Key:
    """Returns the key just after `position` (everything up to it is below)."""
    ms, seq = position_key(position)
    return ms, seq + 1


def _legacy(cur: Cursor, name: str) -> str | None:
    """Returns the one checkpoint of a projection before partitions, None if there is none."""
    row = cur.execute(_READ, (name,)).fetchone()
    return str(row[0]) if row else None


def partition_checkpoints(cur: Cursor, name: str, partitions: Iterable[int]) -> dict[int, str]:
    """Returns (locked for this transaction, in name order) each of `partitions`' newest
    projected position ("0-0": none), the legacy checkpoint standing in for a missing row; in
    one query (two when a row is missing)."""
    names = {checkpoint_name(name, p): p for p in partitions}
    rows = cur.execute(_READ_MANY_LOCKED, (list(names),)).fetchall()
    found = {names[str(row[0])]: str(row[1]) for row in rows}
    if len(found) < len(names):
        legacy = _legacy(cur, name) or "0-0"
        found.update((p, legacy) for p in names.values() if p not in found)
    return found


def advance_checkpoints(
    cur: Cursor, name: str, done: dict[int, str], entries: Iterable[FeedEntry]
) -> None:
    """Moves the checkpoint of each partition of `entries` to the newest of its position in
    `done` (`partition_checkpoints`) and its entries' positions, in one statement."""
    mine: dict[int, list[str]] = {}
    for entry in entries:
        mine.setdefault(entry.partition, []).append(entry.position)
    rows = [(checkpoint_name(name, p), latest([done[p], *mine[p]])) for p in sorted(mine)]
    if rows:
        _store_rows(cur, rows)


def _store_rows(cur: Cursor, rows: list[tuple[str, str]]) -> None:
    """Upserts checkpoint rows (name, position), in one statement."""
    cur.execute(_STORE_MANY, ([row[0] for row in rows], [row[1] for row in rows]))


def advance_watermarks(
    conn: psycopg.Connection[Any], name: str, partitions: Iterable[int], watermark: Key
) -> None:
    """Records that everything of `partitions` below `watermark` is projected (a projector
    calls it after committing what a complete read handed out), in one statement."""
    rows = [(watermark_name(name, p), text(watermark)) for p in partitions]
    with conn.cursor() as cur:
        _store_rows(cur, rows)


def ratings_checkpoint(cur: Cursor, name: str) -> Key:
    """Returns the key below which ratings are folded (legacy: past the one checkpoint)."""
    row = cur.execute(_READ, (ratings_name(name),)).fetchone()
    if row:
        return position_key(str(row[0]))
    legacy = _legacy(cur, name)
    return after(legacy) if legacy else (0, 0)


def lowest_watermark(cur: Cursor, name: str, partitions: int) -> Key | None:
    """Returns the lowest watermark of the `partitions` partitions, None while one has none
    (legacy: past the one checkpoint, for every partition)."""
    rows = cur.execute(
        "SELECT name, position FROM projection_checkpoints WHERE name LIKE %s",
        (f"{name}:below:p%",),
    ).fetchall()
    marks = {str(row[0]): position_key(str(row[1])) for row in rows}
    found = [marks.get(watermark_name(name, partition)) for partition in range(partitions)]
    if None in found:
        legacy = _legacy(cur, name)
        if legacy is None:
            return None
        found = [after(legacy) if mark is None else mark for mark in found]
    return min(mark for mark in found if mark is not None)


def fold_ordered_ratings(
    conn: psycopg.Connection[Any],
    name: str,
    partitions: int,
    owned: Iterable[int] = (),
    watermark: Key | None = None,
) -> int:
    """Folds the finished games between the ratings checkpoint and the lowest watermark of
    the `partitions` partitions into the ratings, in feed order, and moves the checkpoint
    there; returns how many games it folded (0 too while another step runs).

    With a `watermark`, first records it as the watermark of the `owned` partitions
    (`advance_watermarks`) in the same transaction: one commit for both. Runs in a pipeline:
    the statements whose results it does not read wait for the next one it does (the
    watermarks go with the lock, the checkpoint with the commit). Its commit does not wait for
    the disk (`synchronous_commit` off): what it writes is derived (from the archive, and
    from reads a projector repeats), all or nothing, durable with the next batch's commit; a
    database crash before that loses it whole, and the next step folds it again.
    """
    with conn.pipeline(), conn.transaction(), conn.cursor() as cur:
        cur.execute("SET LOCAL synchronous_commit = off")
        if watermark is not None:
            _store_rows(cur, [(watermark_name(name, p), text(watermark)) for p in owned])
        locked = cur.execute("SELECT pg_try_advisory_xact_lock(%s)", (RATINGS_LOCK,)).fetchone()
        if not locked or not locked[0]:
            return 0
        below = lowest_watermark(cur, name, partitions)
        done = ratings_checkpoint(cur, name)
        if below is None or below <= done:
            return 0
        between = (*done, *below)
        params = (model.KIND, *between, model.KIND, *between)
        rows = cur.execute(_FINISHED_BETWEEN, params).fetchall()
        folded = fold_ratings(cur, [positioned_from_row(row) for row in rows])
        cur.execute(_STORE, (ratings_name(name), text(below)))
        return folded


def refold_if_late(cur: Cursor, name: str, finished_keys: Iterable[Key]) -> bool:
    """Refolds every rating (in this transaction, the ordered step's lock taken) when a
    finished game came below the ratings checkpoint; returns whether it did."""
    keys = list(finished_keys)
    if not keys:
        return False
    cur.execute("SELECT pg_advisory_xact_lock(%s)", (RATINGS_LOCK,))
    done = ratings_checkpoint(cur, name)
    if min(keys) >= done:
        return False
    rebuild_ratings(cur.connection, below=done)
    return True


def reset_after_rebuild(cur: Cursor, name: str) -> None:
    """Moves the ratings checkpoint past every finished game a rebuild folded."""
    row = cur.execute(_LAST_FINISHED, (model.KIND, model.KIND)).fetchone()
    if row is not None:
        cur.execute(_STORE, (ratings_name(name), text(after(str(row[7])))))
