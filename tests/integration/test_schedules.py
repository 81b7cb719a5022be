"""Scheduled tournaments on a real beat process (celery-redbeat) and a real worker."""

from __future__ import annotations

import base64
import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
import pytest
import redis
from celery import Celery
from litestar import Litestar
from litestar.testing import TestClient

from services.game.app import create_app
from services.workers.beat import (
    TASK,
    RedBeatTournamentScheduler,
    TournamentBeatScheduler,
    beat_config,
)
from services.workers.dispatch import CeleryDispatcher
from shared.app.tournaments import load_tournament
from shared.model.tournaments.model import Entrant, TournamentDefinition, TournamentState
from shared.model.tournaments.schedule import Schedule, run_id
from shared.store.redis_store import RedisEventStore
from tests.support.stack import ROOT
from tests.support.workers import worker_env

BeatStarter = Callable[[], subprocess.Popen[bytes]]
BODY: dict[str, Any] = {
    "game": "beggar",
    "entrants": [{"bot": "turner"}, {"bot": "random"}, {"bot": "turner", "name": "t2"}],
    "table_size": 2,
    "seed": "4",
}


@pytest.fixture
def start_beat(redis_url: str, namespace: str) -> Iterator[BeatStarter]:
    """Starts `cardarena serve beat` processes on this test's keys; stops them afterwards."""
    started: list[subprocess.Popen[bytes]] = []

    def start() -> subprocess.Popen[bytes]:
        command = [
            sys.executable,
            "-m",
            "services.cli.main",
            "serve",
            "beat",
            "--max-interval",
            "1",
        ]
        process = subprocess.Popen(command, cwd=ROOT, env=worker_env(redis_url, namespace))
        started.append(process)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=30)


@pytest.fixture
def scheduler(redis_url: str, namespace: str) -> Iterator[RedBeatTournamentScheduler]:
    """Returns the redbeat adapter over this test's keys, as the game service builds it."""
    adapter = RedBeatTournamentScheduler(redis_url, f"{namespace}schedules:", f"{namespace}bots")
    yield adapter
    adapter.close()


def poll(what: str, check: Callable[[], bool], seconds: float = 120) -> None:
    """Waits until `check()` holds, failing after `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    pytest.fail(f"{what}: not within {seconds}s")


def finished(store: RedisEventStore, tournament_id: str) -> TournamentState:
    """Waits for the tournament to exist and finish; returns its state."""
    states: list[TournamentState] = []

    def done() -> bool:
        try:
            state, _ = load_tournament(store, tournament_id)
        except LookupError:
            return False
        states.append(state)
        return state.status == "finished"

    poll(f"tournament {tournament_id} finishes", done)
    return states[-1]


def tournaments_created(store: RedisEventStore) -> list[str]:
    """Returns the stream ids of every tournament created in this test's namespace."""
    created, after = [], "0"
    while batch := store.read_feed(after, 500):
        created += [
            entry.event.game_id
            for entry in batch
            if entry.event.kind == "tournament" and entry.event.version == 1
        ]
        after = batch[-1].position
    return created


def beat_meta(client: redis.Redis, namespace: str, schedule_id: str) -> dict[str, Any]:
    """Returns what redbeat records of a schedule's runs (its last run and their count)."""
    raw = client.hget(f"{namespace}schedules:{schedule_id}", "meta")
    meta: dict[str, Any] = json.loads(raw) if raw else {}
    return meta


def test_a_tournament_scheduled_seconds_ahead_starts_on_beat_and_finishes_on_the_worker(
    worker: subprocess.Popen[bytes],
    celery_app: Celery,
    start_beat: BeatStarter,
    scheduler: RedBeatTournamentScheduler,
    redis_client: redis.Redis,
    namespace: str,
) -> None:
    start_beat()
    store = RedisEventStore(redis_client, namespace=namespace)
    app = create_app(store, CeleryDispatcher(celery_app, f"{namespace}bots"), scheduler=scheduler)
    with TestClient[Litestar](app) as client:
        at = datetime.now(UTC) + timedelta(seconds=3)
        body = {**BODY, "schedule": {"at": at.isoformat()}}
        created = client.post("/v1/tournaments", json=body)
        assert created.status_code == 202, created.text
        schedule_id = created.json()["schedule_id"]
        assert created.json()["next_run"] is not None
        tournament_id = run_id(schedule_id, at)
        state = finished(store, tournament_id)
        assert len(state.records) == 3
        read = client.get(created.headers["location"]).json()
        assert [run["tournament_id"] for run in read["runs"]] == [tournament_id]
        assert read["next_run"] is None
        assert client.get(f"/v1/tournaments/{tournament_id}").json()["status"] == "finished"
    assert tournaments_created(store) == [f"tournament:{tournament_id}"]


