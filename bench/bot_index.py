"""The bot index's start-up: what a fresh game-service process pays on a bot's first look-up
(refresh, then its running games) as the history grows.

For each history (`--games`, finished games of two bots, projected by a real projector into
a temporary PostgreSQL database, on a Redis namespace of its own), a fresh stack index
(`ProjectedBotIndex`) and a fresh twin (`FeedBotIndex`, which folds the whole feed) each make
the first look-up. Prints, per history and per index, the feed entries and stream events read
from Redis, this process's CPU time, and the ratio of the largest history to the smallest.

Measured on the 2-core development machine: after 100, 1,000 and 10,000 games the stack index
read 1 feed entry each time and spent 4.6, 4.8 and 5.1 ms of CPU here; the twin read 202, 3,009
and 200,020 entries (every partition's page, merged) and spent 3.9, 38.5 and 2,114 ms.

    REDIS_URL=... DATABASE_URL=... uv run python -m bench.bot_index [--games 100 1000 10000]
"""

from __future__ import annotations

import argparse
import os
import time
import uuid
from collections.abc import Callable

import redis

from bench.load import temporary_database
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


def first_look_up(make: Callable[[], BotIndex], store: CountingStore) -> tuple[int, float]:
    """Returns what a fresh index reads on its first look-up, and the CPU seconds it took."""
    store.feed_read = store.events_read = 0
    started = time.process_time()
    index = make()
    index.refresh()
    running = index.running(ALICE)
    spent = time.process_time() - started
    assert running == ["g-live"], running
    return store.feed_read + store.events_read, spent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, nargs="+", default=[100, 1000, 10000])
    args = parser.parse_args()
    redis_url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    server = os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
    namespace = f"bench:{uuid.uuid4().hex[:8]}:"
    client = redis.Redis.from_url(redis_url)
    rows: list[tuple[int, int, float, int, float]] = []
    try:
        with temporary_database(server, "bench_botindex") as url:
            migrate(url)
            store = CountingStore(client, namespace)
            with Projector(url, store.consumer("projection", "p1")) as projector:
                create(store, "g-live", external(ALICE), Seat(bot="turner"))
                played = 0
                for games in sorted(args.games):
                    play_finished(store, f"g{games}", games - played)
                    played = games
                    project_all(projector, store, url)
                    stack = first_look_up(lambda: ProjectedBotIndex(store, url), store)
                    twin = first_look_up(lambda: FeedBotIndex(store), store)
                    rows.append((games, *stack, *twin))
    finally:
        keys = list(client.scan_iter(match=f"{namespace}*", count=1000))
        for start in range(0, len(keys), 500):
            client.delete(*keys[start : start + 500])
        client.close()
    header = ("games", "stack reads", "stack cpu ms", "twin reads", "twin cpu ms")
    print("".join(f"{name:>14}" for name in header))
    for games, reads, cpu, twin_reads, twin_cpu in rows:
        cells = (games, reads, f"{cpu * 1000:.1f}", twin_reads, f"{twin_cpu * 1000:.1f}")
        print("".join(f"{cell:>14}" for cell in cells))
    first, last = rows[0], rows[-1]
    print(
        f"history x{last[0] / first[0]:.0f}: stack reads x{last[1] / max(first[1], 1):.1f},"
        f" cpu x{last[2] / max(first[2], 1e-9):.1f}; twin reads x{last[3] / max(first[3], 1):.1f},"
        f" cpu x{last[4] / max(first[4], 1e-9):.1f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
