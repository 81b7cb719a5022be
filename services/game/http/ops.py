"""Operations endpoints and middleware of the game service: /health, /ready, /metrics, request
metrics and the ids bound to every log line of a request."""

from __future__ import annotations

import time
from typing import Any, Literal

import msgspec
import structlog
from litestar import Request, Response, get
from litestar.di import NamedDependency
from litestar.enums import ScopeType
from litestar.middleware import ASGIMiddleware
from litestar.openapi.datastructures import ResponseSpec
from litestar.types import ASGIApp, ExceptionHandlersMap, Message, Receive, Scope, Send
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from services.game.http.pipeline.problems import MEDIA_TYPE, TYPE_PREFIX, Problem, problem
from services.ops.health import Readiness
from services.ops.logs import ids_of
from services.ops.metrics import GameMetrics


class Health(msgspec.Struct, frozen=True):
    """The service answers."""

    status: Literal["ok"] = "ok"
    """Always `ok` while the process answers."""


class Ready(msgspec.Struct, frozen=True):
    """The service and its dependencies answer; `degraded` names what works only in part."""

    status: str = "ready"
    """`ready`, or `degraded` when something is named in `degraded`."""
    degraded: list[str] | msgspec.UnsetType = msgspec.UNSET
    """What works only in part, one phrase each: the projection's dead letters, events it
    set aside (every other game goes on; they are retried)."""


class NotReady(Exception):
    """A dependency of the service is down; `down` names each."""

    def __init__(self, down: list[str]) -> None:
        super().__init__("; ".join(down))
        self.down = down


def _not_ready(_: Request[Any, Any, Any], error: NotReady) -> Response[Problem]:
    return problem(503, "not-ready", str(error), headers={"Retry-After": "5"})


HANDLERS: ExceptionHandlersMap = {NotReady: _not_ready}
"""The exception handlers of this module."""


@get(
    "/ready",
    operation_id="ready",
    summary="Readiness",
    description=(
        "200 when the service can work: the event store answers and, on the real stack,"
        " Redis and PostgreSQL answer with every migration applied. Otherwise 503 with a"
        " problem (`urn:cardarena:problem:not-ready`) whose detail names what is down."
        " A 200 with `status` `degraded` names in `degraded` what works only in part: events"
        " the projection could not project and set aside (dead letters; every other game"
        " goes on, they are retried). Answers within about 3 seconds, whatever is down."
    ),
    tags=["service"],
    sync_to_thread=True,
    responses={
        503: ResponseSpec(
            data_container=Problem,
            description="Something the service needs is down (named in `detail`)",
            media_type=MEDIA_TYPE,
            generate_examples=False,
        )
    },
)
def ready(readiness: NamedDependency[Readiness]) -> Ready:
    """Returns `ready` (or `degraded`, naming what is) when every dependency answers; raises
    NotReady naming those that do not."""
    down, degraded = readiness.report()
    if down:
        raise NotReady(down)
    return Ready("degraded", degraded) if degraded else Ready()


@get("/health", operation_id="health", summary="Liveness", tags=["service"], sync_to_thread=False)
def health() -> Health:
    """Returns `ok` while the service answers."""
    return Health()


@get("/metrics", include_in_schema=False, sync_to_thread=True)
def metrics(game_metrics: NamedDependency[GameMetrics]) -> Response[bytes]:
    """Returns every metric of the service in Prometheus's text exposition format."""
    body = generate_latest(game_metrics.registry)
    return Response(body, media_type=CONTENT_TYPE_LATEST)


_UNMEASURED = frozenset({"/metrics", "/health", "/ready"})


class ObserveMiddleware(ASGIMiddleware):
    """Counts requests by route template and status, times them, counts 409s by cause, and
    binds the game, tournament or schedule id of the path to every log line of the request."""

    scopes = (ScopeType.HTTP,)

    def __init__(self, metrics: GameMetrics) -> None:
        self.metrics = metrics

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        route = scope.get("path_template") or "unrouted"
        method = str(scope.get("method", ""))
        if route in _UNMEASURED:
            await next_app(scope, receive, send)
            return
        started = time.perf_counter()
        seen: dict[str, Any] = {"status": 500, "conflict": bytearray()}

        async def observed(message: Message) -> None:
            if message["type"] == "http.response.start":
                seen["status"] = message["status"]
            elif message["type"] == "http.response.body" and seen["status"] == 409:
                seen["conflict"].extend(message.get("body", b""))
            await send(message)

        with structlog.contextvars.bound_contextvars(**ids_of(scope.get("path_params", {}))):
            try:
                await next_app(scope, receive, observed)
            finally:
                status = seen["status"]
                self.metrics.requests.labels(method, route, str(status)).inc()
                self.metrics.request_seconds.labels(method, route).observe(
                    time.perf_counter() - started
                )
                if status == 409:
                    self.metrics.conflicts.labels(_cause(bytes(seen["conflict"]))).inc()


def _cause(body: bytes) -> str:
    """Returns the problem type slug of a 409 body (`stale-version`), `unknown` if none."""
    try:
        kind = msgspec.json.decode(body).get("type", "")
    except (msgspec.DecodeError, AttributeError):
        return "unknown"
    if isinstance(kind, str) and kind.startswith(TYPE_PREFIX):
        return kind.removeprefix(TYPE_PREFIX)
    return "unknown"
