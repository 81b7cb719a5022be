"""How far the projection is behind the feed: entries not yet projected, and their age."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import psycopg
import redis
from redis.cluster import RedisCluster

from shared.store.port import position_key

_CHECKPOINT = "SELECT position FROM projection_checkpoints WHERE name = %s"


def projection_lag(
    client: redis.Redis | RedisCluster,
    feed_keys: str | Sequence[str],
    group: str,
    conninfo: str | psycopg.Connection[Any],
    name: str = "main",
    timeout_s: int = 2,
) -> tuple[int, float]:
    """Returns (entries, seconds) behind: the consumer group's undelivered and unacked entries
    on the feeds `feed_keys` (every partition's), and the age of the oldest of their entries
    past checkpoint `name` (0: caught up).

    `conninfo` is the database's, or an open autocommit connection to it (kept by a caller
    that asks often).
    """
    keys = [feed_keys] if isinstance(feed_keys, str) else list(feed_keys)
    entries = 0
    for key in keys:
        if not client.exists(key):
            continue
        for info in client.xinfo_groups(key):
            if _text(info.get("name")) == group:
                entries += int(info.get("lag") or 0) + int(info.get("pending") or 0)
    if isinstance(conninfo, psycopg.Connection):
        row = conninfo.execute(_CHECKPOINT, (name,)).fetchone()
    else:
        with psycopg.connect(conninfo, autocommit=True, connect_timeout=timeout_s) as conn:
            row = conn.execute(_CHECKPOINT, (name,)).fetchone()
    checkpoint = str(row[0]) if row else "0-0"
    firsts = [client.xrange(key, min=f"({checkpoint}", count=1) for key in keys]
    following = [position_key(_text(first[0][0]))[0] for first in firsts if first]
    if not following:
        return entries, 0.0
    return entries, max(0.0, time.time() - min(following) / 1000)


def _text(value: object) -> str:
    """Returns a Redis reply value as text."""
    return value.decode() if isinstance(value, bytes) else str(value)
