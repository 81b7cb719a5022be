"""Exported logs imported into the Redis event store: one append, the same bytes back out."""

from __future__ import annotations

import redis

from shared.app import exports as exchange
from shared.model import exported_log as export
from shared.store.redis_store import RedisEventStore
from tests.support.golden import golden


def test_the_longest_golden_game_imports_in_one_append_and_exports_the_same_bytes(
    redis_client: redis.Redis, namespace: str
) -> None:
    store = RedisEventStore(redis_client, namespace)
    events = golden("shithead-holland-kocsma-4p-random")
    text = export.export_bytes("long-game", events)
    imported = exchange.import_game(store, text)
    assert (imported.version, imported.created) == (len(events), True)
    assert exchange.export_game(store.read, "long-game") == text
    assert exchange.import_game(store, text).created is False
    assert store.version("long-game") == len(events)
    assert exchange.verification(store.read, "long-game").status == "ok"
