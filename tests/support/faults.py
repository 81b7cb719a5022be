"""Faults a reliability test injects: a private Redis it may kill, a TCP proxy it may cut, and
the bounded wait for what should follow."""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import socket
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import psycopg
import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from tests.support import stack as support
from tests.support.stack import free_port

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


class SilentProxy:
    """Forwards TCP connections from a free local port to `target`, in threads; `hold()`
    makes the broker behind it silent: connections stay open, and what clients send is
    read and dropped, unanswered (a broker gone without closing its connections: a
    failover, a network partition). `release()` closes every connection and forwards again.
    """

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = free_port()
        self._held = threading.Event()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._listener = socket.create_server(("127.0.0.1", self.port))
        self._listener.settimeout(0.1)

    def __enter__(self) -> SilentProxy:
        threading.Thread(target=self._accept, name="silent-proxy", daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._close_all()
        self._listener.close()

    def hold(self) -> None:
        """Stops answering: nothing reaches the broker, nothing comes back."""
        self._held.set()

    def release(self) -> None:
        """Closes every connection (held or not) and forwards new ones again."""
        self._close_all()
        self._held.clear()

    def _close_all(self) -> None:
        with self._lock:
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
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
            upstream = None
            if not self._held.is_set():
                with contextlib.suppress(OSError):
                    upstream = socket.create_connection(self.target, timeout=5)
            with self._lock:
                self._sockets += [client] if upstream is None else [client, upstream]
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()

    def _pump(self, client: socket.socket, upstream: socket.socket | None) -> None:
        """Copies bytes both ways, dropping them while held, until a side closes."""
        ends = [client] if upstream is None else [client, upstream]
        with selectors.DefaultSelector() as selector:
            for sock in ends:
                selector.register(sock, selectors.EVENT_READ)
            try:
                while not self._stop.is_set():
                    for key, _ in selector.select(timeout=0.2):
                        source: socket.socket = key.fileobj  # type: ignore[assignment]
                        data = source.recv(65536)
                        if not data:
                            return
                        if upstream is not None and not self._held.is_set():
                            (upstream if source is client else client).sendall(data)
            except (OSError, ValueError):
                return
            finally:
                for sock in ends:
                    sock.close()
