"""Fault injectors of the reliability tests: a private Redis server that a test kills and
restarts, a TCP proxy that a test cuts, and checks that compare the projection with the store.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar, cast

import psycopg
import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from services.projection.projector import rebuild
from shared.store.redis_common import feed_key
from shared.store.redis_store import RedisEventStore
from tests.e2e import support
from tests.e2e.support import free_port

T = TypeVar("T")

WAIT_S = 90.0
"""How long a bounded wait lasts: far longer than any healthy run needs, so it only fails
on a real hang."""


def wait_for(check: Callable[[], T | None], what: str, seconds: float = WAIT_S) -> T:
    """Returns the first truthy result of `check`, failing after `seconds` (a hang)."""
    return support.wait_for(check, seconds, what)


class PrivateRedis:
    """A redis-server of one test's own on a free port, with AOF (`appendfsync always`) in a
    directory of its own that outlives a kill, so a restart on the same port keeps the data."""

    def __init__(self, directory: Path) -> None:
        self.port = free_port()
        self.directory = directory
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    @property
    def url(self) -> str:
        """Returns the URL of the server's database 0."""
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        """Returns a client that fails fast while the server is down (no retries, short
        timeouts), so an outage shows at once."""
        return redis.Redis(
            port=self.port,
            socket_connect_timeout=1,
            socket_timeout=5,
            retry=Retry(NoBackoff(), retries=0),
        )

    def start(self) -> None:
        """Starts the server (again) and waits until it answers a PING."""
        assert self.process is None, "the private Redis is already running"
        command = [
            "redis-server",
            *("--port", str(self.port), "--bind", "127.0.0.1"),
            *("--dir", str(self.directory), "--save", ""),
            *("--appendonly", "yes", "--appendfsync", "always"),
            *("--daemonize", "no", "--loglevel", "warning"),
        ]
        self.process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        self.starts += 1
        probe = redis.Redis(port=self.port, socket_connect_timeout=1)
        try:

            def answers() -> bool:
                assert self.process is not None
                if self.process.poll() is not None:
                    pytest.fail(f"redis-server exited with {self.process.returncode}")
                with contextlib.suppress(redis.RedisError):
                    return bool(probe.ping())
                return False

            wait_for(answers, "the private Redis to answer")
        finally:
            probe.close()

    def kill(self) -> None:
        """SIGKILLs the server (by its pid) and reaps it: no shutdown, no last write."""
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)
        self.process = None


@pytest.fixture
def private_redis() -> Iterator[PrivateRedis]:
    """Returns a started private Redis; kills it and deletes its files afterwards."""
    directory = Path(tempfile.mkdtemp(prefix="cardarena-redis-"))
    server = PrivateRedis(directory)
    try:
        server.start()
        yield server
    finally:
        server.kill()
        shutil.rmtree(directory, ignore_errors=True)


class TcpProxy:
    """Forwards TCP connections from a free local port to `target`, in a thread; `pause()`
    closes every open connection and refuses new ones (accepted, then closed at once) until
    `resume()`."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = free_port()
        self._paused = threading.Event()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._listener = socket.create_server(("127.0.0.1", self.port))
        self._listener.settimeout(0.1)
        self._threads: list[threading.Thread] = []
        self.refused = 0

    def __enter__(self) -> TcpProxy:
        thread = threading.Thread(target=self._accept, name="tcp-proxy", daemon=True)
        thread.start()
        self._threads.append(thread)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._close_all()
        for thread in list(self._threads):
            thread.join(timeout=10)
        self._listener.close()

    def pause(self) -> None:
        """Cuts every forwarded connection and refuses new ones."""
        self._paused.set()
        self._close_all()

    def resume(self) -> None:
        """Forwards new connections again."""
        self._paused.clear()

    def _close_all(self) -> None:
        with self._lock:
            pairs, self._pairs = self._pairs, []
        for pair in pairs:
            for sock in pair:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            if self._paused.is_set():
                self.refused += 1
                client.close()
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            client.settimeout(None)
            with self._lock:
                self._pairs.append((client, upstream))
            thread = threading.Thread(
                target=self._pump, args=(client, upstream), name="tcp-proxy-pump", daemon=True
            )
            thread.start()
            self._threads = [t for t in self._threads if t.is_alive()]
            self._threads.append(thread)

    def _pump(self, client: socket.socket, upstream: socket.socket) -> None:
        """Copies bytes both ways until either side closes or the pair is cut."""
        peer = {client: upstream, upstream: client}
        with selectors.DefaultSelector() as selector:
            for sock in peer:
                selector.register(sock, selectors.EVENT_READ)
            try:
                while not self._stop.is_set():
                    for key, _ in selector.select(timeout=0.2):
                        source: socket.socket = key.fileobj  # type: ignore[assignment]
                        data = source.recv(65536)
                        if not data:
                            return
                        peer[source].sendall(data)
            except (OSError, ValueError):
                return
            finally:
                for sock in peer:
                    sock.close()


def through(database_url: str, proxy: TcpProxy) -> str:
    """Returns `database_url` with its host and port replaced by the proxy's."""
    info = psycopg.conninfo.conninfo_to_dict(database_url)
    info["host"] = "127.0.0.1"
    info["port"] = str(proxy.port)
    return psycopg.conninfo.make_conninfo(**info)  # type: ignore[arg-type]


