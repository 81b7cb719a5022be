"""The Redis adapter of the outbox (`shared.ports.outbox`), in the event store's Redis.

One hash, `{ns}outbox`: field `Pending.key`, value the record's token, a space and the work
as JSON. A record is dropped by a script that deletes the field only while it holds that
token, so a later record of the same key (the work failed again since it was read) stays.
"""

from __future__ import annotations

from typing import Any

import msgspec
import redis
from redis.cluster import RedisCluster

from shared.ports.outbox import BATCH, Outbox, OutboxEntry, Pending, new_entry
from shared.store.redis_common import reachable

_DONE = """
local value = redis.call('HGET', KEYS[1], ARGV[1])
if value and string.sub(value, 1, string.len(ARGV[2]) + 1) == ARGV[2] .. ' ' then
  return redis.call('HDEL', KEYS[1], ARGV[1])
end
return 0
"""
"""KEYS: the outbox. ARGV: the record's key and token. Returns 1 if it dropped the record."""


class RedisOutbox(Outbox):
    """The outbox as a Redis hash under `namespace`, shared by every process of a deployment."""

    def __init__(self, client: redis.Redis | RedisCluster, namespace: str = "cardarena:") -> None:
        self._client = client
        self._key = f"{namespace}outbox"
        self._done = client.register_script(_DONE)

    def put(self, pending: Pending) -> OutboxEntry:
        entry = new_entry(pending)
        with reachable():
            value = entry.token.encode() + b" " + msgspec.json.encode(pending)
            self._client.hset(self._key, pending.key, value)
        return entry

    def entries(self, limit: int = BATCH) -> list[OutboxEntry]:
        found: list[OutboxEntry] = []
        with reachable():
            for _, value in self._client.hscan_iter(self._key, count=limit):
                token, _, work = bytes(value).partition(b" ")
                found.append(OutboxEntry(msgspec.json.decode(work, type=Pending), token.decode()))
                if len(found) >= limit:
                    break
        return found

    def done(self, entry: OutboxEntry) -> bool:
        with reachable():
            reply: Any = self._done(keys=[self._key], args=[entry.pending.key, entry.token])
        return int(reply) == 1

    def size(self) -> int:
        with reachable():
            return int(self._client.hlen(self._key))
