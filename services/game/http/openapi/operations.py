"""What the document says of each operation beyond Litestar's: its security as it is, the
problem types (and illegal-action rules) each answer can carry, the schema of each of its
server-sent events, its examples; and the webhook call in the document's `webhooks`."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import sys
import textwrap
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from litestar.handlers import HTTPRouteHandler

from services.game.http.openapi import examples
from services.game.http.openapi.game_schemas import Components
from services.game.http.pipeline.auth import SECURITY_SCHEME
from services.game.http.pipeline.problems import STATUSES, TYPE_PREFIX
from services.game.http.schemas import WebhookAnswer
from shared.app.deadlines import WebhookTurn
from shared.catalog import game_names, get_game

SSE_OPT = "sse_events"
"""The key of a streaming handler's `opt` that holds its events (name to `SseEvent`)."""
OPTIONAL: list[dict[str, list[str]]] = [{}, {SECURITY_SCHEME: []}]
"""The security of an operation anyone may call, which takes a bot token or the admin key
(one that declares none, or `auth.BEARER_OPTIONAL`)."""
REQUIRED: list[dict[str, list[str]]] = [{SECURITY_SCHEME: []}]
"""The security of an operation that needs the admin key or a bot token."""

_NOT_FOUND_PARAMETERS = {
    "unknown-game": ("game_id", "game"),
    "unknown-tournament": ("tournament_id",),
    "unknown-evaluation": ("evaluation_id",),
    "unknown-challenge": ("challenge_id",),
    "unknown-schedule": ("schedule_id",),
    "unknown-bot": ("name", "version"),
    "unknown-account": ("account",),
    "unknown-ladder": ("ladder_id",),
}
"""A 404 type is answered only by operations with one of these path parameters."""
_RULES_OF_ACTIONS = "illegal-action"


RATE_LIMIT_HEADERS: dict[str, dict[str, Any]] = {
    "RateLimit-Limit": {
        "description": "On an answer to a bot token: the size of the budget its request was"
        " charged to (see docs/reference/rate-limits.md).",
        "schema": {"type": "integer", "minimum": 0},
    },
    "RateLimit-Remaining": {
        "description": "On an answer to a bot token: the requests that budget allows at once.",
        "schema": {"type": "integer", "minimum": 0},
    },
    "RateLimit-Reset": {
        "description": "On an answer to a bot token: seconds until that budget is full again.",
        "schema": {"type": "integer", "minimum": 0},
    },
}
"""The IETF draft's rate-limit headers (httpapi-ratelimit-headers), in `components.headers`:
every answer to a bot token carries them (services/game/http/pipeline/limits.py)."""
RETRY_AFTER = {
    "description": "Seconds to wait before a request is allowed again.",
    "schema": {"type": "integer", "minimum": 0},
}


@dataclass(frozen=True)
class SseEvent:
    """One server-sent event of a stream: the types its `data` may hold (as JSON), and what
    it means."""

    data: tuple[type, ...]
    description: str


def complete_operation(
    operation: dict[str, Any], handler: HTTPRouteHandler, components: Components
) -> None:
    """Completes `operation`, the document of `handler`."""
    declared = handler.resolve_security()
    operation["security"] = REQUIRED if declared and {} not in declared else OPTIONAL
    for status, response in operation.get("responses", {}).items():
        for header in response.get("headers", {}).values():
            if "schema" not in header and "content" not in header:
                header["schema"] = {"type": "string"}  # Litestar's documentation-only headers
        headers = response.setdefault("headers", {})
        for name in RATE_LIMIT_HEADERS:
            headers.setdefault(name, {"$ref": f"#/components/headers/{name}"})
        if status in {"429", "503"}:
            headers.setdefault("Retry-After", RETRY_AFTER)
        if status.isdigit() and int(status) >= 400:
            _list_problems(operation, status, response, answerable(handler))
    events = (handler.opt or {}).get(SSE_OPT)
    if events:
        _describe_stream(operation, events, components)
    examples.add(operation)


def problem_types(
    operation: dict[str, Any], status: str, answerable: frozenset[str] | None = None
) -> list[str]:
    """Returns the problem types the answer `status` of `operation` can carry: those of the
    status that its exception handlers answer (`answerable`; None: any), a 404 only with a
    path parameter naming what was not found."""
    path_parameters = {p["name"] for p in operation.get("parameters", []) if p.get("in") == "path"}
    return [
        f"{TYPE_PREFIX}{slug}"
        for slug, answered in STATUSES.items()
        if str(answered) == status
        and (answerable is None or slug in answerable)
        and (
            slug not in _NOT_FOUND_PARAMETERS or path_parameters & set(_NOT_FOUND_PARAMETERS[slug])
        )
    ]


def answerable(handler: HTTPRouteHandler) -> frozenset[str]:
    """Returns the problem types the exception handlers of `handler` (its own, its
    controller's and the app's) answer with: each one's `problem(status, "slug")` calls, and
    every type of the status of a call whose slug is computed."""
    found: set[str] = set()
    for answer in handler.resolve_exception_handlers().values():
        found |= _answered_by(answer)
    return frozenset(found)


