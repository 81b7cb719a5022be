"""The feed stays bounded: thousands of games played on Redis, projected and trimmed as the
projection service does, leave a feed no longer than what is not yet projected, while the
archive and the views keep every event."""

from __future__ import annotations

import time

import psycopg
import redis

from services.ops.migrate import migrate
from services.projection.projector import Projector
from services.projection.trimming import FeedTrimmer
from shared.app.bot_turns import play_bot_turns
from shared.app.games import create_game
from shared.store.redis_common import feed_key
from shared.store.redis_store import RedisEventStore
from tests.support.projection import assert_views_equal_a_rebuild

ROUNDS = 20
GAMES_PER_ROUND = 100


def feed_length(client: redis.Redis, namespace: str, partitions: int) -> int:
    """Returns how many entries every partition's feed holds."""
    return sum(int(client.xlen(feed_key(namespace, p))) for p in range(partitions))


def project_all(projector: Projector) -> None:
    """Projects until three reads in a row bring nothing (entries at the feed clock come at
    the next read, a few ms later)."""
    idle = 0
    while idle < 3:
        if projector.run_once(count=1000):
            idle = 0
        else:
            idle += 1
            time.sleep(0.005)


def test_thousands_of_games_leave_a_bounded_feed_and_a_whole_archive(
    redis_client: redis.Redis, namespace: str, database_url: str
) -> None:
    migrate(database_url)
    store = RedisEventStore(redis_client, namespace)
    trimmer = FeedTrimmer(store, retention_s=0, every_s=0)
    appended, lengths = 0, []
    with Projector(database_url, store.consumer("projection", "p1")) as projector:
        for _ in range(ROUNDS):
            for _ in range(GAMES_PER_ROUND):
                game_id = create_game(store, "beggar", players=2).game_id
                play_bot_turns(store, game_id)
                appended += store.version(game_id)
            project_all(projector)
            trimmer.trim()
            lengths.append(feed_length(redis_client, namespace, store.partitions))

    assert appended > 50 * GAMES_PER_ROUND * ROUNDS / 2  # ~39 events a game
    assert max(lengths) * 20 < appended, lengths  # bounded: not the whole history
    with psycopg.connect(database_url, autocommit=True) as conn:
        archived = conn.execute("SELECT count(*) FROM events").fetchone()
        games = conn.execute("SELECT count(*) FROM games WHERE status <> 'playing'").fetchone()
    assert archived == (appended,)
    assert games == (ROUNDS * GAMES_PER_ROUND,)
    assert assert_views_equal_a_rebuild(database_url) == ROUNDS * GAMES_PER_ROUND
