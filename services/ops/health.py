"""Readiness checks and heartbeats: what `/ready` and `cardarena probe` answer from.

A readiness check returns what is down, one phrase each; none means ready. Every check
gives up after `timeout` seconds (a probe must never hang), and every error, expected or
not, becomes a phrase, never an exception.
"""

from __future__ import annotations

import abc
import concurrent.futures
import contextlib
import os
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import redis

from services.ops.migrate import MIGRATIONS_DIR
from shared.store.port import EventStore

DeadLetters = Callable[[psycopg.Connection[Any]], "str | None"]
"""Reads one line on the projection's dead letters from a connection, None when there are
none (`services.projection.dead_letters.summary`)."""

TIMEOUT_S = 2.0
"""How long one dependency check may take."""


class Readiness(abc.ABC):
    """Whether a service can do its work now: its dependencies answer."""

    @abc.abstractmethod
    def problems(self) -> list[str]:
        """Returns what is down, one phrase each (`redis: ...`); empty when ready."""

    def report(self) -> tuple[list[str], list[str]]:
        """Returns what is down and what works but is degraded (`projection: ... dead
        letters`), one phrase each; this default reports nothing degraded."""
        return self.problems(), []


class StoreReadiness(Readiness):
    """The embedded default: ready while the (in-memory) event store answers."""

    def __init__(self, store: EventStore) -> None:
        self._store = store

    def problems(self) -> list[str]:
        try:
            self._store.feed_position()
        except Exception as error:
            return [f"event store: {error}"]
        return []


class StackReadiness(Readiness):
    """The real stack: Redis answers and, with a `database_url`, PostgreSQL answers with every
    migration of deploy/migrations applied, and `dead_letters` (if given) reports what the
    projection set aside. The checks run at once, within `timeout`."""

    def __init__(
        self,
        redis_url: str,
        database_url: str | None,
        timeout: float = TIMEOUT_S,
        dead_letters: DeadLetters | None = None,
        store_problems: Callable[[], list[str]] | None = None,
    ) -> None:
        self.redis_url = redis_url
        self.database_url = database_url
        self.timeout = timeout
        self.dead_letters = dead_letters
        self.store_problems = store_problems
        """What the event store itself reports (`RedisEventStore.problems`: every primary
        with the append function, the partitions' feeds readable); None: a PING of
        `redis_url`."""

    def problems(self) -> list[str]:
        store_problems = self.store_problems
        checks: dict[str, Callable[[], str | None]] = {
            "redis": (
                (lambda: "; ".join(store_problems()) or None)
                if store_problems is not None
                else lambda: redis_problem(self.redis_url, self.timeout)
            )
        }
        if self.database_url is not None:
            url = self.database_url
            checks["postgresql"] = lambda: database_problem(url, self.timeout)
        return run_checks(checks, self.timeout + 1.0)

    def report(self) -> tuple[list[str], list[str]]:
        """Returns what is down and, with a `database_url`, the projection's dead letters
        (events it set aside: degraded, not down), both checked at once."""
        if self.database_url is None or self.dead_letters is None:
            return self.problems(), []
        deadline_s = self.timeout + 1.0
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
        try:
            held = pool.submit(
                dead_letters_problem, self.database_url, self.dead_letters, self.timeout
            )
            down = self.problems()
            if down:
                return down, []  # a dead-letter count is moot while a store is down
            try:
                degraded = held.result(timeout=deadline_s)
            except concurrent.futures.TimeoutError:
                degraded = f"{DEAD_LETTERS}: no answer within {deadline_s:g}s"
            return [], [degraded] if degraded is not None else []
        finally:
            pool.shutdown(wait=False, cancel_futures=True)


