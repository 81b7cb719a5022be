"""Stream retention: finished games' streams leave the event store once archived and old.

A game's stream is dropped (`EventStore.drop`) when the game finished more than the
retention (setting `retention_seconds`) ago and the archive holds every one of its events;
never before. Readers then take its log from the archive (`shared.ports.archive.game_log`). The
projection service sweeps after its batches, at most once per `every_s`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from services.projection.queries import Target, connected
from shared.ports.archive import EventArchive
from shared.store.port import EventStore

log = logging.getLogger(__name__)

_DUE = (
    "SELECT game_id FROM games WHERE finished_at < %s AND stream_dropped_at IS NULL"
    " ORDER BY finished_at, game_id LIMIT %s"
)
_MARK = "UPDATE games SET stream_dropped_at = now() WHERE game_id = ANY(%s)"


class Retention:
    """Drops from `store` the streams of games finished over `retention_s` seconds ago (as
    the projection's `games` view at `target` says) once `archive` holds all their events."""

    def __init__(
        self,
        target: Target,
        store: EventStore,
        archive: EventArchive,
        retention_s: int,
        *,
        every_s: float = 60,
        batch: int = 500,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._target = target
        self._store = store
        self._archive = archive
        self._retention = timedelta(seconds=retention_s)
        self._every_s = every_s
        self._batch = batch
        self._clock = clock
        self._last: float | None = None

    def maybe_sweep(self) -> list[str]:
        """Sweeps unless the last sweep was less than `every_s` ago; returns the dropped games."""
        now = self._clock()
        if self._last is not None and now - self._last < self._every_s:
            return []
        self._last = now
        return self.sweep()

    def sweep(self, now: datetime | None = None) -> list[str]:
        """Drops the streams due at `now` (default: the current time); returns their games.

        A due game whose archive lacks some of its events keeps its stream until a later
        sweep finds them archived.
        """
        cutoff = (now or datetime.now(UTC)) - self._retention
        dropped: list[str] = []
        with connected(self._target) as conn:
            while True:
                rows = conn.execute(_DUE, (cutoff, self._batch)).fetchall()
                done = [game_id for (game_id,) in rows if self._drop(game_id, dropped)]
                if done:
                    conn.execute(_MARK, (done,))
                if len(rows) < self._batch or not done:
                    break
        if dropped:
            log.info("retention: dropped the streams of %d archived games", len(dropped))
        return dropped

    def _drop(self, game_id: str, dropped: list[str]) -> bool:
        """Drops the game's stream if the archive holds all of it (adding it to `dropped`);
        returns whether the game needs no further sweep."""
        last = self._store.version(game_id)
        if last and not self._archive.holds(game_id, last):
            return False
        if self._store.drop(game_id):
            dropped.append(game_id)
        return True
