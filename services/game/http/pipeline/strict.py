"""The game service's door: request input that cannot be what it claims is refused before any
handler (or store) sees it, the same way for every route.

Litestar converts a handler's parameters and JSON body in lax mode (msgspec `strict=False`,
which query strings need): `"seat": "0"` became the integer 0, `limit=1e3` became 1000.
`guard`, the app's `before_request` hook, checks each request against its handler's
signature first:

- a path parameter holding what no store can hold (NUL, a lone surrogate: `shared.messages.text`)
  names nothing that can exist: 404, naming it;
- a query or header parameter holding such text, or an integer parameter that is not
  written as a plain integer (`1e3`, `1.0`), is a 400 naming it;
- the JSON body is converted strictly (msgspec `strict=True`) to the handler's `data` type:
  a string or a boolean is not an integer (400 naming the field), and a string or key
  anywhere in it that no store can hold is a 422 naming its field (`seats[0].name`). A number
  with no fraction (`2.0`) is an integer, as JSON Schema (and so the API's OpenAPI document)
  has it: JSON itself does not tell `2.0` from `2`.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec
from litestar import Request, Response
from litestar.exceptions import ClientException, SerializationException, ValidationException
from litestar.params import HeaderParameter, PathParameter, QueryParameter
from litestar.types import ExceptionHandlersMap
from litestar.typing import FieldDefinition

from services.game.http.pipeline.problems import Problem, problem
from shared.errors import InvalidRequest
from shared.messages.text import find_unstorable, unstorable

_INTEGER = re.compile(r"-?(0|[1-9][0-9]*)")
"""A plain integer, as a query or header parameter writes one (what lax mode also accepts)."""

_AT = re.compile(r"`\$(?:\.)?(.*)`$")
"""Where a msgspec validation message points (`... - at `$.seats[0].kind``)."""

_NOT_FOUND = {
    "game_id": "unknown-game",
    "game": "unknown-game",
    "tournament_id": "unknown-tournament",
    "evaluation_id": "unknown-evaluation",
    "challenge_id": "unknown-challenge",
    "schedule_id": "unknown-schedule",
    "name": "unknown-bot",
    "version": "unknown-bot",
    "account": "unknown-account",
    "ladder_id": "unknown-ladder",
}
"""The problem type of a path parameter that names nothing (any other: `unknown-route`)."""


class NoSuchId(Exception):
    """A path parameter holds what no id can hold: it names nothing."""

    def __init__(self, parameter: str, found: str) -> None:
        super().__init__(f"no {parameter} holds {found}")
        self.parameter = parameter
        self.slug = _NOT_FOUND.get(parameter, "unknown-route")


def _no_such_id(_: Request[Any, Any, Any], error: NoSuchId) -> Response[Problem]:
    return problem(404, error.slug, str(error), field=error.parameter)


HANDLERS: ExceptionHandlersMap = {NoSuchId: _no_such_id}
"""The exception handlers of this module."""


async def guard(request: Request[Any, Any, Any]) -> None:
    """Refuses the request's path, query, header and body input that cannot be what its
    handler declares (see the module); returns None to let the handler run."""
    parameters = request.route_handler.parsed_fn_signature.parameters
    for key, definition in parameters.items():
        _check_parameter(request, key, definition)
    data = parameters.get("data")
    if data is not None and await request.body():
        await _check_body(request, data)


def _check_parameter(request: Request[Any, Any, Any], key: str, field: FieldDefinition) -> None:
    """Checks one path, query or header parameter of the handler."""
    kind = field.kwarg_definition
    if isinstance(kind, PathParameter):
        value = request.path_params.get(key)
        if isinstance(value, str) and (found := unstorable(value)) is not None:
            raise NoSuchId(key, found)
        return
    if isinstance(kind, QueryParameter):
        values = request.query_params.getall(kind.name or key, [])
        source = "query"
    elif isinstance(kind, HeaderParameter):
        values = request.headers.getall(kind.name or key, [])
        source = "header"
    else:
        return
    for value in values:
        if (found := unstorable(value)) is not None:
            _refuse(key, f"{kind.name or key} holds {found}", source)
        if _is_integer(field) and not _INTEGER.fullmatch(value):
            _refuse(key, f"{kind.name or key} must be a plain integer, not {value[:40]!r}", source)


def _is_integer(field: FieldDefinition) -> bool:
    """Returns whether the parameter is an integer (or an optional one)."""
    types = [t.annotation for t in field.inner_types] if field.is_union else [field.annotation]
    return int in types and all(t in (int, type(None)) for t in types)


def _refuse(key: str, message: str, source: str) -> None:
    """Raises the 400 Litestar raises for a bad parameter (`http.problems` names it)."""
    raise ValidationException(message, extra=[{"key": key, "message": message, "source": source}])


async def _check_body(request: Request[Any, Any, Any], data: FieldDefinition) -> None:
    """Converts the JSON body strictly to the handler's `data` type, then looks for text
    that no store can hold."""
    try:
        value = await request.json()
    except SerializationException as error:
        _surrogates(await request.body())
        raise ClientException(str(error)) from error
    try:
        msgspec.convert(_integral(value), data.annotation, strict=True)
    except msgspec.ValidationError as error:
        message, _, where = str(error).partition(" - at ")
        at = _AT.search(where)
        key = at.group(1) if at is not None and at.group(1) else "data"
        raise ValidationException(
            message, extra=[{"key": key, "message": message, "source": "body"}]
        ) from None
    if (bad := find_unstorable(value)) is not None:
        field, found = bad
        raise InvalidRequest(field or "body", f"holds {found}, which cannot be stored")


_EXACT = 2**63
"""Floats below this (in size) with no fraction are integers here, as Litestar's lax mode has it."""


def _integral(value: Any) -> Any:
    """Returns decoded JSON `value` with every number that has no fraction (`2.0`) an int."""
    if isinstance(value, float) and value.is_integer() and abs(value) < _EXACT:
        return int(value)
    if isinstance(value, dict):
        return {key: _integral(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_integral(item) for item in value]
    return value


def _surrogates(body: bytes) -> None:
    """Raises InvalidRequest naming the field of a lone surrogate (`"\\ud800"`, which msgspec
    refuses to decode and Python's json reads), if that is what made the body undecodable."""
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        return
    if (bad := find_unstorable(value)) is not None:
        field, found = bad
        raise InvalidRequest(field or "body", f"holds {found}, which cannot be stored")
