"""Feed trimming: each partition's feed stays bounded.

An entry leaves the feed once every consumer group of its partition has passed it
(delivered and acknowledged: the projection acknowledges a batch only after committing it)
and it is older than the feed retention (setting `feed_retention_seconds`, so that a bot's
event stream can resume with Last-Event-ID within it); never before (`EventStore.trim_feed`).
The projection service trims after its batches, at most once per `every_s`. Streams are
untouched (`services.projection.retention` drops them once archived).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from shared.store.port import EventStore

log = logging.getLogger(__name__)


class FeedTrimmer:
    """Trims `store`'s feed of entries older than `retention_s` that every group passed."""

    def __init__(
        self,
        store: EventStore,
        retention_s: float,
        *,
        every_s: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
        now_ms: Callable[[], int] = lambda: int(time.time() * 1000),
    ) -> None:
        self._store = store
        self._retention_ms = int(retention_s * 1000)
        self._every_s = every_s
        self._clock = clock
        self._now_ms = now_ms
        self._last: float | None = None

    def maybe_trim(self) -> int:
        """Trims unless the last trim was less than `every_s` ago; returns the entries removed."""
        now = self._clock()
        if self._last is not None and now - self._last < self._every_s:
            return 0
        self._last = now
        return self.trim()

    def trim(self) -> int:
        """Trims now; returns how many entries left the feed."""
        removed = self._store.trim_feed(self._now_ms() - self._retention_ms)
        if removed:
            log.info("feed: trimmed %d entries every consumer group had passed", removed)
        return removed
