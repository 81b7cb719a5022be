"""Maps errors to RFC 9457 problem-details responses (application/problem+json)."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

import msgspec
from litestar import Request, Response
from litestar.exceptions import (
    ClientException,
    HTTPException,
    MethodNotAllowedException,
    NotFoundException,
    ValidationException,
)
from litestar.exceptions.http_exceptions import RequestEntityTooLarge
from litestar.handlers import HTTPRouteHandler
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import OpenAPIHeader, OpenAPIResponse, OpenAPIType, Operation, Schema
from litestar.params import ParameterKwarg
from litestar.plugins import ReceiveRoutePlugin
from litestar.routes import BaseRoute, HTTPRoute
from litestar.types import ExceptionHandlersMap

from shared.app.tournaments import TournamentOver, UnknownTournament
from shared.catalog import game_names
from shared.errors import GameOver, IllegalAction, InvalidRequest, UnknownGame
from shared.store.port import ConcurrencyConflict, IdempotencyKeyReused, StoreUnavailable

MEDIA_TYPE = "application/problem+json"
TYPE_PREFIX = "urn:cardarena:problem:"
"""Problem types are URNs `urn:cardarena:problem:<slug>`."""

_log = logging.getLogger(__name__)

_NAMED_FIELD = re.compile(r"field `([^`]+)`")
_MISSING_PARAMETER = re.compile(r"^Missing required \w+ parameter '([^']+)'")
"""Litestar's message for a missing parameter: it names the parameter but sets no `extra`."""

TITLES = {
    "bad-request": "Malformed request",
    "invalid-request": "Invalid request",
    "illegal-action": "Illegal action",
    "unknown-game": "Unknown game",
    "unknown-tournament": "Unknown tournament",
    "unknown-evaluation": "Unknown evaluation",
    "stale-version": "Stale expected version",
    "idempotency-key-reused": "Idempotency key reused",
    "store-unavailable": "Event store unavailable",
    "not-ready": "Service not ready",
    "unauthorized": "Credentials needed",
    "forbidden": "Not allowed for these credentials",
    "rate-limited": "Too many requests",
    "unknown-bot": "Unknown bot",
    "unknown-challenge": "Unknown challenge",
    "challenge-closed": "Challenge no longer open",
    "challenge-refused": "Challenge refused by a bot's registration",
    "too-many-challenges": "Too many open challenges",
    "streams-busy": "Too many anonymous streams",
    "too-many-streams": "Too many streams for one token",
    "invalid-log": "Game log refused",
    "game-exists": "Another game has this id",
    "internal-error": "Internal error",
    "tournament-over": "Tournament over",
    "unknown-schedule": "Unknown schedule",
    "deal-sealed": "Deal sealed",
    "game-running": "Game still running",
    "feed-trimmed": "Feed trimmed",
    "game-over": "Game over",
    "unknown-route": "No such route",
    "method-not-allowed": "Method not allowed on this route",
    "body-too-large": "Request body too large",
    "http-error": "HTTP error",
    "name-taken": "Name taken",
    "registration-refused": "Registration refused",
    "account-suspended": "Account suspended",
    "too-many-bots": "Too many bots for the account",
    "unknown-account": "Unknown account",
    "unknown-ladder": "Unknown ladder",
    "ladder-closed": "Ladder closed",
}
"""The title of each problem type, the same for every occurrence (RFC 9457, 3.1.3)."""

STATUSES = {
    "bad-request": 400,
    "invalid-request": 422,
    "illegal-action": 422,
    "unknown-game": 404,
    "unknown-tournament": 404,
    "unknown-evaluation": 404,
    "stale-version": 409,
    "idempotency-key-reused": 422,
    "store-unavailable": 503,
    "not-ready": 503,
    "unauthorized": 401,
    "forbidden": 403,
    "rate-limited": 429,
    "unknown-bot": 404,
    "unknown-challenge": 404,
    "challenge-closed": 409,
    "challenge-refused": 403,
    "too-many-challenges": 429,
    "streams-busy": 503,
    "too-many-streams": 429,
    "invalid-log": 422,
    "game-exists": 409,
    "internal-error": 500,
    "tournament-over": 409,
    "unknown-schedule": 404,
    "deal-sealed": 403,
    "game-running": 403,
    "feed-trimmed": 410,
    "game-over": 409,
    "unknown-route": 404,
    "method-not-allowed": 405,
    "body-too-large": 413,
    "name-taken": 409,
    "registration-refused": 403,
    "account-suspended": 403,
    "too-many-bots": 409,
    "unknown-account": 404,
    "unknown-ladder": 404,
    "ladder-closed": 409,
}
"""The status every problem type is answered with (the document lists them per operation)."""