def run_checks(checks: dict[str, Callable[[], str | None]], deadline_s: float) -> list[str]:
    """Runs `checks` in threads at once; returns their problems, and `<name>: no answer
    within Ns` for each still running at `deadline_s` (its thread is left to finish)."""
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=len(checks))
    try:
        futures = {name: pool.submit(check) for name, check in checks.items()}
        concurrent.futures.wait(futures.values(), timeout=deadline_s)
        found: list[str] = []
        for name, future in futures.items():
            if not future.done():
                found.append(f"{name}: no answer within {deadline_s:g}s")
            elif future.exception() is not None:
                found.append(f"{name}: {future.exception()}")
            elif (problem := future.result()) is not None:
                found.append(problem)
        return found
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def redis_problem(url: str, timeout: float = TIMEOUT_S) -> str | None:
    """Returns why the Redis at `url` does not answer a PING within `timeout`, or None."""
    client = redis.Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout)
    try:
        client.ping()
    except redis.RedisError as error:
        return f"redis: {error}"
    finally:
        client.close()
    return None


def expected_migrations() -> list[str]:
    """Returns the names of the migrations in deploy/migrations, in order."""
    return sorted(path.name for path in MIGRATIONS_DIR.glob("*.sql"))


def _connect(url: str, timeout: float) -> psycopg.Connection[tuple[object, ...]]:
    """Returns an autocommit connection to `url` whose connecting and statements each give up
    after about `timeout` seconds."""
    seconds = max(2, round(timeout))  # libpq reads whole seconds, and at least 2
    return psycopg.connect(
        url,
        autocommit=True,
        connect_timeout=seconds,
        options=f"-c statement_timeout={int(timeout * 1000)}",
    )


def database_problem(url: str, timeout: float = TIMEOUT_S) -> str | None:
    """Returns why PostgreSQL at `url` is not ready (unreachable, or migrations missing
    from `schema_migrations`), or None."""
    try:
        with _connect(url, timeout) as conn:
            ledger = conn.execute("SELECT to_regclass('schema_migrations')").fetchone()
            done: set[str] = set()
            if ledger is not None and ledger[0] is not None:
                rows = conn.execute("SELECT name FROM schema_migrations").fetchall()
                done = {str(row[0]) for row in rows}
    except psycopg.Error as error:
        return f"postgresql: {str(error).strip().splitlines()[0] if str(error) else error!r}"
    missing = [name for name in expected_migrations() if name not in done]
    if missing:
        return f"postgresql: migrations not applied: {', '.join(missing)}"
    return None


DEAD_LETTERS = "projection dead letters"
"""The name of the check of the projection's dead letters."""


def dead_letters_problem(
    url: str, dead_letters: DeadLetters, timeout: float = TIMEOUT_S
) -> str | None:
    """Returns `dead_letters`' line on the events the projection set aside, None when there
    are none or the table is missing (migrations not applied: `database_problem` says so)."""
    try:
        with _connect(url, timeout) as conn:
            table = conn.execute("SELECT to_regclass('projection_dead_letters')").fetchone()
            if table is None or table[0] is None:
                return None
            return dead_letters(conn)
    except psycopg.Error as error:
        return f"{DEAD_LETTERS}: {str(error).strip().splitlines()[0] if str(error) else error!r}"


def heartbeat_path(directory: str, service: str) -> Path:
    """Returns the heartbeat file of `service` in `directory` (empty: the temp directory)."""
    return Path(directory or tempfile.gettempdir()) / f"cardarena-{service}.heartbeat"


def touch(path: Path) -> None:
    """Marks `path` as fresh now (creating it); a failure to write is ignored."""
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
        os.utime(path)


def heartbeat_age(path: Path) -> float | None:
    """Returns the seconds since `path` was last touched, None when there is none."""
    try:
        return max(0.0, time.time() - path.stat().st_mtime)
    except OSError:
        return None


class Heartbeat:
    """Touches a heartbeat file every `interval` seconds while `alive()` says so, in a
    daemon thread, until stopped."""

    def __init__(self, path: Path, alive: Callable[[], bool], interval: float = 5.0) -> None:
        self.path = path
        self._alive = alive
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="heartbeat", daemon=True)

    def start(self) -> Heartbeat:
        """Starts touching; returns self."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stops touching (the file stays, and goes stale)."""
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            with contextlib.suppress(Exception):
                if self._alive():
                    touch(self.path)
            self._stop.wait(self._interval)
