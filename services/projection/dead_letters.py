"""Dead letters: feed entries the projection cannot project, set aside so that it never stops.

A batch is projected in one transaction (`project_batch`). When it raises anything but an
outage (a payload that does not decode, a value PostgreSQL cannot hold, a bug in a fold),
it is rolled back and projected again entry by entry, each in a savepoint: an entry that
fails is recorded in `projection_dead_letters` (migration 004) instead, and so is every
later entry of its stream (game or tournament), held behind it so that no stream is ever
projected out of order. The checkpoint moves past them and the batch is acked: every other
stream goes on. A dead-lettered entry is neither archived nor in the views, so the retention
sweep keeps its stream in the event store.

`retry` projects the dead letters again, each stream's all at once (they come before the
checkpoint, so `project_batch` refolds their games and the tournament and rating views
from the archive), and deletes those that projected in the same transaction: exactly once,
like any batch. Outages (`OUTAGES`) are never dead-lettered: they propagate, and the
projection retries the whole batch.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
import psycopg

from services.projection import ratings
from shared.messages.text import printable, unstorable
from shared.store.port import FeedEntry, StoreUnavailable

log = logging.getLogger(__name__)

Cursor = psycopg.Cursor[Any]
Project = Callable[[Cursor, str, Sequence[FeedEntry]], int]
"""`services.projection.projector.project_batch`: projects entries, returns how many were new."""

OUTAGES = (psycopg.OperationalError, psycopg.InterfaceError, StoreUnavailable)
"""Errors of a dependency being down, not of an entry: a batch that meets one is retried whole."""

HELD = "held behind an earlier dead letter of its stream"
"""The error recorded for an entry that waits behind its stream's first dead letter."""

_HELD_STREAMS = (
    "SELECT DISTINCT stream FROM projection_dead_letters WHERE name = %s AND stream = ANY(%s)"
)
_PARK = (
    "INSERT INTO projection_dead_letters (name, position, stream, version, entry, error)"
    " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (name, position) DO NOTHING"
)
_ARCHIVED = "SELECT 1 FROM events WHERE game_id = %s AND version = %s"
_SELECT = (
    "SELECT position, entry FROM projection_dead_letters WHERE name = %s ORDER BY"
    " split_part(position, '-', 1)::bigint,"
    " COALESCE(NULLIF(split_part(position, '-', 2), ''), '0')::bigint"
)
"""The dead letters of a projection in feed order (see `tournament_folds.FEED_ORDER`)."""
_DELETE = "DELETE FROM projection_dead_letters WHERE name = %s AND position = ANY(%s)"
_FAILED_AGAIN = (
    "UPDATE projection_dead_letters SET attempts = attempts + 1, last_failed_at = now(),"
    " error = CASE WHEN position = %s THEN %s ELSE error END"
    " WHERE name = %s AND position = ANY(%s)"
)
_SUMMARY = (
    "SELECT count(*), count(DISTINCT stream), min(first_failed_at) FROM projection_dead_letters"
)
_OLDEST = (
    "SELECT stream, version, error FROM projection_dead_letters WHERE error <> %s"
    " ORDER BY first_failed_at, split_part(position, '-', 1)::bigint,"
    " COALESCE(NULLIF(split_part(position, '-', 2), ''), '0')::bigint LIMIT 1"
)

_ENTRY = msgspec.msgpack.Decoder(FeedEntry)


@dataclass(frozen=True)
class Projected:
    """What projecting a batch did: entries new to the archive, and entries dead-lettered."""

    fresh: int
    dead: int = 0


@dataclass(frozen=True)
class Retried:
    """What a retry did: dead letters projected (and deleted), and dead letters still held."""

    recovered: int
    held: int


def is_outage(error: BaseException) -> bool:
    """Returns whether `error` is a dependency being down rather than a fault of an entry."""
    return isinstance(error, OUTAGES)


def describe(error: BaseException) -> str:
    """Returns `error` as one storable line: its type and message."""
    text = str(error).strip().splitlines()
    return printable(f"{type(error).__name__}: {text[0] if text else ''}".rstrip(": "))


def stream_key(game_id: str) -> bytes:
    """Returns the `stream` column of a game id (bytea: a NUL in an id stays comparable)."""
    return game_id.encode("utf-8", "surrogatepass")


def project_guarded(
    conn: psycopg.Connection[Any], name: str, entries: Sequence[FeedEntry], project: Project
) -> Projected:
    """Projects `entries` with `project`, in one transaction of `conn`, dead-lettering
    each entry that cannot be projected and every later one of its stream; raises only
    outages (nothing written then)."""
    try:
        with conn.transaction(), conn.cursor() as cur:
            if not _held_streams(cur, name, entries):
                return Projected(project(cur, name, entries))
            return _isolating(cur, name, entries, project)
    except Exception as error:
        if is_outage(error) or conn.broken:
            raise
        log.warning(
            "projection %s: a batch failed (%s); projecting it entry by entry",
            name,
            describe(error),
        )
    with conn.transaction(), conn.cursor() as cur:
        return _isolating(cur, name, entries, project)