class Problem(msgspec.Struct, frozen=True, omit_defaults=True):
    """An RFC 9457 problem: `type`, `title`, `status`, `detail` and one extension member.

    `field` names the bad input, `rule` the broken game rule, `current_version` the
    stream's version on a conflict, `game_id` / `tournament_id` / `challenge_id` what does
    not exist.
    """

    type: str
    """The problem's type: a URN `urn:cardarena:problem:<slug>` (or `about:blank`); the operation's
    answer lists those it can carry."""
    title: str
    """The type's title, the same for every occurrence."""
    status: int
    """The HTTP status of the answer."""
    detail: str
    """What went wrong this time, for a person to read."""
    field: str | msgspec.UnsetType = msgspec.UNSET
    """The input at fault: a body field's path (`seats[0].version`), a parameter or a header."""
    rule: str | msgspec.UnsetType = msgspec.UNSET
    """The broken rule: of the game for an illegal action (see the operation's `x-illegal-action-
    rules`), else the platform's (`deal_sealed`, `game_running`, `feed_trimmed`)."""
    current_version: int | msgspec.UnsetType = msgspec.UNSET
    """On a stale `expected_version`: the game's version now."""
    game_id: str | msgspec.UnsetType = msgspec.UNSET
    """The game that does not exist."""
    tournament_id: str | msgspec.UnsetType = msgspec.UNSET
    """The tournament that does not exist."""
    challenge_id: str | msgspec.UnsetType = msgspec.UNSET
    """The challenge that does not exist."""
    challenge_status: str | msgspec.UnsetType = msgspec.UNSET
    """A closed challenge's status (`started`, `declined`, `cancelled`, `expired`)."""
    event_version: int | msgspec.UnsetType = msgspec.UNSET
    """The version of the first bad event of a refused import."""
    limit: int | msgspec.UnsetType = msgspec.UNSET
    """The limit reached: anonymous streams open at once, a bot's open challenges, or the
    bytes of a request body (413)."""


def problem(
    status: int, slug: str, detail: str, headers: Mapping[str, str] | None = None, **extension: Any
) -> Response[Problem]:
    """Returns a problem-details response of type `slug` (a key of TITLES) with extensions."""
    body = Problem(
        type=f"{TYPE_PREFIX}{slug}",
        title=TITLES.get(slug) or HTTPStatus(status).phrase,
        status=status,
        detail=detail,
        **extension,
    )
    return Response(body, status_code=status, media_type=MEDIA_TYPE, headers=headers)


def _public_name(request: Request[Any, Any, Any], key: str) -> str:
    """Returns the name a client uses for handler parameter `key` (a header's, a query's)."""
    parameter = request.route_handler.parsed_fn_signature.parameters.get(key)
    definition = parameter.kwarg_definition if parameter is not None else None
    if isinstance(definition, ParameterKwarg):
        return definition.name or key
    return key


def _bad_input(request: Request[Any, Any, Any], error: Mapping[str, Any]) -> tuple[str, str]:
    """Returns the field and the message of one Litestar validation error."""
    key, message = str(error.get("key", "")), str(error.get("message", ""))
    if error.get("source") != "body":
        return _public_name(request, key) if key else "body", message
    if message == "'data'":
        return "body", "the request needs a JSON body"
    path = "" if key == "data" else key
    named = _NAMED_FIELD.search(message)
    if named is not None:
        path = f"{path}.{named.group(1)}" if path else named.group(1)
    return path or "body", message


def _validation(request: Request[Any, Any, Any], error: ValidationException) -> Response[Problem]:
    extra = error.extra
    if isinstance(extra, list) and extra and isinstance(extra[0], Mapping):
        field, message = _bad_input(request, extra[0])
        return problem(400, "bad-request", message, field=field)
    missing = _MISSING_PARAMETER.match(error.detail)
    if missing is not None:
        detail = f"the parameter {missing.group(1)!r} is required"
        return problem(400, "bad-request", detail, field=missing.group(1))
    return problem(400, "bad-request", error.detail, field="body")


def _invalid_request(_: Request[Any, Any, Any], error: InvalidRequest) -> Response[Problem]:
    return problem(422, "invalid-request", error.message, field=error.field)


