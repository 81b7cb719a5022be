"""Read leases: which processes have folded a stream up to which version, and for how long.

A process that answers from its own fold of a stream (the game service's bot registry,
`services.game.http.pipeline.follower.RegistryFollower`) holds a lease naming the version it has
folded; it renews the lease after every successful read, and trusts its fold only while
the lease lasts. A writer that must take effect everywhere at once (a token rotated or
revoked) waits, after its append, until no live lease shows an older version: by then
every process either has folded the change or no longer trusts its fold. A process that
stops (or loses the store) stops renewing, and its lease runs out after its time to live.

The Redis adapter (`shared.store.redis_leases.RedisReadLeases`) keeps the leases of every
process and times them by Redis's clock; the twin keeps them in this process.
"""

from __future__ import annotations

import abc
import threading
import time
from collections.abc import Callable


class ReadLeases(abc.ABC):
    """Per holder: the version it has folded and when its lease runs out."""

    @abc.abstractmethod
    def renew(self, holder: str, version: int, ttl_ms: int) -> None:
        """Records that `holder` has folded up to `version`, for `ttl_ms` from now (the
        store's clock). A version below the one held is ignored; the time is renewed."""

    @abc.abstractmethod
    def behind(self, version: int) -> list[str]:
        """Returns the holders whose live lease shows a version below `version` (sorted);
        expired leases are dropped."""

    @abc.abstractmethod
    def release(self, holder: str) -> None:
        """Drops `holder`'s lease (it stops answering from its fold)."""


class InMemoryReadLeases(ReadLeases):
    """ReadLeases held in this process: the embedded default. Thread-safe."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._leases: dict[str, tuple[int, float]] = {}

    def renew(self, holder: str, version: int, ttl_ms: int) -> None:
        with self._lock:
            held = self._leases.get(holder)
            if held is not None and held[1] > self._clock():
                version = max(version, held[0])
            self._leases[holder] = (version, self._clock() + ttl_ms / 1000)

    def behind(self, version: int) -> list[str]:
        with self._lock:
            now = self._clock()
            for holder in [h for h, (_, until) in self._leases.items() if until <= now]:
                del self._leases[holder]
            return sorted(h for h, (held, _) in self._leases.items() if held < version)

    def release(self, holder: str) -> None:
        with self._lock:
            self._leases.pop(holder, None)
