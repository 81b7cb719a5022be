"""The stack's bot index: the `BotIndex` port over the projection's views and the feed's tail.

What the projection has committed is read from PostgreSQL at its checkpoint, in the same
transaction as the checkpoint (the projector writes its views and its checkpoint in one):
a bot's running games from `games` (its index `games_playing_seats`, migration 005), the
challenges waiting for it from `bot_challenges`. What it has not is read from the feed:
this process keeps only the news (`shared.ports.bot_index.bot_news`) of the entries at or
after the last checkpoint it saw (the feed keeps every entry after every checkpoint), and
drops what a newer checkpoint covers. So neither the start-up nor the memory of a process
grows with the history: they grow with the projection's lag.

The projection's dead letters (`services.projection.dead_letters`) are behind its checkpoint
but not in its views: every read folds them too (they hold the whole feed entry), so a
stream held there (a game created, a challenge issued, finished or closed) is indexed as the
feed says; an entry that does not decode is skipped, here as by the game service.

The seats of a game come from its first event (`GameCreated`) in the store, or from its
`games` row once its stream was dropped (retention), kept in a bounded LRU cache.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import msgspec
import psycopg

from services.projection.queries import Target, connected
from services.projection.ratings import lowest_watermark
from shared.messages.common import Seat
from shared.ports.bot_index import (
    Answered,
    BotIndex,
    BoundSeats,
    Closed,
    Created,
    Finished,
    Issued,
    News,
    bot_news,
    bound_seats,
)
from shared.ports.views.port import ViewsUnavailable
from shared.store.port import EventStore, FeedEntry, cursor_of, own_position, position_key

log = logging.getLogger(__name__)

Key = tuple[int, int]
"""A feed position's order key (`shared.store.port.position_key`)."""

_MAX_SEQ = 2**64 - 1

_SNAPSHOT = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"
_DEAD_LETTERS = "SELECT entry FROM projection_dead_letters WHERE name = %s"
_RUNNING = (
    "SELECT game_id, seats FROM games WHERE status = 'playing' AND ({seats})"
    " ORDER BY created_at, game_id"
)
"""A bot's running games, on the partial GIN index `games_playing_seats` (one `seats @>` per
operand of `bot_selectors`)."""
_SEATS = "SELECT seats FROM games WHERE game_id = %s"
_CHALLENGES = (
    "SELECT challenge_id FROM bot_challenges WHERE bot = %s AND expires_at > %s"
    " ORDER BY issued_at, challenge_id"
)
_ENTRY = msgspec.msgpack.Decoder(FeedEntry)
_SEAT_LIST = list[Seat]


@dataclass(frozen=True)
class _Noted:
    """The news of one feed entry, with its partition and its position there."""

    partition: int
    key: Key
    news: News


@dataclass(frozen=True)
class _Snapshot:
    """What the projection had committed in one transaction: its checkpoint, some rows of
    its views, and the news of its dead letters (in feed order)."""

    checkpoint: Key
    rows: list[tuple[Any, ...]]
    dead: list[News]


def before(key: Key) -> str:
    """Returns the position just before `key`: a read after it starts at `key` itself."""
    ms, seq = key
    if seq > 0:
        return f"{ms}-{seq - 1}"
    return f"{ms - 1}-{_MAX_SEQ}" if ms > 0 else "0"


def bot_selectors(bot: str) -> list[str]:
    """Returns the `seats @>` operands that find the seats bound to `bot` (`name@version`):
    one per way of splitting it at an `@` (a name or a version may hold one)."""
    parts = bot.split("@")
    return [
        msgspec.json.encode(
            [{"name": "@".join(parts[:i]), "version": "@".join(parts[i:])}]
        ).decode()
        for i in range(1, len(parts))
    ]


def seats_from_json(seats: Any) -> BoundSeats:
    """Returns the bound seats of a `games` row's `seats`."""
    return bound_seats(msgspec.convert(seats, _SEAT_LIST))