@pytest.mark.parametrize("kill", ["just_before_the_run", "just_after_the_run"])
def test_a_beat_killed_around_the_firing_time_neither_loses_nor_repeats_the_run(
    worker: subprocess.Popen[bytes],
    start_beat: BeatStarter,
    scheduler: RedBeatTournamentScheduler,
    redis_client: redis.Redis,
    namespace: str,
    kill: str,
) -> None:
    store = RedisEventStore(redis_client, namespace=namespace)
    first_beat = start_beat()
    lock = f"{namespace}schedules::lock"
    poll("the first beat holds the lock", lambda: bool(redis_client.exists(lock)))
    at = datetime.now(UTC) + timedelta(seconds=4)
    definition = TournamentDefinition(
        game="beggar",
        entrants=[Entrant(bot="turner"), Entrant(bot="random")],
        table_size=2,
        seed="6",
        schedule=Schedule(at=at),
    )
    scheduler.add("cup", definition)
    if kill == "just_before_the_run":
        poll("a second before the run", lambda: datetime.now(UTC) >= at - timedelta(seconds=1))
        assert beat_meta(redis_client, namespace, "cup")["last_run_at"] is None
    else:
        poll(
            "the run is recorded",
            lambda: bool(beat_meta(redis_client, namespace, "cup")["last_run_at"]),
        )
    first_beat.send_signal(signal.SIGKILL)
    first_beat.wait(timeout=30)
    second_beat = start_beat()
    state = finished(store, run_id("cup", at))
    assert len(state.records) == 1

    marker_at = datetime.now(UTC) + timedelta(seconds=2)
    marker = TournamentDefinition(
        game="beggar",
        entrants=[Entrant(bot="turner"), Entrant(bot="random")],
        table_size=2,
        schedule=Schedule(at=marker_at),
    )
    scheduler.add("marker", marker)
    finished(store, run_id("marker", marker_at))
    assert second_beat.poll() is None
    assert sorted(tournaments_created(store)) == sorted(
        [f"tournament:{run_id('cup', at)}", f"tournament:{run_id('marker', marker_at)}"]
    )
    assert beat_meta(redis_client, namespace, "cup")["total_run_count"] == 1
    assert scheduler.get("cup").last_slot == at


class ClockedCelery(Celery):
    """A Celery app whose clock the test sets: what beat and the entries take as now."""

    current = datetime.now(UTC)

    def now(self) -> datetime:
        """Returns the time the test set."""
        return self.current


def test_beat_sends_each_cron_tick_once_with_the_tick_as_its_slot_across_restarts(
    scheduler: RedBeatTournamentScheduler, redis_url: str, redis_client: redis.Redis, namespace: str
) -> None:
    definition = TournamentDefinition(
        game="beggar",
        entrants=[Entrant(bot="turner"), Entrant(bot="random")],
        table_size=2,
        schedule=Schedule(cron="0 0 1 1 *"),
    )
    first = scheduler.add("new-year", definition).next_run
    assert first is not None
    second = first.replace(year=first.year + 1)
    app = ClockedCelery("beat-test", set_as_current=False, broker=redis_url)
    app.conf.update(beat_config(redis_url, f"{namespace}schedules:", max_interval=1))

    def beat_pass(now: datetime) -> list[str]:
        """Runs one pass of a freshly started beat at `now`; returns the slots it sent."""
        app.current = now
        beat = TournamentBeatScheduler(app=app, max_interval=1)
        beat.lock_key = None
        beat.tick()
        beat.close()
        slots = []
        while raw := redis_client.rpop(f"{namespace}bots"):
            assert isinstance(raw, bytes)
            message = json.loads(raw)
            assert message["headers"]["task"] == TASK
            args, kwargs, _ = json.loads(base64.b64decode(message["body"]))
            assert args == [msgspec.to_builtins(definition), "new-year"]
            slots.append(kwargs["slot"])
        return slots

    assert beat_pass(first - timedelta(seconds=1)) == []
    assert beat_pass(first + timedelta(seconds=30)) == [first.isoformat()]
    assert beat_pass(first + timedelta(seconds=40)) == []
    assert beat_pass(second + timedelta(days=40)) == [second.isoformat()]
    assert beat_pass(second + timedelta(days=41)) == []
    assert scheduler.get("new-year").last_slot == second
    assert beat_meta(redis_client, namespace, "new-year")["total_run_count"] == 2
