"""`cardarena store migrate`: a store written in the layout before partitions (one feed, a
game's keys tagged by its id) becomes a partitioned one, idempotently, on a populated Redis."""

from __future__ import annotations

import json
from typing import Any, cast

import pytest
import redis

from services.cli.main import main
from shared.app.bot_turns import play_bot_turns
from shared.app.games import create_game
from shared.messages.common import Seat
from shared.messages.envelope import NewEvent, RecordedEvent
from shared.store.memory import InMemoryEventStore
from shared.store.port import own_position
from shared.store.redis_common import LayoutMismatch, feed_key, legacy_feed_key
from shared.store.redis_consumer import RedisFeedConsumer
from shared.store.redis_migrate import migrate_log
from shared.store.redis_store import RedisEventStore

PARTITIONS = 4


def write_legacy(client: redis.Redis, namespace: str, source: InMemoryEventStore) -> list[str]:
    """Writes every event of `source` as the store before partitions did (the stream
    `{ns}game:{<id>}` with ids `0-<version>`, its `:version`, one `{ns}feed` in append
    order); returns the streams."""
    feed = legacy_feed_key(namespace)
    streams: list[str] = []
    for entry in source.read_feed(count=100_000):
        event = entry.event
        if event.game_id not in streams:
            streams.append(event.game_id)
        key = f"{namespace}game:{{{event.game_id}}}"
        fields = _fields(event)
        client.xadd(key, cast("Any", fields), id=f"0-{event.version}")
        client.set(f"{key}:version", event.version)
        client.xadd(feed, cast("Any", {**fields, "g": event.game_id}))
    return streams


def _fields(event: RecordedEvent) -> dict[str, Any]:
    """Returns the fields of a stream entry of `event`, as the append function wrote them."""
    return {
        "v": str(event.version),
        "type": event.type,
        "data": event.data,
        "s": str(event.schema),
        "k": event.kind,
        "at": str(event.recorded_at),
    }


def populated(client: redis.Redis, namespace: str) -> tuple[InMemoryEventStore, list[str]]:
    """Returns a source of a few played games and the streams written in the old layout,
    with an idempotency record, a dropped stream and a projection group holding entries."""
    source = InMemoryEventStore()
    seats = [Seat(kind="bot", bot="random")] * 2
    for seed in range(6):
        game_id = create_game(source, "shithead", seats=seats, seed=seed).game_id
        play_bot_turns(source, game_id)
    streams = write_legacy(client, namespace, source)
    first = f"{namespace}game:{{{streams[0]}}}"
    client.set(f"{first}:idem:key-1", "1 1 fp", ex=3600)
    client.delete(f"{namespace}game:{{{streams[-1]}}}")  # archived and dropped: version stays
    feed = legacy_feed_key(namespace)
    client.xgroup_create(feed, "projection", id="0")
    delivered = client.xreadgroup("projection", "projector-1", {feed: ">"}, count=30)
    ((_, entries),) = cast("list[tuple[bytes, list[tuple[bytes, Any]]]]", delivered)
    client.xack(feed, "projection", *[entry_id for entry_id, _ in entries[:20]])
    return source, streams


def test_a_populated_store_is_migrated_whole_and_a_second_run_moves_nothing(
    redis_client: redis.Redis, namespace: str
) -> None:
    source, streams = populated(redis_client, namespace)
    old_feed = cast(
        "list[tuple[bytes, dict[bytes, bytes]]]", redis_client.xrange(legacy_feed_key(namespace))
    )
    with pytest.raises(LayoutMismatch, match="store migrate"):
        RedisEventStore(redis_client, namespace, partitions=PARTITIONS).append(
            "new", "beggar", 0, [NewEvent("CardPlayed", b"x")]
        )

    moved = migrate_log(redis_client, namespace, PARTITIONS)

    assert moved.streams == len(streams)
    assert moved.feed_entries == len(old_feed) == len(source.read_feed(count=100_000))
    assert (moved.idempotency_records, moved.groups) == (1, 1)
    assert not redis_client.exists(legacy_feed_key(namespace))
    assert not list(redis_client.scan_iter(match=f"{namespace}game:{{*"))
    store = RedisEventStore(redis_client, namespace, partitions=PARTITIONS)
    for stream in streams[:-1]:
        assert store.read(stream) == [
            RecordedEvent(e.game_id, e.kind, e.version, e.type, e.data, e.schema, e.recorded_at)
            for e in source.read(stream)
        ]
    assert store.read(streams[-1]) == []
    assert store.version(streams[-1]) == source.version(streams[-1])
    recalled = store.recall(streams[0], "key-1", "fp")
    assert recalled is not None
    assert recalled.replayed
    migrated = store.read_feed(count=100_000)
    assert sorted(own_position(e) for e in migrated) == sorted(i.decode() for i, _ in old_feed)
    assert {(e.event.game_id, e.event.version) for e in migrated} == {
        (e.event.game_id, e.event.version) for e in source.read_feed(count=100_000)
    }

    assert migrate_log(redis_client, namespace, PARTITIONS).streams == 0
    assert len(store.read_feed(count=100_000)) == len(migrated)
    with pytest.raises(LayoutMismatch, match="partitioned 4"):
        migrate_log(redis_client, namespace, PARTITIONS * 2)


def test_the_projection_group_goes_on_from_its_oldest_unacknowledged_entry(
    redis_client: redis.Redis, namespace: str
) -> None:
    populated(redis_client, namespace)
    old_feed = cast("list[tuple[bytes, Any]]", redis_client.xrange(legacy_feed_key(namespace)))
    acked = {entry_id.decode() for entry_id, _ in old_feed[:20]}

    migrate_log(redis_client, namespace, PARTITIONS)

    delivered: set[str] = set()
    for partition in range(PARTITIONS):
        consumer = RedisFeedConsumer(
            redis_client, "projection", "projector-1", namespace, partition=partition
        )
        while batch := consumer.read(count=100):
            delivered |= {entry.position for entry in batch}
            consumer.ack([entry.position for entry in batch])
    assert delivered == {entry_id.decode() for entry_id, _ in old_feed} - acked
    assert all(redis_client.exists(feed_key(namespace, p)) for p in range(PARTITIONS))


def test_the_cli_migrates_the_store_of_its_settings(
    redis_client: redis.Redis,
    namespace: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    redis_url: str,
) -> None:
    populated(redis_client, namespace)
    monkeypatch.setenv("REDIS_URL", redis_url)
    monkeypatch.setenv("CARDARENA_NAMESPACE", namespace)
    monkeypatch.setenv("CARDARENA_PARTITIONS", str(PARTITIONS))

    assert main(["store", "migrate"]) == 0
    first = json.loads(capsys.readouterr().out)["migrated"]
    assert main(["store", "migrate"]) == 0
    second = json.loads(capsys.readouterr().out)["migrated"]

    assert first["streams"] == 6
    assert first["feed_entries"] > 0
    assert second == dict.fromkeys(first, 0)
