"""Redis adapters of the rate limiter and the game slots, shared by every server process.

Keys under the namespace `ns`: `{ns}ratelimit:<key>` (a counter expiring with its window)
and `{ns}botgames:<name@version>` (a sorted set: game ids scored +inf, reservations scored
by when they expire, in Redis's milliseconds). Each check is one Lua script, atomic in Redis.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import redis
from redis.cluster import RedisCluster

from shared.ports.game_slots import GameSlots
from shared.ports.ratelimit import RateLimiter
from shared.store.redis_common import LUA_NOW_MS, reachable

_COUNT = """
local count = redis.call('INCR', KEYS[1])
if count == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
local left = redis.call('PTTL', KEYS[1])
if left < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  left = tonumber(ARGV[1])
end
return {count, left}
"""
"""KEYS: the counter. ARGV: the window in ms. Returns the count and the ms left of the window."""

_RESERVE = (
    LUA_NOW_MS
    + """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ms)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then
  return 0
end
redis.call('ZADD', KEYS[1], ms + tonumber(ARGV[3]), ARGV[2])
return 1
"""
)
"""KEYS: the bot's slots. ARGV: cap, reservation, ttl in ms. Returns 1 if it reserved."""


class RedisRateLimiter(RateLimiter):
    """A fixed-window RateLimiter counting in Redis: INCR, and PEXPIRE on a window's first."""

    def __init__(
        self,
        client: redis.Redis | RedisCluster,
        limit: int,
        window_s: int,
        namespace: str = "cardarena:",
    ) -> None:
        super().__init__(limit, window_s)
        self._namespace = namespace
        self._script = client.register_script(_COUNT)

    def _count(self, key: str) -> tuple[int, int]:
        with reachable():
            reply: Any = self._script(
                keys=[f"{self._namespace}ratelimit:{key}"], args=[self.window_s * 1000]
            )
        return int(reply[0]), int(reply[1])


class RedisGameSlots(GameSlots):
    """GameSlots in Redis sorted sets; a reservation's expiry uses Redis's clock."""

    def __init__(
        self,
        client: redis.Redis | RedisCluster,
        namespace: str = "cardarena:",
        prefix: str = "botgames:",
    ) -> None:
        self._client = client
        self._namespace = namespace
        self._prefix = prefix
        """Another prefix keeps other slots (a bot's open challenges: `botchallenges:`)."""
        self._reserve = client.register_script(_RESERVE)

    def _key(self, bot: str) -> str:
        """Returns the key of the bot's slots."""
        return f"{self._namespace}{self._prefix}{bot}"

    def reserve(self, bot: str, reservation: str, cap: int, ttl_ms: int) -> bool:
        with reachable():
            reply: Any = self._reserve(keys=[self._key(bot)], args=[cap, reservation, ttl_ms])
        return int(reply) == 1

    def confirm(self, bot: str, reservation: str, game_id: str) -> None:
        with reachable(), self._client.pipeline(transaction=True) as pipe:
            pipe.zrem(self._key(bot), reservation)
            pipe.zadd(self._key(bot), {game_id: float("inf")})
            pipe.execute()

    def cancel(self, bot: str, reservation: str) -> None:
        with reachable():
            self._client.zrem(self._key(bot), reservation)

    def games(self, bot: str) -> list[str]:
        with reachable():
            members: Any = self._client.zrangebyscore(self._key(bot), "+inf", "+inf")
        return [m.decode() if isinstance(m, bytes) else str(m) for m in members]

    def release(self, bot: str, game_ids: Sequence[str]) -> None:
        if not game_ids:
            return
        with reachable():
            self._client.zrem(self._key(bot), *game_ids)
