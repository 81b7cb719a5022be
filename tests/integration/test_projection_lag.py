"""The projection lag over real Redis and PostgreSQL, from a conninfo or a kept connection."""

from __future__ import annotations

import time

import psycopg
import redis

from services.ops.migrate import migrate
from services.projection.lag import projection_lag


def test_the_lag_counts_the_unprojected_entries_and_ages_the_oldest_past_the_checkpoint(
    redis_client: redis.Redis, namespace: str, database_url: str
) -> None:
    migrate(database_url)
    feed = f"{namespace}feed"
    first = redis_client.xadd(feed, {"n": "1"})
    redis_client.xgroup_create(feed, "projection", id="0")
    time.sleep(0.05)
    redis_client.xadd(feed, {"n": "2"})
    with psycopg.connect(database_url, autocommit=True) as conn:
        before = projection_lag(redis_client, feed, "projection", conn)
        assert before[0] == 2
        assert before[1] >= 0.05  # the first entry is past no checkpoint
        conn.execute(
            "INSERT INTO projection_checkpoints (name, position) VALUES ('main', %s)",
            (first.decode() if isinstance(first, bytes) else first,),
        )
        redis_client.xreadgroup("projection", "c", {feed: ">"}, count=1)
        redis_client.xack(feed, "projection", first)
        kept = projection_lag(redis_client, feed, "projection", conn)
    fresh = projection_lag(redis_client, feed, "projection", database_url)
    assert kept[0] == fresh[0] == 1
    assert 0.0 <= kept[1] < before[1] + 1
    assert fresh[1] >= kept[1]
