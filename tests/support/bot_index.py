"""Games and challenges a bot index test writes to a store, the bots they name, and the projection
of finished games it reads them back through."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import msgspec

from services.projection.projector import Projector
from services.projection.queries import checkpoint
from shared.catalog import get_game
from shared.messages.codec import encode
from shared.messages.common import Event, GameCreated, GameFinished, Result, Seat
from shared.messages.envelope import RecordedEvent
from shared.model import challenges
from shared.model.challenges import (
    ChallengeIssued,
)
from shared.store.port import EventStore, FeedEntry, position_key
from shared.store.redis_store import RedisEventStore

ALICE, BOB, CAROL = "alice@1", "bob@1", "carol@2"


NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
"""The `now` every challenge look-up is made at (the index never reads a clock)."""


def external(bot: str) -> Seat:
    """Returns a seat bound to the registered bot `bot` (`name@version`)."""
    name, version = bot.split("@")
    return Seat(kind="external", name=name, version=version)


def create(store: EventStore, game_id: str, *seats: Seat) -> None:
    """Creates a Beggar game with `seats`."""
    ruleset = msgspec.to_builtins(get_game("beggar").ruleset("classic"))
    created = GameCreated(game="beggar", ruleset=ruleset, seats=list(seats))
    store.append(game_id, "beggar", 0, [encode(created)])


def finish(store: EventStore, game_id: str) -> None:
    """Appends the GameFinished of a game created by `create`."""
    seats = len(msgspec.msgpack.decode(store.read(game_id, limit=1)[0].data)["seats"])
    result = Result(status="finished", places=list(range(1, seats + 1)))
    version = store.version(game_id)
    store.append(game_id, "beggar", version, [encode(GameFinished(result=result))])


def challenge(store: EventStore, challenge_id: str, *pending: str, expires: datetime) -> None:
    """Issues a challenge waiting for `pending`, expiring at `expires`."""
    issued = ChallengeIssued(
        challenge_id=challenge_id,
        game="beggar",
        ruleset="classic",
        seats=[external(bot) for bot in pending],
        bots=list(pending),
        challenger="",
        pending=list(pending),
        issued_at=(NOW - timedelta(minutes=1)).isoformat(),
        expires_at=expires.isoformat(),
    )
    store.append(challenges.stream_id(challenge_id), challenges.KIND, 0, [encode(issued)])


def answer(store: EventStore, challenge_id: str, event: Event) -> None:
    """Appends `event` to a challenge's stream."""
    stream = challenges.stream_id(challenge_id)
    store.append(stream, challenges.KIND, store.version(stream), [encode(event)])


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
