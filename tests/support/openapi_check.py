"""Checks HTTP exchanges against the service's OpenAPI document: the operation a request
reaches, the schema of its request body, and the documented status, media type and schema of
its answer (JSON Schema Draft 2020-12, `$ref`s resolved over the whole document)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

Document = dict[str, Any]
UNDOCUMENTED = ("/schema", "/metrics")
"""Routes outside the document: the document and its page themselves, Prometheus metrics."""
PROBLEM = "application/problem+json"
PROBLEMS = "urn:cardarena:problem:"
"""The prefix of every problem type the service answers (never `about:blank`)."""
DOCUMENT_URI = "urn:cardarena:openapi"
"""The URI the document is registered under; its `$ref`s (`#/components/...`) resolve in it."""


def pointer(*parts: str) -> str:
    """Returns the JSON pointer (RFC 6901) of `parts`, as a URI fragment of the document."""
    escaped = (part.replace("~", "~0").replace("/", "~1") for part in parts)
    return f"{DOCUMENT_URI}#/" + "/".join(escaped)


@dataclass(frozen=True)
class Exchange:
    """One request and its answer, as recorded."""

    method: str
    path: str
    query: tuple[str, ...]
    request_type: str
    request_body: bytes
    status: int
    response_type: str
    response_body: bytes

    @classmethod
    def of(cls, response: httpx.Response) -> Exchange:
        """Returns the exchange of a read `response`."""
        request = response.request
        return cls(
            method=request.method,
            path=request.url.path,
            query=tuple(key for key, _ in request.url.params.multi_items()),
            request_type=request.headers.get("content-type", "").split(";")[0].strip(),
            request_body=request.content,
            status=response.status_code,
            response_type=response.headers.get("content-type", "").split(";")[0].strip(),
            response_body=response.content,
        )


@dataclass
class Checker:
    """Validates exchanges against `document`; `checked` counts (operation id, status) pairs."""

    document: Document
    checked: dict[tuple[str, int], int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        resource = Resource.from_contents(self.document, default_specification=DRAFT202012)
        self._registry: Registry[Any] = Registry().with_resource(DOCUMENT_URI, resource)
        self._routes = [
            (re.compile("^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(path)) + "$"), path)
            for path in self.document["paths"]
        ]

    def operation(self, method: str, path: str) -> tuple[str, dict[str, Any]] | None:
        """Returns the path template and the operation that `method path` reaches, if any; a
        literal path wins over a template (`/v1/bots/me` over `/v1/bots/{name}`)."""
        matches = [template for regex, template in self._routes if regex.match(path)]
        matches.sort(key=lambda template: template.count("{"))
        for template in matches:
            operation = self.document["paths"][template].get(method.lower())
            if operation is not None:
                return template, operation
        return None

    def errors(self, exchange: Exchange) -> Iterator[str]:
        """Yields every way `exchange` disagrees with the document (nothing: it agrees)."""
        what = f"{exchange.method} {exchange.path} -> {exchange.status}"
        found = self.operation(exchange.method, exchange.path)
        if found is None:
            if exchange.path.startswith(UNDOCUMENTED) and exchange.status < 400:
                return
            if exchange.status in {404, 405}:
                yield from self._unrouted(what, exchange)
                return
            yield f"{what}: no operation of the document"
            return
        template, operation = found
        name = operation["operationId"]
        documented = {p["name"] for p in operation.get("parameters", ()) if p["in"] == "query"}
        for key in sorted(set(exchange.query) - documented):
            yield f"{what}: {name} has no query parameter {key!r}"
        if exchange.request_body and exchange.request_type == "application/json":
            yield from self._request_errors(what, template, exchange)
        response = operation["responses"].get(str(exchange.status))
        if response is None:
            yield f"{what}: {name} does not document status {exchange.status}"
            return
        self.checked[name, exchange.status] = self.checked.get((name, exchange.status), 0) + 1
        content = response.get("content", {})
        if not content:
            if exchange.response_body:
                yield f"{what}: {name} documents no body, got {exchange.response_body[:80]!r}"
            return
        if exchange.response_type not in content:
            media = ", ".join(content)
            yield f"{what}: {name} answers {exchange.response_type!r}, documents {media}"
            return
        if exchange.response_type != "application/json" and not exchange.response_type.endswith(
            "+json"
        ):
            return  # JSON lines, text, HTML: the documented media type is all there is to check
        body = json.loads(exchange.response_body)
        if exchange.response_type == PROBLEM and not str(body.get("type")).startswith(PROBLEMS):
            yield f"{what}: a problem of type {body.get('type')!r}, not one of the project's"
        ref = pointer(
            "paths", template, exchange.method.lower(), "responses", str(exchange.status),
            "content", exchange.response_type, "schema",
        )  # fmt: skip
        yield from self._validate(f"{what} ({name})", ref, body)

    def _unrouted(self, what: str, exchange: Exchange) -> Iterator[str]:
        """Yields how the answer to a request that reached no operation (an unknown route, a
        wrong method) is not the document's Problem of one of the project's types."""
        if exchange.response_type != PROBLEM:
            yield f"{what}: answered {exchange.response_type!r}, not {PROBLEM}"
            return
        body = json.loads(exchange.response_body)
        if not str(body.get("type")).startswith(PROBLEMS):
            yield f"{what}: a problem of type {body.get('type')!r}, not one of the project's"
        yield from self._validate(what, pointer("components", "schemas", "Problem"), body)

    def _request_errors(self, what: str, template: str, exchange: Exchange) -> Iterator[str]:
        """Yields how a JSON request body disagrees with its operation's request schema; a
        refused request (4xx) is expected to disagree, and is not checked."""
        if 400 <= exchange.status < 500:
            return
        ref = pointer(
            "paths", template, exchange.method.lower(), "requestBody", "content",
            "application/json", "schema",
        )  # fmt: skip
        body = json.loads(exchange.request_body)
        yield from (f"request {error}" for error in self._validate(what, ref, body))

    def _validate(self, what: str, ref: str, instance: Any) -> Iterator[str]:
        """Yields the validation errors of `instance` against the schema at `ref`."""
        validator = Draft202012Validator({"$ref": ref}, registry=self._registry)
        for error in validator.iter_errors(instance):
            at = "/".join(str(part) for part in error.absolute_path)
            yield f"{what}: at /{at}: {error.message[:300]}"


class Recorder:
    """An httpx response hook that keeps every exchange (the body read first)."""

    def __init__(self) -> None:
        self.exchanges: list[Exchange] = []

    def __call__(self, response: httpx.Response) -> None:
        """Reads `response` and records it (a streamed one only once closed: not here)."""
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            return
        response.read()
        self.exchanges.append(Exchange.of(response))