def _held_streams(cur: Cursor, name: str, entries: Sequence[FeedEntry]) -> set[bytes]:
    """Returns the streams of `entries` that already have a dead letter."""
    streams = sorted({stream_key(entry.event.game_id) for entry in entries})
    return {bytes(row[0]) for row in cur.execute(_HELD_STREAMS, (name, streams)).fetchall()}


def _isolating(cur: Cursor, name: str, entries: Sequence[FeedEntry], project: Project) -> Projected:
    """Projects `entries` one by one, each in a savepoint, dead-lettering those that fail and
    those behind a dead letter of their stream; moves the checkpoint past all of them."""
    conn = cur.connection
    held = _held_streams(cur, name, entries)
    fresh = dead = 0
    for entry in entries:
        stream = stream_key(entry.event.game_id)
        if stream in held:
            dead += _park(cur, name, entry, HELD)
            continue
        try:
            with conn.transaction(), conn.cursor() as inner:
                fresh += project(inner, name, [entry])
        except Exception as error:
            if is_outage(error) or conn.broken:
                raise
            reason = describe(error)
            log.error(
                "projection %s: dead letter at %s (game %s v%s): %s",
                name, entry.position, printable(entry.event.game_id), entry.event.version, reason,
            )  # fmt: skip
            dead += _park(cur, name, entry, reason)
            held.add(stream)
    done = ratings.partition_checkpoints(cur, name, sorted({e.partition for e in entries}))
    ratings.advance_checkpoints(cur, name, done, entries)
    return Projected(fresh, dead)


def letter_key(entry: FeedEntry) -> str:
    """Returns the `position` column of `entry`'s dead letter: its position in its partition
    and the partition (`<ms>-<seq>-p<n>`): positions of different partitions may be equal."""
    return f"{entry.position}-p{entry.partition}"


def letter_keys(entries: Sequence[FeedEntry]) -> list[str]:
    """Returns the `position` columns of `entries`' dead letters, and for partition 0 also the
    bare position a dead letter recorded before partitions has."""
    keys = [letter_key(entry) for entry in entries]
    return keys + [entry.position for entry in entries if entry.partition == 0]


def _park(cur: Cursor, name: str, entry: FeedEntry, reason: str) -> int:
    """Records `entry` as a dead letter unless the archive holds it already (a redelivery of
    an entry projected before); returns 1 when recorded now, else 0."""
    event = entry.event
    if unstorable(event.game_id) is None:
        archived = cur.execute(_ARCHIVED, (event.game_id, event.version)).fetchone()
        if archived is not None:
            return 0
    params = (
        name, letter_key(entry), stream_key(event.game_id), event.version,
        msgspec.msgpack.encode(entry), reason,
    )  # fmt: skip
    return cur.execute(_PARK, params).rowcount


def retry(conn: psycopg.Connection[Any], name: str, project: Project) -> Retried:
    """Projects the dead letters of projection `name` again with `project`; deletes, in the same
    transaction, those that project. Tries all at once, then stream by stream; a stream that
    still fails keeps its dead letters (with the new error and one more attempt)."""
    with conn.cursor() as cur:
        rows = cur.execute(_SELECT, (name,)).fetchall()
    entries = []
    for position, entry in rows:
        try:
            entries.append(_ENTRY.decode(entry))
        except msgspec.DecodeError as error:  # not written by this module: leave it be
            log.error("projection %s: dead letter %s cannot be read: %s", name, position, error)
    if not entries:
        return Retried(0, 0)
    try:
        return Retried(_project_again(conn, name, entries, project), 0)
    except Exception as error:
        if is_outage(error) or conn.broken:
            raise
    streams: dict[str, list[FeedEntry]] = {}
    for entry in entries:
        streams.setdefault(entry.event.game_id, []).append(entry)
    recovered = 0
    for items in streams.values():
        try:
            recovered += _project_again(conn, name, items, project)
        except Exception as error:
            if is_outage(error) or conn.broken:
                raise
            with conn.transaction(), conn.cursor() as cur:
                positions = letter_keys(items)
                first = letter_key(items[0])
                cur.execute(_FAILED_AGAIN, (first, describe(error), name, positions))
    return Retried(recovered, len(entries) - recovered)


def _project_again(
    conn: psycopg.Connection[Any], name: str, entries: Sequence[FeedEntry], project: Project
) -> int:
    """Projects dead letters `entries` and deletes them, in one transaction; returns how many."""
    with conn.transaction(), conn.cursor() as cur:
        project(cur, name, entries)
        cur.execute(_DELETE, (name, letter_keys(entries)))
    return len(entries)


def summary(conn: psycopg.Connection[Any]) -> str | None:
    """Returns one line on the dead letters held (how many, of how many streams, the oldest
    failure), None when there are none."""
    row = conn.execute(_SUMMARY).fetchone()
    if row is None or not row[0]:
        return None
    count, streams, since = row
    oldest = conn.execute(_OLDEST, (HELD,)).fetchone()
    first = ""
    if oldest is not None:
        stream, version, error = oldest
        game = printable(bytes(stream).decode("utf-8", "backslashreplace"), 80)
        first = f"; first: {game!r} v{version}: {error}"
    return (
        f"projection: {count} event(s) of {streams} stream(s) set aside as dead letters since"
        f" {since:%Y-%m-%dT%H:%M:%SZ}, retried periodically{first}"
    )
