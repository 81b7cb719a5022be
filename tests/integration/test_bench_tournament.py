"""`bench.tournament`'s distributed run (two Celery workers and the projection over Redis)
leaves the Redis database it is given as it found it: the keys of its namespace, kombu's keys
of its queue (`_kombu.binding.<queue>`, outside the namespace) and the binding deadlines its
workers added are gone, and another app's keys and deadlines stay. Its figures are never
asserted (the machine is shared and noisy)."""

from __future__ import annotations

import pytest
import redis

from bench import tournament
from bench.load import KOMBU_DEADLINES
from tests.support.redis_cluster import RedisServer


@pytest.mark.timeout(600)
def test_the_tournament_bench_leaves_the_redis_database_as_it_found_it(
    redis_server: RedisServer, database_url: str
) -> None:
    client = redis.Redis.from_url(redis_server.url)
    try:
        client.set("other:key", "1")
        client.sadd("_kombu.binding.other", "member")
        # Another app's deadline, a day ahead (kombu's workers sweep the overdue ones).
        seconds, _ = client.time()
        client.zadd(KOMBU_DEADLINES, {"other.pidbox": (seconds + 86_400) * 1000})
        before = sorted(client.scan_iter(count=1000))
        definition = tournament.definition(games_per_table=1)
        _, _, games, _ = tournament.distributed(definition, redis_server.url, database_url)
        assert games == 6, "four entrants at two-seat tables, each pair once"
        assert sorted(client.scan_iter(count=1000)) == before
        assert client.zrange(KOMBU_DEADLINES, 0, -1) == [b"other.pidbox"]
    finally:
        client.close()