def _illegal_action(_: Request[Any, Any, Any], error: IllegalAction) -> Response[Problem]:
    return problem(422, "illegal-action", error.message, rule=error.rule)


def _game_over(_: Request[Any, Any, Any], error: GameOver) -> Response[Problem]:
    return problem(409, "game-over", error.message, rule=error.rule)


def _unknown_game(_: Request[Any, Any, Any], error: UnknownGame) -> Response[Problem]:
    return problem(404, "unknown-game", f"no game {error.game_id!r}", game_id=error.game_id)


def _unknown_tournament(_: Request[Any, Any, Any], error: UnknownTournament) -> Response[Problem]:
    detail = f"no tournament {error.tournament_id!r}"
    return problem(404, "unknown-tournament", detail, tournament_id=error.tournament_id)


def _tournament_over(_: Request[Any, Any, Any], error: TournamentOver) -> Response[Problem]:
    return problem(409, "tournament-over", error.message, field=error.field)


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
    if type(error) is ClientException:
        detail = f"the request body cannot be decoded: {error.detail}"
        return problem(400, "bad-request", detail, field="body")
    if error.status_code >= 500:
        return problem(error.status_code, "internal-error", error.detail, headers=error.headers)
    # Any other 4xx Litestar raises: its own status, one type (the document lists it nowhere).
    return problem(error.status_code, "http-error", error.detail, headers=error.headers)


def _unknown_route(_: Request[Any, Any, Any], error: NotFoundException) -> Response[Problem]:
    # Raised by the router before any handler runs: the path names no route (or no file).
    return problem(404, "unknown-route", "no route or file is served at this path")


def _method_not_allowed(
    _: Request[Any, Any, Any], error: MethodNotAllowedException
) -> Response[Problem]:
    allowed = (error.headers or {}).get("allow", "")
    detail = f"this route answers {allowed}" if allowed else "this route answers no such method"
    return problem(405, "method-not-allowed", detail, headers=error.headers)


def _body_too_large(
    request: Request[Any, Any, Any], error: RequestEntityTooLarge
) -> Response[Problem]:
    limit = request.route_handler.resolve_request_max_body_size()
    if limit is None:  # pragma: no cover - Litestar raises this only where a limit is set
        return problem(413, "body-too-large", "the request body is too large")
    detail = f"the request body is over {limit} bytes, the most this operation reads"
    return problem(413, "body-too-large", detail, limit=limit)


def _too_deep(_: Request[Any, Any, Any], error: RecursionError) -> Response[Problem]:
    # msgspec raises RecursionError, not a DecodeError, for JSON nested past its depth limit
    # (e.g. 100,000 nested arrays): that is the client's malformed body, not a server fault.
    return problem(400, "bad-request", "the request body nests too deeply", field="body")


def _unexpected(request: Request[Any, Any, Any], error: Exception) -> Response[Problem]:
    _log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=error)
    detail = repr(error) if request.app.debug else "an unexpected error occurred"
    return problem(500, "internal-error", detail)


HANDLERS: ExceptionHandlersMap = {
    ValidationException: _validation,
    InvalidRequest: _invalid_request,
    IllegalAction: _illegal_action,
    GameOver: _game_over,
    UnknownGame: _unknown_game,
    UnknownTournament: _unknown_tournament,
    TournamentOver: _tournament_over,
    ConcurrencyConflict: _conflict,
    IdempotencyKeyReused: _key_reused,
    StoreUnavailable: _unavailable,
    HTTPException: _http,
    NotFoundException: _unknown_route,
    MethodNotAllowedException: _method_not_allowed,
    RequestEntityTooLarge: _body_too_large,
    RecursionError: _too_deep,
    Exception: _unexpected,
}
"""The app's exception handlers; Litestar picks the nearest class in an error's MRO."""


def check_game_filter(game: str | None) -> None:
    """Raises a 400 naming the `game` query parameter unless it is None or a known game."""
    if game is not None and game not in game_names():
        message = f"unknown game {game!r}; one of {', '.join(game_names())}"
        raise ValidationException(message, extra=[{"key": "game", "message": message}])


def _problem_spec(description: str) -> ResponseSpec:
    """Returns the OpenAPI documentation of a problem response."""
    return ResponseSpec(
        data_container=Problem,
        description=description,
        media_type=MEDIA_TYPE,
        generate_examples=False,
    )


