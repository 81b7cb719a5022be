"""The projection's views and archive as a test reads them: a snapshot, its comparison with a
rebuild, the feed archived once."""

from __future__ import annotations

from collections import Counter
from typing import Any, cast

import psycopg
import redis

from services.projection.projector import rebuild
from shared.store.redis_common import feed_key
from shared.store.redis_store import RedisEventStore

VIEWS = (
    "games",
    "bot_challenges",
    "tournaments",
    "tournament_entrants",
    "tournament_games",
    "tournament_standings",
    "ratings",
    "rating_history",
)
"""The views the projection writes; each is compared whole, row by row, with a rebuild."""


def _order(conn: psycopg.Connection[Any], table: str) -> str:
    """Returns an ORDER BY over every column of `table`, so a snapshot is deterministic."""
    rows = conn.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = %s"
        " ORDER BY ordinal_position",
        (table,),
    ).fetchall()
    return ", ".join(f'"{row[0]}"::text' for row in rows)


def views_snapshot(database_url: str) -> dict[str, list[tuple[Any, ...]]]:
    """Returns every row of every view, in a stable order."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        return {
            table: conn.execute(
                f"SELECT * FROM {table} ORDER BY {_order(conn, table)}"  # noqa: S608 - fixed names
            ).fetchall()
            for table in VIEWS
        }


def assert_views_equal_a_rebuild(database_url: str) -> int:
    """Asserts that the views equal a rebuild of them from the archive; returns the games."""
    live = views_snapshot(database_url)
    rebuild(database_url)
    rebuilt = views_snapshot(database_url)
    for table in VIEWS:
        assert live[table] == rebuilt[table], f"the live {table} view differs from a rebuild"
    return len(live["games"])


def assert_archive_holds_the_feed_once(
    database_url: str, client: redis.Redis, namespace: str
) -> int:
    """Asserts that the archive holds every feed event exactly once, with the store's data,
    and that every game's stream in the store has its versions 1..n; returns the events."""
    feed = raw_feed(client, namespace)
    in_feed = Counter((fields[b"g"].decode(), int(fields[b"v"])) for _, fields in feed)
    assert all(n == 1 for n in in_feed.values()), "a version was written twice to the feed"
    with psycopg.connect(database_url, autocommit=True) as conn:
        rows = conn.execute("SELECT game_id, version, data, feed_position FROM events").fetchall()
    archived = Counter((str(game_id), int(version)) for game_id, version, _, _ in rows)
    assert all(n == 1 for n in archived.values()), "an event was archived twice"
    missing = set(in_feed) - set(archived)
    extra = set(archived) - set(in_feed)
    assert not missing, f"{len(missing)} feed events are missing from the archive"
    assert not extra, f"{len(extra)} archived events are not in the feed"
    fed = {(fields[b"g"].decode(), int(fields[b"v"])): (p, fields) for p, fields in feed}
    for game_id, version, data, position in rows:
        at, fields = fed[(str(game_id), int(version))]
        assert bytes(data) == fields[b"data"], f"archived data differs at {position}"
        assert str(position) == at.decode(), f"{game_id} v{version} archived at another position"
    store = RedisEventStore(client, namespace)
    for game_id in {game for game, _ in in_feed}:
        versions = [event.version for event in store.read(game_id)]
        assert versions == list(range(1, len(versions) + 1)), f"{game_id}: gaps or repeats"
    return len(rows)


def raw_feed(
    client: redis.Redis, namespace: str, partitions: int = 16
) -> list[tuple[bytes, dict[bytes, bytes]]]:
    """Returns every entry of every partition's feed as Redis holds it (by partition)."""
    feed: list[tuple[bytes, dict[bytes, bytes]]] = []
    for partition in range(partitions):
        key = feed_key(namespace, partition)
        feed += cast("list[tuple[bytes, dict[bytes, bytes]]]", client.xrange(key))
    return feed


def projection_caught_up(
    client: redis.Redis, namespace: str, group: str, partitions: int = 16
) -> bool:
    """Returns whether the consumer group has delivered and acknowledged every partition's
    feed."""
    for partition in range(partitions):
        feed = feed_key(namespace, partition)
        last = client.xrevrange(feed, count=1)
        if not last:
            continue
        try:
            groups = client.xinfo_groups(feed)
        except redis.ResponseError:
            return False
        mine = [info for info in groups if info["name"].decode() == group]
        if not mine:
            return False
        delivered = mine[0]["last-delivered-id"]
        if not (mine[0]["pending"] == 0 and delivered == last[0][0]):
            return False
    return True
    last = client.xrevrange(feed, count=1)
    for info in groups:
        if info["name"].decode() == group:
            delivered = info["last-delivered-id"]
            return bool(info["pending"] == 0 and (not last or delivered == last[0][0]))
    return False
