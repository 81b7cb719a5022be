"""The PostgreSQL event archive: the `EventArchive` port over the projection's `events` table.

It holds what the projection has committed, so it lags the event store by the
projection's delay; a game is read from it only once its stream left the store.
"""

from __future__ import annotations

import psycopg

from services.projection.queries import Target, archived_events, connected
from shared.messages.envelope import RecordedEvent
from shared.messages.text import unstorable
from shared.ports.archive import EventArchive
from shared.store.port import StoreUnavailable

_HELD = "SELECT count(*) FROM events WHERE game_id = %s AND version BETWEEN 1 AND %s"


class PostgresEventArchive(EventArchive):
    """The events archived in the projection's database at `target`; an unreachable
    database raises StoreUnavailable (a 503 in the API)."""

    def __init__(self, target: Target) -> None:
        self._target = target

    def read(self, game_id: str) -> list[RecordedEvent]:
        if unstorable(game_id) is not None:
            return []  # no archived game has such an id (PostgreSQL text cannot hold it)
        try:
            return archived_events(self._target, game_id)
        except psycopg.OperationalError as error:
            raise StoreUnavailable(f"the archive's database is unavailable: {error}") from error

    def holds(self, game_id: str, version: int) -> bool:
        if unstorable(game_id) is not None:
            return False
        try:
            with connected(self._target) as conn:
                row = conn.execute(_HELD, (game_id, version)).fetchone()
        except psycopg.OperationalError as error:
            raise StoreUnavailable(f"the archive's database is unavailable: {error}") from error
        # (game_id, version) is the primary key: a count of `version` is every version.
        return row is not None and row[0] == version
