"""The rate-limit port: a fixed-window request counter per key, and its in-memory twin.

Each key (a bot token's id) may make `limit` requests per window of `window_s` seconds;
a window starts at the key's first request after the last one ended. The Redis adapter
(`shared.store.redis_limits.RedisRateLimiter`) counts in Redis, so every server process
sharing that Redis shares the limit; the twin counts in this process only.
"""

from __future__ import annotations

import abc
import math
import threading
import time
from collections.abc import Callable

import msgspec


class RateDecision(msgspec.Struct, frozen=True):
    """One counted request: whether it is within the limit, how many more the window allows,
    and the whole seconds until the window ends (at least 1 when refused).
    """

    allowed: bool
    remaining: int
    retry_after: int


class RateLimiter(abc.ABC):
    """Counts requests per key in fixed windows; `limit` 0 allows everything, counting nothing."""

    def __init__(self, limit: int, window_s: int) -> None:
        if limit < 0 or window_s < 1:
            raise ValueError(
                f"a rate limit needs limit >= 0 and window >= 1s, not {limit}/{window_s}s"
            )
        self.limit = limit
        self.window_s = window_s

    def hit(self, key: str) -> RateDecision:
        """Counts one request of `key`; returns whether it is within the limit."""
        if self.limit == 0:
            return RateDecision(allowed=True, remaining=0, retry_after=0)
        count, left_ms = self._count(key)
        allowed = count <= self.limit
        retry_after = max(1, math.ceil(left_ms / 1000)) if not allowed else 0
        return RateDecision(allowed, max(0, self.limit - count), retry_after)

    @abc.abstractmethod
    def _count(self, key: str) -> tuple[int, int]:
        """Atomically counts one request of `key`; returns the window's count with it, and
        the milliseconds left of the window.
        """


class InMemoryRateLimiter(RateLimiter):
    """A RateLimiter counting in this process: the embedded default. Thread-safe."""

    def __init__(
        self, limit: int, window_s: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__(limit, window_s)
        self._clock = clock
        self._lock = threading.Lock()
        self._windows: dict[str, tuple[int, float]] = {}
        """Per key: the count of its window and when the window ends."""

    def _count(self, key: str) -> tuple[int, int]:
        with self._lock:
            now = self._clock()
            count, ends = self._windows.get(key, (0, now))
            if ends <= now:
                self._forget_ended(now)
                count, ends = 0, now + self.window_s
            self._windows[key] = (count + 1, ends)
            return count + 1, math.ceil((ends - now) * 1000)

    def _forget_ended(self, now: float) -> None:
        """Drops the windows that have ended, so idle keys take no memory."""
        for key in [key for key, (_, ends) in self._windows.items() if ends <= now]:
            del self._windows[key]