def target_of(database_url: str) -> tuple[str, int]:
    """Returns the (host, port) of the PostgreSQL at `database_url`."""
    info = psycopg.conninfo.conninfo_to_dict(database_url)
    return str(info.get("host") or "127.0.0.1"), int(info.get("port") or 5432)


VIEWS = (
    "games",
    "bot_challenges",
    "tournaments",
    "tournament_entrants",
    "tournament_games",
    "tournament_standings",
    "ratings",
    "rating_history",
)
"""The views the projection writes; each is compared whole, row by row, with a rebuild."""


def _order(conn: psycopg.Connection[Any], table: str) -> str:
    """Returns an ORDER BY over every column of `table`, so a snapshot is deterministic."""
    rows = conn.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = %s"
        " ORDER BY ordinal_position",
        (table,),
    ).fetchall()
    return ", ".join(f'"{row[0]}"::text' for row in rows)


def views_snapshot(database_url: str) -> dict[str, list[tuple[Any, ...]]]:
    """Returns every row of every view, in a stable order."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        return {
            table: conn.execute(
                f"SELECT * FROM {table} ORDER BY {_order(conn, table)}"  # noqa: S608 - fixed names
            ).fetchall()
            for table in VIEWS
        }


def assert_views_equal_a_rebuild(database_url: str) -> int:
    """Asserts that the views equal a rebuild of them from the archive; returns the games."""
    live = views_snapshot(database_url)
    rebuild(database_url)
    rebuilt = views_snapshot(database_url)
    for table in VIEWS:
        assert live[table] == rebuilt[table], f"the live {table} view differs from a rebuild"
    return len(live["games"])


def assert_archive_holds_the_feed_once(
    database_url: str, client: redis.Redis, namespace: str
) -> int:
    """Asserts that the archive holds every feed event exactly once, with the store's data,
    and that every game's stream in the store has its versions 1..n; returns the events."""
    feed = raw_feed(client, namespace)
    in_feed = Counter((fields[b"g"].decode(), int(fields[b"v"])) for _, fields in feed)
    assert all(n == 1 for n in in_feed.values()), "a version was written twice to the feed"
    with psycopg.connect(database_url, autocommit=True) as conn:
        rows = conn.execute("SELECT game_id, version, data, feed_position FROM events").fetchall()
    archived = Counter((str(game_id), int(version)) for game_id, version, _, _ in rows)
    assert all(n == 1 for n in archived.values()), "an event was archived twice"
    missing = set(in_feed) - set(archived)
    extra = set(archived) - set(in_feed)
    assert not missing, f"{len(missing)} feed events are missing from the archive"
    assert not extra, f"{len(extra)} archived events are not in the feed"
    fed = {(fields[b"g"].decode(), int(fields[b"v"])): (p, fields) for p, fields in feed}
    for game_id, version, data, position in rows:
        at, fields = fed[(str(game_id), int(version))]
        assert bytes(data) == fields[b"data"], f"archived data differs at {position}"
        assert str(position) == at.decode(), f"{game_id} v{version} archived at another position"
    store = RedisEventStore(client, namespace)
    for game_id in {game for game, _ in in_feed}:
        versions = [event.version for event in store.read(game_id)]
        assert versions == list(range(1, len(versions) + 1)), f"{game_id}: gaps or repeats"
    return len(rows)


def raw_feed(
    client: redis.Redis, namespace: str, partitions: int = 16
) -> list[tuple[bytes, dict[bytes, bytes]]]:
    """Returns every entry of every partition's feed as Redis holds it (by partition)."""
    feed: list[tuple[bytes, dict[bytes, bytes]]] = []
    for partition in range(partitions):
        key = feed_key(namespace, partition)
        feed += cast("list[tuple[bytes, dict[bytes, bytes]]]", client.xrange(key))
    return feed


def projection_caught_up(
    client: redis.Redis, namespace: str, group: str, partitions: int = 16
) -> bool:
    """Returns whether the consumer group has delivered and acknowledged every partition's
    feed."""
    for partition in range(partitions):
        feed = feed_key(namespace, partition)
        last = client.xrevrange(feed, count=1)
        if not last:
            continue
        try:
            groups = client.xinfo_groups(feed)
        except redis.ResponseError:
            return False
        mine = [info for info in groups if info["name"].decode() == group]
        if not mine:
            return False
        delivered = mine[0]["last-delivered-id"]
        if not (mine[0]["pending"] == 0 and delivered == last[0][0]):
            return False
    return True
    last = client.xrevrange(feed, count=1)
    for info in groups:
        if info["name"].decode() == group:
            delivered = info["last-delivered-id"]
            return bool(info["pending"] == 0 and (not last or delivered == last[0][0]))
    return False
