"""A ladder paired by a real Celery worker (four threads) over Redis, its pairing task sent
four at a time: its bots play game after game, and no bot ever sits in two games at once
(each pairing appends at the ladder's version it read; the losers read again)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
import redis
from celery import Celery

from services.bootstrap.workers import create_celery_app
from services.settings import WorkerSettings, load_settings
from services.workers.dispatch import PAIR_LADDERS
from shared.app import ladder as ladders
from shared.app.accounts import create_account
from shared.app.registry import find_bot, register
from shared.model.ladder_events import CODEC, LadderGameEnded, LadderPaired, stream_id
from shared.model.registry import BotSpec
from shared.store.redis_store import RedisEventStore
from tests.support.stack import ROOT
from tests.support.workers import worker_env

NO_VIEWS = "postgresql://postgres@127.0.0.1:1/none"
"""The views' database of this test's worker: none answers, so the pairing rates all alike."""


def env(redis_url: str, namespace: str) -> dict[str, str]:
    return {
        **worker_env(redis_url, namespace),
        "DATABASE_URL": NO_VIEWS,
        "CARDARENA_LADDER_COOLDOWN_SECONDS": "0",
    }


@pytest.fixture
def ladder_worker(redis_url: str, namespace: str) -> Iterator[subprocess.Popen[bytes]]:
    """Runs a Celery worker process (four threads) on this test's queue."""
    command = [
        sys.executable, "-m", "celery", "-A", "services.bootstrap.celery_main:app", "worker",
        "-Q", f"{namespace}bots", "--pool=threads", "--concurrency=4", "--without-gossip",
        "--without-mingle", "--without-heartbeat", "--loglevel=WARNING",
    ]  # fmt: skip
    process = subprocess.Popen(command, cwd=ROOT, env=env(redis_url, namespace))
    yield process
    process.terminate()
    process.wait(timeout=30)


def test_concurrent_pairing_tasks_on_a_worker_never_seat_a_bot_twice(
    ladder_worker: subprocess.Popen[bytes],
    redis_url: str,
    redis_client: redis.Redis,
    namespace: str,
) -> None:
    store = RedisEventStore(redis_client, namespace=namespace)
    ladder = ladders.open_ladder(store, "autobus", None, 2, datetime.now(UTC))
    for i in range(6):
        create_account(store, f"acct{i}", mode="open")
        register(
            store, BotSpec(name=f"r{i}", game="autobus", strategy="random"), account=f"acct{i}"
        )
        bot = find_bot(store, f"r{i}", "1")
        assert bot is not None
        ladders.join(store, ladder.ladder_id, bot, datetime.now(UTC))
    app: Celery = create_celery_app(load_settings(env(redis_url, namespace), WorkerSettings))
    task = app.tasks[PAIR_LADDERS]
    deadline = time.monotonic() + 60
    while len((now := ladders.read_ladder(store, ladder.ladder_id)).history) < 9:
        assert time.monotonic() < deadline, f"9 games not paired in 60 s: {now.history}"
        for _ in range(4):  # four at once, as beat's would be after a stall; expiring as beat's
            task.apply_async((), queue=f"{namespace}bots", expires=2)
        time.sleep(1)
    busy: set[str] = set()
    tables: dict[str, list[str]] = {}
    for event in CODEC.decode_all(store.read(stream_id(ladder.ladder_id))):
        if isinstance(event, LadderPaired):
            for table, game_id in zip(event.tables, event.game_ids, strict=True):
                assert not busy & set(table), (table, busy)
                busy |= set(table)
                tables[game_id] = table
        elif isinstance(event, LadderGameEnded):
            assert event.reason == ""
            busy -= set(tables[event.game_id])
    for game_id in tables:
        assert store.version(game_id) > 0