def _news(entry: FeedEntry) -> News | None:
    """Returns the news of `entry`, None for none or for an event that does not decode."""
    try:
        return bot_news(entry.event)
    except (msgspec.DecodeError, ValueError) as error:  # UnknownSchemaVersion, a bad date
        event = entry.event
        log.warning("bot index: %s v%s skipped: %s", event.game_id, event.version, error)
        return None


class ProjectedBotIndex(BotIndex):
    """The bot index of `store` over the projection `name`'s views at `target`.

    Keeps the news of the feed after the projection's checkpoint (read again once
    `prune_every` entries came since) and the seats of up to `games_cached` games.
    """

    def __init__(
        self,
        store: EventStore,
        target: Target,
        name: str = "main",
        *,
        games_cached: int = 4096,
        prune_every: int = 1000,
        page: int = 1000,
    ) -> None:
        self._store = store
        self._target = target
        self._name = name
        self._games_cached = games_cached
        self._prune_every = prune_every
        self._page = page
        self._lock = threading.Lock()
        self._cursor: str | None = None
        """The feed cursor the tail was read up to (None: not yet read)."""
        self._tail: list[_Noted] = []
        self._low: Key = (0, 0)
        """The checkpoint the tail starts at: it holds the news of every entry from there."""
        self._since_checkpoint = 0
        self._seats: OrderedDict[str, BoundSeats] = OrderedDict()

    @property
    def tail_size(self) -> int:
        """Returns how many entries' news this index holds (the feed past the checkpoint)."""
        with self._lock:
            return len(self._tail)

    @contextmanager
    def _snapshot(self) -> Iterator[psycopg.Cursor[Any]]:
        """Yields a cursor in a read-only transaction that sees one commit of the projection;
        an unreachable database raises ViewsUnavailable."""
        try:
            with connected(self._target) as conn, conn.transaction(), conn.cursor() as cur:
                cur.execute(_SNAPSHOT)
                yield cur
        except psycopg.OperationalError as error:
            raise ViewsUnavailable(f"the views' database is unavailable: {error}") from error
        except psycopg.errors.UndefinedTable as error:
            message = f"the views' database is not migrated (see /ready): {error}"
            raise ViewsUnavailable(message) from error

    def _checkpoint(self, cur: psycopg.Cursor[Any]) -> Key:
        """Returns the lowest of the partitions' watermarks ((0, 0) while one has none):
        every entry before it, of every partition, is in the views or a dead letter
        (`services.projection.ratings`)."""
        mark = lowest_watermark(cur, self._name, self._store.partitions)
        return mark if mark is not None else (0, 0)

    def _read(self, query: str, params: tuple[Any, ...]) -> _Snapshot:
        """Returns the checkpoint, the rows of `query` and the dead letters, in one snapshot."""
        with self._snapshot() as cur:
            checkpoint = self._checkpoint(cur)
            rows = cur.execute(query, params).fetchall()
            letters = cur.execute(_DEAD_LETTERS, (self._name,)).fetchall()
        entries = sorted((_ENTRY.decode(bytes(row[0])) for row in letters), key=_entry_key)
        return _Snapshot(checkpoint, rows, [n for e in entries if (n := _news(e)) is not None])

    def refresh(self) -> None:
        with self._lock:
            if self._cursor is None:
                with self._snapshot() as cur:
                    checkpoint = self._checkpoint(cur)
                self._cursor = cursor_of([before(checkpoint)] * self._store.partitions)
                self._low = checkpoint
            while page := self._store.read_feed(self._cursor, self._page):
                for entry in page:
                    self._note(entry)
                self._cursor = page[-1].position
                self._since_checkpoint += len(page)
            if self._since_checkpoint >= self._prune_every:
                self._prune()

    def _note(self, entry: FeedEntry) -> None:
        """Keeps the news of `entry`; caches a created game's seats."""
        news = _news(entry)
        if news is None:
            return
        self._tail.append(_Noted(entry.partition, position_key(own_position(entry)), news))
        if isinstance(news, Created):
            self._cache(news.game_id, news.seats)

    def _prune(self) -> None:
        """Drops the news that the projection's checkpoint now covers."""
        with self._snapshot() as cur:
            checkpoint = self._checkpoint(cur)
        self._tail = [noted for noted in self._tail if noted.key >= checkpoint]
        self._low = max(self._low, checkpoint)
        self._since_checkpoint = 0

    def _read_with_news(self, query: str, params: tuple[Any, ...]) -> tuple[_Snapshot, list[News]]:
        """Returns `_read`'s snapshot and the news not in its views: its dead letters, then
        the tail at and after its checkpoint (an entry at the checkpoint itself may be in the
        views: the news fold idempotently). A tail pruned past the snapshot's checkpoint (by
        a refresh meanwhile) takes a newer snapshot; a checkpoint that went back (a restored
        database) resets the index, to start again at the next refresh."""
        for _ in range(2):
            snapshot = self._read(query, params)
            with self._lock:
                if self._low <= snapshot.checkpoint:
                    tail = [n.news for n in self._tail if n.key >= snapshot.checkpoint]
                    return snapshot, [*snapshot.dead, *tail]
        with self._lock:
            self._cursor, self._tail, self._low = None, [], (0, 0)
        raise ViewsUnavailable("the projection's checkpoint went back; the bot index restarts")

    def running(self, bot: str) -> list[str]:
        selectors = bot_selectors(bot)
        if not selectors:
            return []
        query = _RUNNING.format(seats=" OR ".join(["seats @> %s::jsonb"] * len(selectors)))
        snapshot, since = self._read_with_news(query, tuple(selectors))
        games: dict[str, None] = {}
        for game_id, seats in snapshot.rows:
            if bot in seats_from_json(seats):
                games[str(game_id)] = None
        for news in since:
            if isinstance(news, Created) and bot in news.seats:
                games[news.game_id] = None
            elif isinstance(news, Finished):
                games.pop(news.game_id, None)
        return list(games)

    def challenges_of(self, bot: str, now: datetime) -> list[str]:
        snapshot, since = self._read_with_news(_CHALLENGES, (bot, now))
        waiting: dict[str, None] = {str(row[0]): None for row in snapshot.rows}
        for news in since:
            match news:
                case Issued(challenge_id, bots, expires_at):
                    if bot in bots and now < expires_at:
                        waiting.setdefault(challenge_id)
                case Answered(challenge_id, answered) if answered == bot:
                    waiting.pop(challenge_id, None)
                case Closed(challenge_id):
                    waiting.pop(challenge_id, None)
        return list(waiting)

    def seats_of(self, bot: str, game_id: str) -> list[int]:
        with self._lock:
            seats = self._seats.get(game_id)
            if seats is not None:
                self._seats.move_to_end(game_id)
        if seats is None:
            seats = self._seats_read(game_id)
            if seats is None:
                return []
            with self._lock:
                self._cache(game_id, seats)
        return list(seats.get(bot, ()))

    def _seats_read(self, game_id: str) -> BoundSeats | None:
        """Returns the bound seats of `game_id` from its first event, or from its `games` row
        once its stream was dropped; {} for a stream that is not a game's, None for no stream."""
        first = self._store.read(game_id, limit=1)
        if first:
            news = _news(FeedEntry("0", first[0]))
            return news.seats if isinstance(news, Created) else {}
        try:
            with connected(self._target) as conn:
                row = conn.execute(_SEATS, (game_id,)).fetchone()
        except psycopg.OperationalError as error:
            raise ViewsUnavailable(f"the views' database is unavailable: {error}") from error
        return None if row is None else seats_from_json(row[0])

    def _cache(self, game_id: str, seats: BoundSeats) -> None:
        """Caches the seats of `game_id`, forgetting the least recently used game past the
        cache's size (call with the lock held)."""
        self._seats[game_id] = seats
        self._seats.move_to_end(game_id)
        while len(self._seats) > self._games_cached:
            self._seats.popitem(last=False)


def _entry_key(entry: FeedEntry) -> Key:
    """Returns the order key of a dead letter's entry (its partition's position)."""
    return position_key(own_position(entry))
