"""A game-service process's bot index starts at the same cost whatever the history: its first
look-up (what a bot's first long poll or stream does: refresh, then its running games) reads the
projection's checkpoint and views and only the feed after the checkpoint. Counted here in what
it reads from Redis over a small and a large projected history; the twin, which folds the
whole feed, is counted too (its reads grow with the history, so the count can tell)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import msgspec
import redis

from services.ops.migrate import migrate
from services.projection.bot_index import ProjectedBotIndex
from services.projection.projector import Projector
from services.projection.queries import checkpoint
from shared.catalog import get_game
from shared.messages.codec import encode
from shared.messages.common import GameCreated, GameFinished, Result, Seat
from shared.messages.envelope import RecordedEvent
from shared.ports.bot_index import BotIndex, FeedBotIndex
from shared.store.port import FeedEntry, position_key
from shared.store.redis_store import RedisEventStore
from tests.contract.test_bot_index import ALICE, BOB, create, external

SMALL, LARGE = 20, 2000
"""Finished games in the small history, and in the large one."""


class CountingStore(RedisEventStore):
    """A Redis store that counts the feed entries and stream events its reads return."""

    feed_read = 0
    events_read = 0

    def _read_partitions(self, positions: Sequence[str], count: int) -> list[list[FeedEntry]]:
        pages = super()._read_partitions(positions, count)
        self.feed_read += sum(len(page) for page in pages)
        return pages

    def read_partition(self, partition: int, after: str = "0", count: int = 100) -> list[FeedEntry]:
        page = super().read_partition(partition, after, count)
        self.feed_read += len(page)
        return page

    def read(self, stream: str, after: int = 0, limit: int | None = None) -> list[RecordedEvent]:
        events = super().read(stream, after, limit)
        self.events_read += len(events)
        return events


def play_finished(store: RedisEventStore, prefix: str, games: int) -> None:
    """Appends `games` finished games of Alice and Bob (created and finished in one append)."""
    ruleset = msgspec.to_builtins(get_game("beggar").ruleset("classic"))
    seats = [external(ALICE), external(BOB)]
    created = encode(GameCreated(game="beggar", ruleset=ruleset, seats=seats))
    finished = encode(GameFinished(result=Result(status="finished", places=[1, 2])))
    for n in range(games):
        store.append(f"{prefix}-{n}", "beggar", 0, [created, finished])


def project_all(projector: Projector, store: RedisEventStore, url: str) -> None:
    """Appends a last game alone in its millisecond (so that no other entry shares the
    checkpoint's position), then projects until the checkpoint is there."""
    time.sleep(0.002)
    create(store, f"g-marker-{time.monotonic_ns()}", Seat(bot="turner"))
    time.sleep(0.002)
    last = max(position_key(store.partition_position(p)) for p in range(store.partitions))
    for _ in range(2000):
        time.sleep(0.002)
        projector.run_once(1000)
        done = checkpoint(url)
        if done is not None and position_key(done) >= last:
            return
    raise AssertionError(f"the projection did not reach {last}")


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
