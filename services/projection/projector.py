"""The projection service: copies the global feed into the Postgres archive and views.

Each batch is archived, folded into the views and checkpointed in one transaction, and
acknowledged only after it commits. An entry is new when the archive did not hold its
(game, version) yet: entries redelivered after a crash between commit and ack are skipped,
so nothing is projected twice, and entries claimed late from a dead consumer (older than
the checkpoint) are still projected, so nothing is lost. The checkpoint (the newest
position projected) belongs to one consumer: run one projector per `name` at a time.

An entry that cannot be projected never stops the projection: it becomes a dead letter
(see `services.projection.dead_letters`), retried when `run_forever` starts and every
`retry_s` seconds after.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
import psycopg
from psycopg.types.json import Jsonb

from services.ops.metrics import ProjectionMetrics
from services.projection import dead_letters, ratings
from services.projection.changes import (
    ChallengeChange,
    Created,
    Finished,
    challenge_changes,
    game_changes,
)
from services.projection.queries import SELECT_ARCHIVED, recorded_from_row
from services.projection.retention import Retention
from services.projection.tournament_folds import (
    finished,
    rebuild_tournament_views,
    refold_tournaments,
    update_tournament_views,
)
from services.projection.trimming import FeedTrimmer
from shared.messages.envelope import RecordedEvent
from shared.model import challenges
from shared.model.tournaments.model import KIND
from shared.ports.views.fold import to_datetime
from shared.store.merged import MergedFeedConsumer
from shared.store.port import FeedConsumer, FeedEntry, StoreUnavailable, position_key

log = logging.getLogger(__name__)

Cursor = psycopg.Cursor[Any]

ARCHIVE_COLUMNS = "game_id, version, kind, type, data, schema, recorded_at, feed_position"
"""The columns of an archived event (`archive_row`)."""
ARCHIVE_TYPES = ("text", "integer", "text", "text", "bytea", "integer", "timestamptz", "text")
"""Their PostgreSQL types, as a binary COPY sends them."""
_ARCHIVED = (
    "SELECT game_id, version FROM events JOIN unnest(%b::text[], %b::integer[])"
    " AS batch (game_id, version) USING (game_id, version)"
)
"""Which of a batch's (game, version) keys the archive holds (its primary key's index)."""
_COPY = f"COPY events ({ARCHIVE_COLUMNS}) FROM STDIN (FORMAT BINARY)"
_CREATE_GAME = (
    "INSERT INTO games (game_id, game, ruleset, status, seats, version, created_at, forked_from)"
    " VALUES (%s, %s, %s, 'playing', %s, %s, %s, %s) ON CONFLICT (game_id) DO NOTHING"
)
_BUMP_VERSION = "UPDATE games SET version = GREATEST(version, %s) WHERE game_id = %s"
_FINISH_GAME = "UPDATE games SET status = %s, result = %s, finished_at = %s WHERE game_id = %s"
_CLOSE_CHALLENGE = "DELETE FROM bot_challenges WHERE challenge_id = %s"
_ANSWER_CHALLENGE = "DELETE FROM bot_challenges WHERE challenge_id = %s AND bot = %s"
_WAIT_CHALLENGE = (
    "INSERT INTO bot_challenges (bot, challenge_id, issued_at, expires_at)"
    " VALUES (%s, %s, %s, %s) ON CONFLICT (bot, challenge_id) DO NOTHING"
)


@dataclass(frozen=True)
class RebuildCounts:
    """What a rebuild folded: archived events read, games in the rebuilt view, tournaments
    refolded and rated games folded into the ratings."""

    events: int
    games: int
    tournaments: int = 0
    rated_games: int = 0


def update_views(cur: Cursor, records: Sequence[RecordedEvent]) -> None:
    """Folds `records` (each game's in version order) into the views; idempotent per event.

    Its statements go in one pipeline (one round trip, not one each); an error of one is
    raised at the pipeline's end."""
    changes = game_changes(records)
    challenged = challenge_changes(records)
    with cur.connection.pipeline():
        cur.executemany(
            _CREATE_GAME, [_created_params(c.game_id, c.created) for c in changes if c.created]
        )
        cur.executemany(_BUMP_VERSION, [(c.version, c.game_id) for c in changes])
        cur.executemany(
            _FINISH_GAME, [_finished_params(c.game_id, c.finished) for c in changes if c.finished]
        )
        _update_bot_challenges(cur, challenged)


def _update_bot_challenges(cur: Cursor, changes: Sequence[ChallengeChange]) -> None:
    """Deletes the rows of the challenges closed and of the bots that answered, then inserts
    the rows of the bots the challenges issued here wait for (migration 005)."""
    cur.executemany(_CLOSE_CHALLENGE, [(c.challenge_id,) for c in changes if c.closed])
    answered = [(c.challenge_id, bot) for c in changes if not c.closed for bot in c.answered]
    cur.executemany(_ANSWER_CHALLENGE, answered)
    cur.executemany(
        _WAIT_CHALLENGE,
        [
            (bot, c.challenge_id, to_datetime(c.issued_ms), c.issued.expires_at)
            for c in changes
            if c.issued is not None
            for bot in c.waiting
        ],
    )


def _created_params(game_id: str, created: Created) -> tuple[Any, ...]:
    """Returns the `_CREATE_GAME` parameters of a GameCreated event."""
    event = created.event
    seats = Jsonb(msgspec.to_builtins(event.seats))
    ruleset = Jsonb(event.ruleset)
    forked_from = event.forked_from if isinstance(event.forked_from, str) else None
    at = to_datetime(created.at_ms)
    return game_id, event.game, ruleset, seats, created.version, at, forked_from


def _finished_params(game_id: str, finished: Finished) -> tuple[Any, ...]:
    """Returns the `_FINISH_GAME` parameters of a GameFinished event."""
    result = Jsonb(msgspec.to_builtins(finished.result))
    return finished.result.status, result, to_datetime(finished.at_ms), game_id


def archive_row(entry: FeedEntry) -> tuple[Any, ...]:
    """Returns the archive's row of a feed entry (`ARCHIVE_COLUMNS`)."""
    e = entry.event
    at = to_datetime(e.recorded_at)
    return e.game_id, e.version, e.kind, e.type, e.data, e.schema, at, entry.position


def _archive(cur: Cursor, entries: Sequence[FeedEntry]) -> list[FeedEntry]:
    """Archives `entries`; returns those the archive did not hold yet, in their order (an
    event the batch repeats each time, archived once, at its first position).

    One binary COPY of the batch, in a savepoint (no parameter arrays to build, no conflict
    handling); when it meets a key the archive holds (a redelivery after a crash between
    commit and ack, or an entry another projector archived meanwhile: the COPY waits for its
    commit), it is rolled back, the batch's keys looked up, and only the new rows copied.
    """
    keys = [(e.event.game_id, e.event.version) for e in entries]
    if len(set(keys)) == len(keys):
        try:
            with cur.connection.transaction():
                _copy(cur, entries, keys, set())
            return list(entries)
        except psycopg.errors.UniqueViolation:
            pass
    held = cur.execute(_ARCHIVED, ([k[0] for k in keys], [k[1] for k in keys])).fetchall()
    archived = {(str(row[0]), int(row[1])) for row in held}
    fresh = [e for e, key in zip(entries, keys, strict=True) if key not in archived]
    _copy(cur, entries, keys, archived)
    return fresh


def _copy(
    cur: Cursor, entries: Sequence[FeedEntry], keys: Sequence[tuple[str, int]], skip: set[Any]
) -> None:
    """COPYs the rows of `entries` whose key is not in `skip` (each key once) into the
    archive."""
    with cur.copy(_COPY) as copy:
        copy.set_types(list(ARCHIVE_TYPES))
        for entry, key in zip(entries, keys, strict=True):
            if key not in skip:
                skip.add(key)
                copy.write_row(archive_row(entry))


def _refold_games(cur: Cursor, game_ids: Sequence[str]) -> None:
    """Rewrites the `games` (and `bot_challenges`) rows of `game_ids` from their archived
    events."""
    cur.execute("DELETE FROM games WHERE game_id = ANY(%s)", (list(game_ids),))
    challenge_ids = [
        g.removeprefix(challenges.STREAM_PREFIX)
        for g in game_ids
        if g.startswith(challenges.STREAM_PREFIX)
    ]
    cur.execute("DELETE FROM bot_challenges WHERE challenge_id = ANY(%s)", (challenge_ids,))
    rows = cur.execute(
        SELECT_ARCHIVED + " WHERE game_id = ANY(%s) ORDER BY game_id, version", (list(game_ids),)
    ).fetchall()
    update_views(cur, [recorded_from_row(row) for row in rows])


def project_batch(cur: Cursor, name: str, entries: Sequence[FeedEntry]) -> int:
    """Archives and projects the entries the archive did not hold yet, then moves each of
    their partitions' checkpoints of projection `name` to its newest position projected;
    returns how many were new. (Ratings are the ordered step's: `services.projection.ratings`;
    a finished game below its checkpoint makes this batch refold them.)

    Runs inside the caller's transaction; raises (writing nothing once rolled back) on an
    event that cannot be decoded.
    """
    partitions = sorted({entry.partition for entry in entries})
    done = ratings.partition_checkpoints(cur, name, partitions)
    fresh = _archive(cur, entries)
    if not fresh:
        return 0
    if any(position_key(e.position) <= position_key(done[e.partition]) for e in fresh):
        # Entries claimed from a dead consumer came after newer ones of their partition
        # (whose games may have had no row yet): refold their games from the archive.
        _refold_games(cur, sorted({entry.event.game_id for entry in fresh}))
        refold_tournaments(cur, sorted({e.event.game_id for e in fresh if e.event.kind == KIND}))
        ratings.advance_checkpoints(cur, name, done, fresh)
    else:
        with cur.connection.pipeline():  # the checkpoints go with the views' round trip
            update_views(cur, [entry.event for entry in fresh])
            update_tournament_views(cur, fresh)
            ratings.advance_checkpoints(cur, name, done, fresh)
    late = [position_key(e.position) for e in fresh if finished(e.event)]
    ratings.refold_if_late(cur, name, late)
    return len(fresh)


class Projector:
    """Projects the global feed, read through `consumer`, into the database at `conninfo`.

    With a `retention`, `run_forever` also sweeps finished games' streams out of the event
    store after its batches (at most as often as the retention allows), and with a `trimmer`
    trims the feed of what every consumer group passed. Dead letters are
    counted in `metrics` and retried by `run_forever` at its start and every `retry_s`.
    """

    def __init__(
        self,
        conninfo: str,
        consumer: FeedConsumer,
        name: str = "main",
        retention: Retention | None = None,
        metrics: ProjectionMetrics | None = None,
        retry_s: float = 300.0,
        trimmer: FeedTrimmer | None = None,
        partitions: int | None = None,
    ) -> None:
        self.conninfo = conninfo
        self.consumer = consumer
        owned = consumer.partitions if isinstance(consumer, MergedFeedConsumer) else [0]
        self.owned = owned
        """The partitions this projector reads."""
        self.partitions = partitions if partitions is not None else len(owned)
        """How many partitions the feed has (the ordered step waits for all of them)."""
        self.name = name
        self.retention = retention
        self.trimmer = trimmer
        self.metrics = metrics if metrics is not None else ProjectionMetrics()
        self.retry_s = retry_s
        self._conn: psycopg.Connection[Any] | None = None

    def run_once(self, count: int = 500, block_ms: int = 0) -> int:
        """Projects one batch of up to `count` entries, then acks it; returns how many were new."""
        return self._step(count, block_ms)[1]

    def run_forever(
        self,
        stop: threading.Event,
        count: int = 500,
        block_ms: int = 1000,
        pause_s: float = 0.1,
        beat: Callable[[], None] | None = None,
        linger_s: float = 0.0,
    ) -> None:
        """Projects batches until `stop` is set; pauses when idle and after an outage, and
        for `linger_s` after a batch smaller than `count` (so that under load the feed
        gathers bigger batches: fewer transactions and round trips per event).

        Calls `beat` at every turn of the loop (a heartbeat: the loop is alive), outage or not.
        """
        retry_at = 0.0
        try:
            while not stop.is_set():
                if beat is not None:
                    beat()
                try:
                    if time.monotonic() >= retry_at:
                        self.retry_dead_letters()
                        retry_at = time.monotonic() + self.retry_s
                    read, _ = self._step(count, block_ms)
                    if self.retention is not None:
                        self.retention.maybe_sweep()
                    if self.trimmer is not None:
                        self.trimmer.maybe_trim()
                except (psycopg.OperationalError, StoreUnavailable) as error:
                    log.warning("projection %s: %s; retrying", self.name, error)
                    read = 0
                if not read:
                    stop.wait(pause_s)
                elif read < count and linger_s > 0:
                    stop.wait(linger_s)
        finally:
            self.close()

    def __enter__(self) -> Projector:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the database connection, if open."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def retry_dead_letters(self) -> dead_letters.Retried:
        """Projects the dead letters again; those that project leave the dead-letter table."""
        retried = dead_letters.retry(self._connection(), self.name, project_batch)
        if retried.recovered or retried.held:
            log.warning(
                "projection %s: %s dead letters projected on a retry, %s still held",
                self.name, retried.recovered, retried.held,
            )  # fmt: skip
        self.metrics.recovered.inc(retried.recovered)
        return retried

    def _step(self, count: int, block_ms: int) -> tuple[int, int]:
        """Reads, projects and acks one batch (an entry that cannot be projected becomes a
        dead letter), then moves the watermarks and runs the ordered step; returns how many
        entries were read and new."""
        entries = self.consumer.read(count, block_ms)
        if entries:
            projected = dead_letters.project_guarded(
                self._connection(), self.name, entries, project_batch
            )
            self.metrics.dead_lettered.inc(projected.dead)
            self.consumer.ack_entries(entries)
        watermark = self._watermark(entries, count)
        if watermark is not None:
            ratings.fold_ordered_ratings(
                self._connection(), self.name, self.partitions, self.owned, watermark
            )
        return len(entries), projected.fresh if entries else 0

    def _watermark(self, entries: Sequence[FeedEntry], count: int) -> tuple[int, int] | None:
        """Returns the key below which this projector has now projected everything of its
        partitions: a merged read's clock when it handed out all before it, else (one
        partition, positions only increasing) just past a read that was not full."""
        if isinstance(self.consumer, MergedFeedConsumer):
            return self.consumer.watermark
        if entries and len(entries) < count:
            return ratings.after(max((e.position for e in entries), key=position_key))
        return None

    def _connection(self) -> psycopg.Connection[Any]:
        """Returns the open connection, opening a new one when there is none or it broke."""
        if self._conn is None or self._conn.closed:
            self._conn = psycopg.connect(self.conninfo, autocommit=True)
        return self._conn


def rebuild(conninfo: str, chunk: int = 1000, name: str = "main") -> RebuildCounts:
    """Rebuilds every view (games, bot challenges, tournaments, ratings) from the archive, in
    one transaction; the ratings checkpoint of projection `name` then stands past every game
    it rated.

    The archive is untouched.
    """
    with psycopg.connect(conninfo, autocommit=True) as conn, conn.transaction():
        conn.execute("TRUNCATE games, bot_challenges")
        events = 0
        with conn.cursor(name="rebuild_archive") as source, conn.cursor() as target:
            source.execute(SELECT_ARCHIVED + " ORDER BY game_id, version")
            while rows := source.fetchmany(chunk):
                update_views(target, [recorded_from_row(row) for row in rows])
                events += len(rows)
        row = conn.execute("SELECT count(*) FROM games").fetchone()
        tournaments, rated = rebuild_tournament_views(conn, chunk)
        with conn.cursor() as cur:
            ratings.reset_after_rebuild(cur, name)
    return RebuildCounts(events, row[0] if row else 0, tournaments, rated)
