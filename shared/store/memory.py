"""The in-memory event store: the embedded default and the store of unit tests."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

from shared.store.port import (
    AppendResult,
    ConcurrencyConflict,
    EventStore,
    FeedEntry,
    IdempotencyKeyReused,
    NewEvent,
    RecordedEvent,
)


class InMemoryEventStore(EventStore):
    """A thread-safe EventStore held in this process; feed positions are `"<n>-0"`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._streams: dict[str, list[RecordedEvent]] = {}
        self._feed: list[RecordedEvent] = []
        self._keys: dict[tuple[str, str], tuple[AppendResult, str]] = {}

    def append(
        self,
        game_id: str,
        kind: str,
        expected_version: int,
        events: Sequence[NewEvent],
        idempotency_key: str | None = None,
        fingerprint: str = "",
    ) -> AppendResult:
        with self._lock:
            if idempotency_key is not None:
                known = self._keys.get((game_id, idempotency_key))
                if known is not None:
                    first, known_fingerprint = known
                    if known_fingerprint and fingerprint and known_fingerprint != fingerprint:
                        raise IdempotencyKeyReused(game_id, idempotency_key)
                    return AppendResult(first.first_version, first.last_version, replayed=True)
            stream = self._streams.setdefault(game_id, [])
            if len(stream) != expected_version:
                raise ConcurrencyConflict(game_id, expected_version, len(stream))
            now = int(time.time() * 1000)
            for offset, event in enumerate(events, start=1):
                recorded = RecordedEvent(
                    game_id=game_id,
                    kind=kind,
                    version=expected_version + offset,
                    type=event.type,
                    data=event.data,
                    recorded_at=now,
                )
                stream.append(recorded)
                self._feed.append(recorded)
            result = AppendResult(expected_version + 1, expected_version + len(events))
            if idempotency_key is not None:
                self._keys[(game_id, idempotency_key)] = (result, fingerprint)
            return result

    def read(self, game_id: str, after: int = 0, limit: int | None = None) -> list[RecordedEvent]:
        with self._lock:
            events = self._streams.get(game_id, [])[after:]
        return events if limit is None else events[:limit]

    def version(self, game_id: str) -> int:
        with self._lock:
            return len(self._streams.get(game_id, []))

    def read_feed(self, after: str = "0", count: int = 100) -> list[FeedEntry]:
        start = int(after.split("-")[0])
        with self._lock:
            chunk = self._feed[start : start + count]
        return [
            FeedEntry(position=f"{start + i + 1}-0", event=event) for i, event in enumerate(chunk)
        ]