@cache
def _answered_by(function: Any) -> frozenset[str]:
    """Returns the problem types `function` answers with, read from its source."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError):
        return frozenset(STATUSES)
    found: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or getattr(node.func, "id", "") != "problem":
            continue
        if len(node.args) < 2:
            continue
        status, slug = node.args[0], node.args[1]
        if isinstance(slug, ast.Constant) and isinstance(slug.value, str):
            found.add(slug.value)
        elif isinstance(status, ast.Constant):
            found |= {name for name, answered in STATUSES.items() if answered == status.value}
        else:
            found |= set(STATUSES)
    return frozenset(found)


def _list_problems(
    operation: dict[str, Any], status: str, response: dict[str, Any], handled: frozenset[str]
) -> None:
    """Lists in `response` (and its description) the problem types it can carry, and for
    an operation that takes an action, the rules an illegal action can name."""
    types = problem_types(operation, status, handled)
    if not types:
        return
    response["x-problem-types"] = types
    listed = ", ".join(f"`{t.removeprefix(TYPE_PREFIX)}`" for t in types)
    response["description"] = f"{response.get('description', '')}. Problem types: {listed}."
    if status == "422" and _takes_an_action(operation):
        rules = illegal_action_rules()
        response["x-illegal-action-rules"] = rules
        response["description"] += (
            " An `illegal-action` names its `rule`: "
            + "; ".join(
                f"{game}: {', '.join(f'`{r}`' for r in names)}" for game, names in rules.items()
            )
            + ". Each game's rules page says when its rules are named: "
            + ", ".join(f"`{page}`" for page in _rules_pages())
            + "."
        )


def _rules_pages() -> list[str]:
    """Returns the rules page of every game that has one."""
    return [page for name in game_names() if (page := get_game(name).rules_page)]


def _takes_an_action(operation: dict[str, Any]) -> bool:
    """Returns whether `operation`'s body is a seat's action."""
    body = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
    return str(body.get("schema", {}).get("$ref", "")).endswith("/PostAction")


def illegal_action_rules() -> dict[str, list[str]]:
    """Returns the rules an illegal action can name: the platform's (`platform`, those of
    `shared.app`) and each hosted game's, read from the `IllegalAction(...)` calls of its
    engine (read once per catalogue: a test's own hosted game comes and goes)."""
    return _illegal_action_rules(tuple(game_names()))


@cache
def _illegal_action_rules(names: tuple[str, ...]) -> dict[str, list[str]]:
    """Returns `illegal_action_rules` for the games `names`."""
    rules = {"platform": _rules_in(importlib.import_module("shared.app"))}
    for name in names:
        module = sys.modules[get_game(name).decide.__module__]
        package = sys.modules[module.__name__.rpartition(".")[0]]
        rules[name] = _rules_in(
            package
            if hasattr(package, "__path__") and package.__name__ != "shared.games"
            else module
        )
    return rules


def _rules_in(module: Any) -> list[str]:
    """Returns the sorted rule names of the `IllegalAction` calls in `module` (a package: its
    modules)."""
    files = [Path(module.__file__)]
    if hasattr(module, "__path__"):
        files = [
            Path(module.__path__[0]) / f"{info.name}.py"
            for info in pkgutil.iter_modules(module.__path__)
        ]
    found: set[str] = set()
    for path in files:
        if not path.exists():
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", getattr(node.func, "attr", "")) == "IllegalAction"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                found.add(node.args[0].value)
    return sorted(found)


def _describe_stream(
    operation: dict[str, Any], events: dict[str, SseEvent], components: Components
) -> None:
    """Describes the text/event-stream answer of `operation`: one schema per event name."""
    arms = []
    for name, event in events.items():
        refs = [components.add([cls])[0] for cls in event.data]
        data = refs[0] if len(refs) == 1 else {"oneOf": refs}
        arms.append(
            {
                "type": "object",
                "title": name,
                "description": event.description,
                "properties": {
                    "event": {"const": name, "description": "The event's name (`event:`)."},
                    "id": {
                        "type": "string",
                        "description": "The event's id (`id:`): send it back as"
                        " `Last-Event-ID` to resume after it.",
                    },
                    "data": {**data, "description": "The event's `data:` line, as JSON."},
                },
                "required": ["event", "id", "data"],
            }
        )
    listed = ", ".join(f"`{name}`" for name in events)
    ok = operation["responses"]["200"]
    ok["description"] = f"Server-sent events (text/event-stream): {listed}."
    ok["content"] = {
        "text/event-stream": {
            "schema": {
                "oneOf": arms,
                "description": "One server-sent event, its fields as named; keep-alive"
                " comments (`:` lines) come in between.",
            }
        }
    }


def webhooks(components: Components) -> dict[str, Any]:
    """Returns the document's `webhooks`: the turn the platform POSTs to a webhook bot."""
    turn, answer = components.add([WebhookTurn, WebhookAnswer])
    header = {"type": "string"}
    return {
        "webhookTurn": {
            "post": {
                "operationId": "webhookTurn",
                "summary": "A webhook seat's turn, POSTed to the bot's URL",
                "description": "The platform POSTs the seat's view and legal actions when the"
                " game waits for a webhook seat, and retries (with a growing pause) until the"
                " deadline while no legal action comes back; then the clock's rules apply (the"
                " default action and a strike). Redirects are not followed; answers over 64"
                " KiB are refused. Check the signature and refuse old timestamps (a few"
                " minutes) before trusting a request.",
                "parameters": [
                    {
                        "name": "X-Cardarena-Timestamp",
                        "in": "header",
                        "required": True,
                        "description": "When the call was signed, in Unix seconds.",
                        "schema": header,
                    },
                    {
                        "name": "X-Cardarena-Signature",
                        "in": "header",
                        "required": True,
                        "description": "`sha256=` and the hex HMAC-SHA256, keyed by the bot's"
                        " webhook secret, of the timestamp, a dot and the raw body.",
                        "schema": header,
                    },
                ],
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": turn}},
                },
                "responses": {
                    "200": {
                        "description": "Any 2xx answer with this body: the seat's action, one"
                        " of `legal_actions`, checked like any client's. Anything else is"
                        " recorded as a `WebhookFailed` event and the call is retried.",
                        "content": {"application/json": {"schema": answer}},
                    }
                },
            }
        }
    }
