"""The rate-limit port: a token bucket per key, and its in-memory twin.

Each key (a bot token's id, with the budget it is charged to) holds a bucket of `limit`
tokens, full at first, that refills evenly at `limit` tokens per `window_s` seconds, never
past full. A request takes `cost` tokens (1; 0 reads the bucket and takes nothing) when
the bucket holds that many, else it is refused and takes nothing. So a key makes at most
`limit` requests in a burst and `limit` per window sustained, and a key idle for a window
is full again: no window edge lets a burst through twice. The Redis adapter
(`shared.store.redis_limits.RedisRateLimiter`) keeps the buckets in Redis, timed by
Redis's clock, so every server process sharing that Redis shares them; the twin keeps them
in this process only.
"""

from __future__ import annotations

import abc
import math
import threading
import time
from collections.abc import Callable

import msgspec


class RateDecision(msgspec.Struct, frozen=True):
    """One request counted against a bucket: whether it was allowed, the whole requests the
    bucket still allows at once (`remaining`), the whole seconds until it allows one more
    (`retry_after`: 0 when allowed, at least 1 when refused; a look, at cost 0, says when
    the bucket allows one request: 0 if it does), the whole seconds until it is
    full again (`reset`: 0 when full), and its size (`limit`; 0: unlimited)."""

    allowed: bool
    remaining: int
    retry_after: int
    reset: int = 0
    limit: int = 0


class RateLimiter(abc.ABC):
    """Token buckets per key; `limit` 0 allows everything, counting nothing."""

    def __init__(self, limit: int, window_s: int) -> None:
        if limit < 0 or window_s < 1:
            raise ValueError(
                f"a rate limit needs limit >= 0 and window >= 1s, not {limit}/{window_s}s"
            )
        self.limit = limit
        self.window_s = window_s

    @property
    def per_second(self) -> float:
        """Returns the tokens a bucket gains per second."""
        return self.limit / self.window_s

    def hit(self, key: str, cost: int = 1) -> RateDecision:
        """Takes `cost` tokens of `key`'s bucket (0: none, a look); returns the decision."""
        if cost < 0:
            raise ValueError(f"a request costs 0 tokens or more, not {cost}")
        if self.limit == 0:
            return RateDecision(allowed=True, remaining=0, retry_after=0)
        allowed, left = self._take(key, cost)
        rate = self.per_second
        wanted = max(cost, 1)
        retry_after = 0 if allowed and left >= wanted - cost else _seconds(wanted - left, rate)
        reset = math.ceil(round((self.limit - left) / rate, 6))
        return RateDecision(allowed, math.floor(left + 1e-9), retry_after, reset, self.limit)

    @abc.abstractmethod
    def _take(self, key: str, cost: int) -> tuple[bool, float]:
        """Atomically refills `key`'s bucket to now and takes `cost` tokens if it holds them;
        returns whether it did and the tokens left (fractional)."""


def _seconds(tokens: float, rate: float) -> int:
    """Returns the whole seconds (at least 1) a bucket gaining `rate` a second takes to
    gain `tokens`."""
    return max(1, math.ceil(round(tokens / rate, 6)))


class InMemoryRateLimiter(RateLimiter):
    """A RateLimiter keeping its buckets in this process: the embedded default. Thread-safe."""

    def __init__(
        self, limit: int, window_s: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__(limit, window_s)
        self._clock = clock
        self._lock = threading.Lock()
        self._buckets: dict[str, tuple[float, float]] = {}
        """Per key: the tokens its bucket held, and when (a key not here is full)."""
        self._swept = clock()

    def _take(self, key: str, cost: int) -> tuple[bool, float]:
        with self._lock:
            now = self._clock()
            self._forget_full(now)
            held, at = self._buckets.get(key, (float(self.limit), now))
            tokens = min(float(self.limit), held + (now - at) * self.per_second)
            allowed = tokens >= cost
            if allowed:
                tokens -= cost
            if tokens < self.limit:
                self._buckets[key] = (tokens, now)
            else:
                self._buckets.pop(key, None)
            return allowed, tokens

    def _forget_full(self, now: float) -> None:
        """Drops, once a window, the buckets that have refilled, so idle keys take no memory."""
        if now - self._swept < self.window_s:
            return
        self._swept = now
        rate = self.per_second
        full = [
            k for k, (held, at) in self._buckets.items() if held + (now - at) * rate >= self.limit
        ]
        for key in full:
            del self._buckets[key]
