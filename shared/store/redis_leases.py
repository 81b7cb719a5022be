"""The Redis adapter of the read leases, shared by every server process.

One hash under the namespace `ns`, `{ns}leases:<name>`: a field per holder, its value
`<version>:<expiry>` with the expiry in Redis's milliseconds (`TIME`), so that every process
is timed by one clock. Each call is one Lua script, atomic in Redis; the hash is one key
(one slot on a Redis Cluster), written once per holder and renewal, read once per change.
"""

from __future__ import annotations

from typing import Any

import redis
from redis.cluster import RedisCluster

from shared.ports.leases import ReadLeases
from shared.store.redis_common import LUA_NOW_MS, reachable, text_of

_RENEW = (
    LUA_NOW_MS
    + """
local version = tonumber(ARGV[2])
local held = redis.call('HGET', KEYS[1], ARGV[1])
if held then
  local sep = string.find(held, ':', 1, true)
  if tonumber(string.sub(held, sep + 1)) > ms then
    version = math.max(version, tonumber(string.sub(held, 1, sep - 1)))
  end
end
redis.call('HSET', KEYS[1], ARGV[1], version .. ':' .. (ms + tonumber(ARGV[3])))
return version
"""
)
"""KEYS: the leases. ARGV: holder, version, ttl in ms. Returns the version held."""

_BEHIND = (
    LUA_NOW_MS
    + """
local version = tonumber(ARGV[1])
local behind = {}
local leases = redis.call('HGETALL', KEYS[1])
for i = 1, #leases, 2 do
  local held = leases[i + 1]
  local sep = string.find(held, ':', 1, true)
  if tonumber(string.sub(held, sep + 1)) <= ms then
    redis.call('HDEL', KEYS[1], leases[i])
  elseif tonumber(string.sub(held, 1, sep - 1)) < version then
    table.insert(behind, leases[i])
  end
end
return behind
"""
)
"""KEYS: the leases. ARGV: version. Drops expired leases; returns the holders behind."""


class RedisReadLeases(ReadLeases):
    """ReadLeases in a Redis hash, timed by Redis's clock."""

    def __init__(
        self, client: redis.Redis | RedisCluster, name: str, namespace: str = "cardarena:"
    ) -> None:
        self._client = client
        self._key = f"{namespace}leases:{name}"
        self._renew = client.register_script(_RENEW)
        self._behind = client.register_script(_BEHIND)

    def renew(self, holder: str, version: int, ttl_ms: int) -> None:
        with reachable():
            self._renew(keys=[self._key], args=[holder, version, ttl_ms])

    def behind(self, version: int) -> list[str]:
        with reachable():
            reply: Any = self._behind(keys=[self._key], args=[version])
        return sorted(text_of(holder) for holder in reply)

    def release(self, holder: str) -> None:
        with reachable():
            self._client.hdel(self._key, holder)
