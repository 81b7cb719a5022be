"""Redis adapters of the rate limiter and the game slots, shared by every server process.

Keys under the namespace `ns`: `{ns}ratelimit:<key>` (a token bucket: a hash expiring once full)
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

_TAKE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local held = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = limit
if held[1] and held[2] then
  local elapsed = math.max(0, now - tonumber(held[2]))
  tokens = math.min(limit, tonumber(held[1]) + elapsed * limit / window)
end
local allowed = 0
if tokens >= cost then
  tokens = tokens - cost
  allowed = 1
end
local shown = string.format('%.17g', tokens)
if tokens < limit then
  redis.call('HSET', KEYS[1], 'tokens', shown, 'at', string.format('%.17g', now))
  redis.call('PEXPIRE', KEYS[1], math.ceil((limit - tokens) * window / limit / 1000) + 1000)
else
  redis.call('DEL', KEYS[1])
end
return {allowed, shown}
"""
"""KEYS: the bucket (a hash: `tokens`, `at` in Redis's microseconds). ARGV: its size, the
window in microseconds, the cost. Returns 1 if it took the cost, and the tokens left. A
bucket that is full again is deleted (absent is full); one that is not expires once it
would be full."""

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
    """A token-bucket RateLimiter in Redis: one Lua script refills and takes, atomically."""

    def __init__(
        self,
        client: redis.Redis | RedisCluster,
        limit: int,
        window_s: int,
        namespace: str = "cardarena:",
    ) -> None:
        super().__init__(limit, window_s)
        self._namespace = namespace
        self._script = client.register_script(_TAKE)

    def _take(self, key: str, cost: int) -> tuple[bool, float]:
        with reachable():
            reply: Any = self._script(
                keys=[f"{self._namespace}ratelimit:{key}"],
                args=[self.limit, self.window_s * 1_000_000, cost],
            )
        left = reply[1].decode() if isinstance(reply[1], bytes) else str(reply[1])
        return int(reply[0]) == 1, float(left)


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
