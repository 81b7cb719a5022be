"""Dead letters of a partitioned feed: two entries of different partitions may have the same
position; each is set aside on its own, and none is lost."""

from __future__ import annotations

import psycopg
import redis

from services.ops.migrate import migrate
from services.projection.projector import Projector
from shared.store.redis_common import feed_key
from shared.store.redis_store import RedisEventStore


def test_unprojectable_entries_at_the_same_position_of_two_partitions_are_both_held(
    redis_client: redis.Redis, namespace: str, database_url: str
) -> None:
    migrate(database_url)
    store = RedisEventStore(redis_client, namespace)
    for partition, game_id in ((0, "bare-a"), (1, "bare-b")):  # no event: only a game id
        redis_client.xadd(feed_key(namespace, partition), {b"g": game_id.encode()}, id="5-0")

    with Projector(database_url, store.consumer("projection", "p1")) as projector:
        while projector.run_once(count=100):
            pass
        projector.run_once(count=100)

    with psycopg.connect(database_url, autocommit=True) as conn:
        rows = conn.execute("SELECT stream, position FROM projection_dead_letters").fetchall()
    assert sorted((bytes(stream).decode(), str(position)) for stream, position in rows) == [
        ("bare-a", "5-0-p0"),
        ("bare-b", "5-0-p1"),
    ]
