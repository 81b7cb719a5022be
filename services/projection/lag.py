"""How far the projection is behind the feed: entries not yet projected, and their age, in
total and per partition."""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from typing import Any

import psycopg
import redis
from redis.cluster import RedisCluster

from shared.store.port import position_key

_CHECKPOINTS = "SELECT name, position FROM projection_checkpoints WHERE name = %s OR name ~ %s"

Lag = tuple[int, float]
"""Entries behind, and the age in seconds of the oldest of them (0: caught up)."""


def projection_lag(
    client: redis.Redis | RedisCluster,
    feed_keys: str | Sequence[str],
    group: str,
    conninfo: str | psycopg.Connection[Any],
    name: str = "main",
    timeout_s: int = 2,
) -> Lag:
    """Returns the projection's lag over the feeds `feed_keys` (every partition's, in
    partition order): the entries its consumer group has not delivered or acknowledged, and
    the age of the oldest entry past its partition's checkpoint of projection `name`.

    `conninfo` is the database's, or an open autocommit connection to it (kept by a caller
    that asks often).
    """
    lags = partition_lags(client, feed_keys, group, conninfo, name, timeout_s)
    return sum(entries for entries, _ in lags), max((s for _, s in lags), default=0.0)


def partition_lags(
    client: redis.Redis | RedisCluster,
    feed_keys: str | Sequence[str],
    group: str,
    conninfo: str | psycopg.Connection[Any],
    name: str = "main",
    timeout_s: int = 2,
) -> list[Lag]:
    """Returns the lag of each partition (see `projection_lag`), in partition order."""
    keys = [feed_keys] if isinstance(feed_keys, str) else list(feed_keys)
    checkpoints = _checkpoints(conninfo, name, timeout_s)
    legacy = checkpoints.get(name, "0-0")
    now = time.time()
    lags: list[Lag] = []
    for partition, key in enumerate(keys):
        entries = 0
        if client.exists(key):
            for info in client.xinfo_groups(key):
                if _text(info.get("name")) == group:
                    entries = int(info.get("lag") or 0) + int(info.get("pending") or 0)
        done = checkpoints.get(f"{name}:p{partition}", legacy)
        following = client.xrange(key, min=f"({done}", count=1)
        seconds = 0.0
        if following:
            oldest_ms = position_key(_text(following[0][0]))[0]
            seconds = max(0.0, now - oldest_ms / 1000)
        lags.append((entries, seconds))
    return lags


def _checkpoints(
    conninfo: str | psycopg.Connection[Any], name: str, timeout_s: int
) -> dict[str, str]:
    """Returns projection `name`'s checkpoint rows: per partition, and its legacy one."""
    args = (name, f"^{re.escape(name)}:p[0-9]+$")
    if isinstance(conninfo, psycopg.Connection):
        rows = conninfo.execute(_CHECKPOINTS, args).fetchall()
    else:
        with psycopg.connect(conninfo, autocommit=True, connect_timeout=timeout_s) as conn:
            rows = conn.execute(_CHECKPOINTS, args).fetchall()
    return {str(row[0]): str(row[1]) for row in rows}


def _text(value: object) -> str:
    """Returns a Redis reply value as text."""
    return value.decode() if isinstance(value, bytes) else str(value)
