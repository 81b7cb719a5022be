"""A reverse proxy in a thread that records every exchange it passes on, so that the traffic of
a client in another language (the TypeScript bot) can be checked against the document."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

import httpx

from tests.support.openapi_check import Exchange

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}
"""Headers that belong to one connection, not to the request or answer passed on."""


class RecordingProxy:
    """Passes every request to `upstream` and its answer back; `exchanges` keeps them."""

    def __init__(self, upstream: str) -> None:
        self.exchanges: list[Exchange] = []
        self._lock = threading.Lock()
        self._http = httpx.Client(base_url=upstream, timeout=120)
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def _pass(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
                answer = proxy._http.request(self.command, self.path, headers=headers, content=body)
                with proxy._lock:
                    proxy.exchanges.append(Exchange.of(answer))
                self.send_response(answer.status_code)
                for key, value in answer.headers.multi_items():
                    if key.lower() not in HOP_BY_HOP | {"content-encoding"}:
                        self.send_header(key, value)
                self.send_header("content-length", str(len(answer.content)))
                self.end_headers()
                self.wfile.write(answer.content)

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _pass  # noqa: N815

            def log_message(self, format: str, *args: object) -> None:
                """Logs nothing: the test checks the exchanges instead."""

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, name="recording-proxy")

    @property
    def url(self) -> str:
        """Returns the proxy's base URL."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> RecordingProxy:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
        self._http.close()
