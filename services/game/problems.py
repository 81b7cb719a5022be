"""Maps errors to RFC 9457 problem-details responses (application/problem+json)."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException
from litestar.openapi.datastructures import ResponseSpec
from litestar.types import ExceptionHandlersMap

from services.game.schemas import Problem
from shared.games.base import IllegalAction
from shared.handlers import InvalidRequest, UnknownGame
from shared.store.port import ConcurrencyConflict, IdempotencyKeyReused, StoreUnavailable

MEDIA_TYPE = "application/problem+json"
TYPE_PREFIX = "urn:cardarena:problem:"
"""Problem types are URNs `urn:cardarena:problem:<slug>`."""

_log = logging.getLogger(__name__)

_AT_PATH = re.compile(r"at `\$\.?([^`]*)`")


def problem(
    status: int, slug: str, detail: str, headers: Mapping[str, str] | None = None, **extension: Any
) -> Response[Problem]:
    """Returns a problem-details response of type `slug` with its extension members."""
    body = Problem(
        type=f"{TYPE_PREFIX}{slug}" if slug else "about:blank",
        title=HTTPStatus(status).phrase,
        status=status,
        detail=detail,
        **extension,
    )
    return Response(body, status_code=status, media_type=MEDIA_TYPE, headers=headers)


def _field_of(extra: Any) -> str:
    """Returns the body, query, path or header field a Litestar validation error names."""
    if isinstance(extra, list) and extra and isinstance(extra[0], Mapping):
        first = extra[0]
        key = first.get("key")
        message = str(first.get("message", ""))
        if key in (None, "", "data"):
            match = _AT_PATH.search(message)
            return match.group(1) if match and match.group(1) else "body"
        return str(key)
    return "body"


def _validation(_: Request[Any, Any, Any], error: ValidationException) -> Response[Problem]:
    detail = error.detail
    if isinstance(error.extra, list) and error.extra and isinstance(error.extra[0], Mapping):
        detail = str(error.extra[0].get("message") or detail)
    return problem(400, "bad-request", detail, field=_field_of(error.extra))


def _invalid_request(_: Request[Any, Any, Any], error: InvalidRequest) -> Response[Problem]:
    return problem(422, "invalid-request", error.message, field=error.field)


def _illegal_action(_: Request[Any, Any, Any], error: IllegalAction) -> Response[Problem]:
    return problem(422, "illegal-action", error.message, rule=error.rule)


def _unknown_game(_: Request[Any, Any, Any], error: UnknownGame) -> Response[Problem]:
    return problem(404, "unknown-game", f"no game {error.game_id!r}", game_id=error.game_id)


def _conflict(_: Request[Any, Any, Any], error: ConcurrencyConflict) -> Response[Problem]:
    detail = f"expected version {error.expected}, the game is at {error.actual}"
    return problem(409, "stale-version", detail, current_version=error.actual)


def _key_reused(_: Request[Any, Any, Any], error: IdempotencyKeyReused) -> Response[Problem]:
    detail = "this Idempotency-Key was first used for a different request"
    return problem(422, "idempotency-key-reused", detail, field="Idempotency-Key")


def _unavailable(_: Request[Any, Any, Any], error: StoreUnavailable) -> Response[Problem]:
    detail = "the event store is unavailable; retry with the same Idempotency-Key"
    return problem(503, "store-unavailable", detail, headers={"Retry-After": "1"})


def _http(_: Request[Any, Any, Any], error: HTTPException) -> Response[Problem]:
    return problem(error.status_code, "", error.detail, headers=error.headers)


def _unexpected(request: Request[Any, Any, Any], error: Exception) -> Response[Problem]:
    _log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=error)
    return problem(500, "internal-error", "an unexpected error occurred")


HANDLERS: ExceptionHandlersMap = {
    ValidationException: _validation,
    InvalidRequest: _invalid_request,
    IllegalAction: _illegal_action,
    UnknownGame: _unknown_game,
    ConcurrencyConflict: _conflict,
    IdempotencyKeyReused: _key_reused,
    StoreUnavailable: _unavailable,
    HTTPException: _http,
    Exception: _unexpected,
}
"""Every handler of the app, most specific class first (Litestar picks by the MRO)."""


def responses(*statuses: int) -> dict[int, ResponseSpec]:
    """Returns the OpenAPI documentation of the problem responses with these statuses."""
    described = {
        400: "Malformed JSON, a wrong type, or a missing or unknown field (`field`)",
        404: "No game has this id (`game_id`)",
        409: "`expected_version` is stale (`current_version`); nothing was written",
        422: "A bad value (`field`), an illegal action (`rule`) or a reused Idempotency-Key",
        503: "The event store is unavailable; retry after `Retry-After` seconds",
    }
    return {
        status: ResponseSpec(
            data_container=Problem,
            description=described[status],
            media_type=MEDIA_TYPE,
            generate_examples=False,
        )
        for status in statuses
    }