def responses(*statuses: int) -> dict[int, ResponseSpec]:
    """Returns the OpenAPI documentation of the problem responses with these statuses, and
    401, 429 (every request is authenticated, see services.game.http.pipeline.auth) and 500.

    413 (a body over the operation's limit) and the Retry-After header of 429 and 503 are
    added to every operation by `ProblemDocumentation`, not listed here.
    """
    described = {
        400: "Malformed JSON, a wrong type, a missing or unknown field or parameter (`field`)",
        401: "Credentials that are neither the admin key nor a live bot token, or none where"
        " they are needed (`WWW-Authenticate: Bearer`); nothing was done",
        403: "Valid credentials that do not allow this (a bot token for a hosting operation"
        " or another bot's seat, an account key for another account's bot, a suspended"
        " account's key, registration closed); nothing was done",
        404: "No game (`game_id`), tournament (`tournament_id`), challenge (`challenge_id`)"
        " or bot has this id",
        409: "A stale `expected_version` (`current_version`; nothing was written), a"
        " finished tournament, a closed challenge (`challenge_status`), a game that is"
        " over for the request (`rule`: `aborted`, `game_over`), a name taken (`field`) or"
        " an account at its cap of bots (`limit`)",
        410: "`Last-Event-ID` is older than what the feed keeps (rule `feed_trimmed`):"
        " reconnect without it (the stream then starts with the bot's waiting turns)",
        422: "A bad value (`field`), an illegal action (`rule`) or a reused Idempotency-Key;"
        " a seat (`field`) whose bot is at its cap of running games",
        429: "The bot token made too many requests; retry after `Retry-After` seconds",
        503: "The event store is unavailable; retry after `Retry-After` seconds",
        500: "An unexpected error; nothing about it is disclosed",
    }
    return {
        status: _problem_spec(described[status]) for status in sorted({*statuses, 401, 429, 500})
    }


BODY_PARAMETERS = frozenset({"data", "body"})
"""The handler parameters through which Litestar reads a request body (parsed, raw)."""

RETRY_AFTER = OpenAPIHeader(
    schema=Schema(type=OpenAPIType.INTEGER, minimum=0),
    description="Seconds to wait before sending the request again",
    required=True,
)
"""The header every 429 and 503 problem carries (see `auth`, `_unavailable`, `ops`)."""


@dataclass
class ProblemOperation(Operation):
    """An OpenAPI operation whose 429 and 503 problems document their Retry-After header."""

    def __post_init__(self) -> None:
        for status, response in (self.responses or {}).items():
            if status in {"429", "503"} and isinstance(response, OpenAPIResponse):
                response.headers = {**(response.headers or {}), "Retry-After": RETRY_AFTER}


def reads_body(handler: HTTPRouteHandler) -> bool:
    """Returns whether Litestar reads the request body for `handler`: it or one of its
    dependencies takes `data` or the raw `body`."""
    signatures = [
        handler.parsed_fn_signature,
        *(provider.parsed_fn_signature for provider in handler.resolve_dependencies().values()),
    ]
    return any(BODY_PARAMETERS & signature.parameters.keys() for signature in signatures)


def _too_large(limit: int) -> ResponseSpec:
    return _problem_spec(
        f"The request body is over {limit / 2**20:g} MiB, the most this operation reads"
        " (type `body-too-large`, `limit` in bytes); it was refused before it was read whole"
        " and nothing was done"
    )


class ProblemDocumentation(ReceiveRoutePlugin):
    """Documents on every operation of the app the problems answered around its handler:
    those of the app guard (401, 429, and 503 when a bot token is looked up in a store that
    is down) and 500 where the operation does not document its own, 413 wherever a body is
    read (over the operation's `request_max_body_size`), and the Retry-After header of each
    429 and 503 (through `ProblemOperation`)."""

    def receive_route(self, route: BaseRoute) -> None:
        """Adds the documentation to the handlers of `route` (again when a route is rebuilt
        with more handlers: each step is idempotent)."""
        if not isinstance(route, HTTPRoute):
            return
        for handler in route.route_handlers:
            if handler.operation_class is Operation:
                handler.operation_class = ProblemOperation
            # A new dict each time: module-level handlers are shared by every app built here.
            documented = {**responses(503), **(handler.responses or {})}
            limit = handler.resolve_request_max_body_size()
            if limit is not None and reads_body(handler):
                documented[413] = _too_large(limit)
            handler.responses = dict(sorted(documented.items()))
