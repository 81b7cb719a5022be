"""The OpenAPI document made whole: after Litestar generated it, the games' schemas (from
msgspec) are added, every bare game field of a body is typed with them, every property gets
its field's description, and each operation gets its security, its problem types, its
server-sent events and examples; the webhook call is in `webhooks`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

from litestar.handlers import HTTPRouteHandler
from litestar.openapi import OpenAPIConfig
from litestar.openapi.spec import OpenAPI
from litestar.plugins import ReceiveRoutePlugin
from litestar.routes import BaseRoute, HTTPRoute

from services.game.http import values
from services.game.http.openapi import operations
from services.game.http.openapi.descriptions import field_docs, tag_doc
from services.game.http.openapi.game_schemas import REF, UNIONS, Components, add_games
from services.game.http.openapi.openapi import AcceptedValues

Document = dict[str, Any]

GAME_FIELDS = {
    "view": "view",
    "table": "table",
    "legal_actions": "action",
    "action": "action",
    "state": "state",
    "ruleset": "ruleset",
    "data": "event",
}
"""The kind of game value a bare object (`dict[str, Any]`) field of each name holds: such a
field is typed with the union over every game of that kind (`game_schemas.UNIONS`)."""


class Completion(ReceiveRoutePlugin):
    """Completes the document of the app it is a plugin of; `accepted` is the app's
    `AcceptedValues`, which knows the Structs Litestar made schemas of."""

    def __init__(self, accepted: AcceptedValues) -> None:
        self.accepted = accepted
        self.handlers: dict[str, HTTPRouteHandler] = {}

    def receive_route(self, route: BaseRoute) -> None:
        """Notes the handlers of `route` by their operation ids."""
        if isinstance(route, HTTPRoute):
            for handler in route.route_handlers:
                if isinstance(handler.operation_id, str) and handler.include_in_schema:
                    self.handlers[handler.operation_id] = handler

    def config(self, **options: Any) -> OpenAPIConfig:
        """Returns the app's OpenAPI configuration (`options` as OpenAPIConfig takes them),
        whose document this completes."""
        return _Config(**options, complete=self.complete)

    def complete(self, document: Document) -> Document:
        """Returns `document` completed (it is changed in place)."""
        schemas: dict[str, Any] = document.setdefault("components", {}).setdefault("schemas", {})
        taken = {
            name: self.accepted.structs[schema["title"]]
            for name, schema in schemas.items()
            if schema.get("title") in self.accepted.structs
        }
        components = Components(taken)
        add_games(components)
        values.add_values(components)
        document["webhooks"] = operations.webhooks(components)
        document["components"].setdefault("headers", {}).update(operations.RATE_LIMIT_HEADERS)
        for path in document.get("paths", {}).values():
            for operation in path.values():
                handler = self.handlers.get(operation.get("operationId", ""))
                if handler is not None:
                    operations.complete_operation(operation, handler, components)
        for name, schema in components.schemas.items():
            schemas.setdefault(name, schema)
        for name, cls in components.classes.items():
            if name in components.schemas:
                describe(schemas[name], cls)
        type_game_fields(document)
        values.reference_values(document)
        drop_null_parameters(document)
        return document


def drop_null_parameters(document: Document) -> None:
    """Types each optional parameter by what it is when sent: Litestar documents `X | None`
    as `oneOf: [X, null]`, but a parameter left out is absent (`required: false`), never null,
    and a header or query sent as `null` is the text "null", which a typed parameter refuses."""
    for path in document.get("paths", {}).values():
        for operation in path.values():
            if not isinstance(operation, dict):
                continue
            for parameter in operation.get("parameters", []):
                schema = parameter.get("schema", {})
                arms = schema.get("oneOf")
                if not isinstance(arms, list):
                    continue
                kept = [arm for arm in arms if arm != {"type": "null"}]
                if len(kept) == len(arms):
                    continue
                del schema["oneOf"]
                if len(kept) == 1:
                    schema.update(kept[0])
                else:
                    schema["oneOf"] = kept


def describe(schema: dict[str, Any], cls: type) -> None:
    """Gives each property of the schema of `cls` its field's description."""
    docs, tag = field_docs(cls), tag_doc(cls)
    for name, prop in schema.get("properties", {}).items():
        text = tag if name == "type" and tag is not None else docs.get(name)
        if text is not None and "description" not in prop:
            prop["description"] = text


def type_game_fields(document: Document) -> None:
    """Types every bare object property named in GAME_FIELDS with its union over games."""
    for schema in walk_schemas(document):
        for name, prop in schema.get("properties", {}).items():
            kind = GAME_FIELDS.get(name)
            if kind is not None:
                _type_bare(prop, {"$ref": REF.format(name=UNIONS[kind])})


def _type_bare(schema: dict[str, Any], typed: dict[str, Any]) -> None:
    """Replaces each bare object in `schema` (itself, its arms, its items) by `typed`."""
    if is_bare_object(schema):
        for key in ("type", "additionalProperties"):
            schema.pop(key, None)
        schema.update(typed)
        return
    for key in ("oneOf", "anyOf"):
        for arm in schema.get(key, []):
            _type_bare(arm, typed)
    if isinstance(schema.get("items"), dict):
        _type_bare(schema["items"], typed)


def is_bare_object(schema: Any) -> bool:
    """Returns whether `schema` is an object of any content (a `dict[str, Any]`)."""
    return (
        isinstance(schema, dict)
        and schema.get("type") == "object"
        and "properties" not in schema
        and schema.get("additionalProperties", {}) in ({}, True)
        and "$ref" not in schema
    )


def walk_schemas(node: Any) -> list[dict[str, Any]]:
    """Returns every schema object with properties nested anywhere in `node`."""
    found: list[dict[str, Any]] = []
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if isinstance(item.get("properties"), dict):
                found.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


@dataclass
class _Config(OpenAPIConfig):
    """An OpenAPIConfig whose document is completed by `complete` when it is rendered."""

    complete: Callable[[Document], Document] = field(default=lambda document: document)

    def to_openapi_schema(self) -> OpenAPI:
        """Returns the document, completed when it is turned into a dict."""
        made = super().to_openapi_schema()
        return _Completed(
            **{f.name: getattr(made, f.name) for f in fields(made)}, complete=self.complete
        )


@dataclass
class _Completed(OpenAPI):
    """The document, completed by `complete` when it is turned into a dict."""

    complete: Callable[[Document], Document] = field(default=lambda document: document)

    def to_schema(self) -> dict[str, Any]:
        """Returns the document as a dict, completed."""
        made = super().to_schema()
        made.pop("complete", None)
        return self.complete(made)
