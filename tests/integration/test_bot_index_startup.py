"""A game-service process's bot index starts at the same cost whatever the history: its first
look-up (what a bot's first long poll or stream does: refresh, then its running games) reads the
projection's checkpoint and views and only the feed after the checkpoint. Counted here in what
it reads from Redis over a small and a large projected history; the twin, which folds the
whole feed, is counted too (its reads grow with the history, so the count can tell)."""

from __future__ import annotations

from collections.abc import Callable

import redis

from services.ops.migrate import migrate
from services.projection.bot_index import ProjectedBotIndex
from services.projection.projector import Projector
from shared.messages.common import Seat
from shared.ports.bot_index import BotIndex, FeedBotIndex
from tests.support.bot_index import (
    ALICE,
    CountingStore,
    create,
    external,
    play_finished,
    project_all,
)

SMALL, LARGE = 20, 2000
"""Finished games in the small history, and in the large one."""


def first_look_up(make: Callable[[CountingStore], BotIndex], store: CountingStore) -> int:
    """Returns the feed entries and stream events that a fresh index over `store` reads on
    its first look-up of Alice's running games (which must be the one running game)."""
    store.feed_read = store.events_read = 0
    index = make(store)
    index.refresh()
    assert index.running(ALICE) == ["g-live"]
    assert index.seats_of(ALICE, "g-live") == [0]
    return store.feed_read + store.events_read


def test_the_first_look_up_of_the_stack_index_reads_the_same_whatever_the_history(
    redis_client: redis.Redis, redis_url: str, namespace: str, database_url: str
) -> None:
    migrate(database_url)
    store = CountingStore(redis_client, namespace)
    projector = Projector(database_url, store.consumer("projection", "p1"))
    create(store, "g-live", external(ALICE), Seat(bot="turner"))
    play_finished(store, "g-small", SMALL)
    project_all(projector, store, database_url)

    def stack(over: CountingStore) -> BotIndex:
        return ProjectedBotIndex(over, database_url)

    def twin(over: CountingStore) -> BotIndex:
        return FeedBotIndex(over)

    small = first_look_up(stack, store)
    twin_small = first_look_up(twin, store)
    play_finished(store, "g-large", LARGE - SMALL)
    project_all(projector, store, database_url)
    large = first_look_up(stack, store)
    twin_large = first_look_up(twin, store)
    projector.close()

    assert twin_small >= SMALL * 2
    assert twin_large >= LARGE * 2  # the whole feed: the count sees a history-bound read
    # The live game's first event (its seats) and at most the entry at the watermark, however
    # many games were played:
    assert small == large
    assert 1 <= small <= 2
