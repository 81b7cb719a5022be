"""The stack's bot index beyond the contract: its tail of the feed follows the projection's
checkpoint, and a checkpoint that went back (a restored database) restarts it."""

from __future__ import annotations

import psycopg
import pytest
import redis

from services.ops.migrate import migrate
from services.projection.bot_index import ProjectedBotIndex
from services.projection.projector import Projector
from shared.messages.common import Seat
from shared.ports.views.port import ViewsUnavailable
from tests.support.bot_index import ALICE, CountingStore, create, external, finish, project_all


def test_the_tail_shrinks_as_the_projection_moves_and_a_checkpoint_gone_back_restarts_it(
    redis_client: redis.Redis, namespace: str, database_url: str
) -> None:
    migrate(database_url)
    store = CountingStore(redis_client, namespace)
    index = ProjectedBotIndex(store, database_url, prune_every=1)
    with Projector(database_url, store.consumer("projection", "p1")) as projector:
        create(store, "g-a", external(ALICE), Seat(bot="turner"))
        for n in range(10):
            create(store, f"g-{n}", external(ALICE), Seat(bot="turner"))
            finish(store, f"g-{n}")
        index.refresh()
        unprojected = index.tail_size
        project_all(projector, store, database_url)
        create(store, "g-b", external(ALICE), Seat(bot="turner"))
        index.refresh()
        projected = index.tail_size
        assert sorted(index.running(ALICE)) == ["g-a", "g-b"]

        with psycopg.connect(database_url) as conn:
            conn.execute("UPDATE projection_checkpoints SET position = '1-0'")
        with pytest.raises(ViewsUnavailable):
            index.running(ALICE)
        index.refresh()
        assert sorted(index.running(ALICE)) == ["g-a", "g-b"]

    assert unprojected == 21
    assert projected <= 3  # the marker at the checkpoint (alone in its ms), and g-b
