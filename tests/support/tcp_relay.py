"""A TCP relay in threads that a test can cut and restore: a client connected through it
loses its connections (and finds the port refusing new ones) until it is restored, on the
same port. A real dropped connection, for clients in other processes."""

from __future__ import annotations

import contextlib
import socket
import threading
from types import TracebackType


class TcpRelay:
    """Relays 127.0.0.1:`port` to `upstream` (host, port) while it is up."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        self._listener: socket.socket | None = None
        probe = socket.create_server(("127.0.0.1", 0))
        self.port: int = probe.getsockname()[1]
        probe.close()
        self.cuts = 0

    @property
    def url(self) -> str:
        """Returns the relay's HTTP address."""
        return f"http://127.0.0.1:{self.port}"

    def restore(self) -> None:
        """Listens again (the first time: starts) and relays each connection it accepts."""
        listener = socket.create_server(("127.0.0.1", self.port), reuse_port=False)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def cut(self) -> None:
        """Stops listening and drops every relayed connection."""
        self.cuts += 1
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(OSError):  # wakes the accept: a close alone would not
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        with self._lock:
            dropped, self._sockets = self._sockets, set()
        for sock in dropped:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _accept(self, listener: socket.socket) -> None:
        """Accepts connections until `listener` is closed."""
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.upstream)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._sockets |= {client, server}
            for source, target in ((client, server), (server, client)):
                threading.Thread(target=_pump, args=(source, target), daemon=True).start()

    def __enter__(self) -> TcpRelay:
        self.restore()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.cut()


def _pump(source: socket.socket, target: socket.socket) -> None:
    """Copies `source` to `target` until either closes."""
    try:
        while data := source.recv(65536):
            target.sendall(data)
    except OSError:
        pass
    with contextlib.suppress(OSError):
        target.shutdown(socket.SHUT_WR)
