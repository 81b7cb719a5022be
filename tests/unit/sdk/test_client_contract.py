"""The Python client's types match the OpenAPI document (issue 18).

Statically: the JSON schema msgspec derives for each type the client decodes is compared with
the document's schema of the answer it decodes: every field the client declares is a property
of the document's with a type that holds every value the document allows, every field it
requires is required there, and every property the document requires is a field of the client
(what the service promises, the client gives). Dynamically: every method of the client runs
against the service, and each request it sends and each answer it reads validates against the
document (tests/support/openapi_check.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import msgspec
import pytest
from litestar import Litestar
from litestar.testing import TestClient
from litestar.testing.transport import TestClientTransport as ServiceTransport

from shared.sdk.client import Client, RegisteredBot, SeatView, Turn
from tests.support.openapi_check import Checker, Exchange

Schema = dict[str, Any]


class Created(msgspec.Struct):
    """What `Client.create_game` reads of a created game."""

    game_id: str


class ChallengeItem(msgspec.Struct):
    """What `Client` and the example bot read of a challenge."""

    challenge_id: str
    game_id: str | None
    status: str


class Challenges(msgspec.Struct):
    """What `Client.challenges` reads of the open challenges."""

    challenges: list[ChallengeItem]


class Turns(msgspec.Struct):
    """What `Client.turns` reads of the long poll."""

    turns: list[Turn]


class Accepted(msgspec.Struct):
    """What `Client.play` reads of an action's answer."""

    turn: SeatView | None = None


DECODED: list[tuple[str, str, int, Any]] = [
    ("POST", "/v1/bots", 201, RegisteredBot),
    ("POST", "/v1/bots", 200, RegisteredBot),
    ("POST", "/v1/games", 201, Created),
    ("GET", "/v1/bots/me/turns", 200, Turns),
    ("GET", "/v1/games/{game_id}/view", 200, SeatView),
    ("GET", "/v1/games/{game_id}/turn", 200, SeatView),
    ("POST", "/v1/games/{game_id}/actions", 200, Accepted),
    ("GET", "/v1/bots/me/challenges", 200, Challenges),
]
"""Each answer the client decodes: the operation (method, path), its status, the type."""

PUBLIC = frozenset({"RegisteredBot", "Turn", "SeatView"})
"""The client's own types: each has a field for every property the document promises."""


@pytest.fixture(scope="module")
def service(served: TestClient[Litestar]) -> TestClient[Litestar]:
    """Returns the embedded service (the unit tier's `served`; here `client` is the SDK's)."""
    return served


class Schemas:
    """Resolves `$ref`s of a schema family: the document's components, or msgspec's `$defs`."""

    def __init__(self, root: Schema, prefix: str) -> None:
        self.root, self.prefix = root, prefix

    def resolve(self, schema: Schema) -> Schema:
        """Returns `schema` with its `$ref` followed (repeatedly)."""
        while "$ref" in schema:
            name = schema["$ref"].removeprefix(self.prefix)
            schema = self.root[name]
        return schema

    def arms(self, schema: Schema) -> list[Schema]:
        """Returns the alternatives of `schema` (itself if it has none), each resolved."""
        schema = self.resolve(schema)
        alternatives = schema.get("oneOf") or schema.get("anyOf")
        if alternatives is None:
            return [schema]
        return [arm for option in alternatives for arm in self.arms(option)]

    def kinds(self, schema: Schema) -> set[str] | None:
        """Returns the JSON types `schema` allows (None: any value)."""
        found: set[str] = set()
        for arm in self.arms(schema):
            kind = arm.get("type")
            if kind is None and ("enum" in arm or "const" in arm):
                values = arm.get("enum", [arm.get("const")])
                kind = sorted({_json_type(value) for value in values})
            if kind is None and arm.get("allOf"):
                narrowest = [self.kinds(part) for part in arm["allOf"]]
                kind = sorted(min((k for k in narrowest if k is not None), key=len, default=()))
                kind = kind or None
            if kind is None:
                return None
            found.update([kind] if isinstance(kind, str) else kind)
        return found


def _json_type(value: object) -> str:
    """Returns the JSON type of a Python value of an enum."""
    names = {str: "string", bool: "boolean", int: "integer", float: "number"}
    return "null" if value is None else names[type(value)]


def drift(
    client: Schemas,
    mine: Schema,
    doc: Schemas,
    theirs: Schema,
    at: str,
    public: frozenset[str] = PUBLIC,
) -> Iterator[str]:
    """Yields how the client's schema `mine` fails to take every value of the document's
    `theirs` (and, for the objects of the `public` types, the document's promised fields)."""
    accepted, allowed = client.kinds(mine), doc.kinds(theirs)
    if accepted is not None:
        if allowed is None:
            yield f"{at}: the document allows any value, the client only {sorted(accepted)}"
            return
        if "number" in accepted:
            accepted = accepted | {"integer"}
        if not allowed <= accepted:
            yield f"{at}: the document allows {sorted(allowed)}, the client {sorted(accepted)}"
    for arm in client.arms(mine):
        if arm.get("type") == "object" and "properties" in arm:
            for other in doc.arms(theirs):
                if other.get("type") == "object":
                    yield from _fields(client, arm, doc, other, at, public)
        if arm.get("type") == "array" and "items" in arm:
            for other in doc.arms(theirs):
                if other.get("type") == "array":
                    items = other.get("items", {})
                    yield from drift(client, arm["items"], doc, items, at + "[]", public)


def _fields(
    client: Schemas, mine: Schema, doc: Schemas, theirs: Schema, at: str, public: frozenset[str]
) -> Iterator[str]:
    """Yields the drift between a client Struct's fields and the document's properties."""
    properties = theirs.get("properties", {})
    required = set(theirs.get("required", ()))
    for name, schema in mine["properties"].items():
        where = f"{at}.{name}"
        if name not in properties:
            yield f"{where}: the client reads a field the document does not have"
            continue
        if name in mine.get("required", ()) and name not in required:
            yield f"{where}: the client requires it, the document may leave it out"
        yield from drift(client, schema, doc, properties[name], where, public)
    if mine.get("title") not in public:
        return  # what the client reads of a dict: only the fields it reads
    for name in sorted(required - mine["properties"].keys()):
        yield f"{at}.{name}: the document promises it, the client has no field for it"


def answer_schema(document: Schema, method: str, path: str, status: int) -> Schema:
    """Returns the document's schema of an operation's JSON answer with `status`."""
    operation = document["paths"][path][method.lower()]
    schema: Schema = operation["responses"][str(status)]["content"]["application/json"]["schema"]
    return schema


@pytest.mark.parametrize(("method", "path", "status", "decoded"), DECODED)
def test_each_type_the_client_decodes_matches_the_documented_answer(
    document: Schema, method: str, path: str, status: int, decoded: Any
) -> None:
    (mine,), definitions = msgspec.json.schema_components([decoded], ref_template="#/$defs/{name}")
    client = Schemas(definitions, "#/$defs/")
    doc = Schemas(document["components"]["schemas"], "#/components/schemas/")
    theirs = answer_schema(document, method, path, status)
    assert list(drift(client, mine, doc, theirs, decoded.__name__)) == []


def test_the_comparison_finds_a_drift(document: Schema) -> None:
    class Wrong(msgspec.Struct):
        game_id: int
        seat: int
        versions: int
        status: str

    (mine,), definitions = msgspec.json.schema_components([Wrong], ref_template="#/$defs/{name}")
    doc = Schemas(document["components"]["schemas"], "#/components/schemas/")
    theirs = answer_schema(document, "GET", "/v1/games/{game_id}/view", 200)
    client = Schemas(definitions, "#/$defs/")
    found = list(drift(client, mine, doc, theirs, "Wrong", frozenset({"Wrong"})))
    assert "Wrong.game_id: the document allows ['string'], the client ['integer']" in found
    assert "Wrong.versions: the client reads a field the document does not have" in found
    assert "Wrong.version: the document promises it, the client has no field for it" in found


class Recording(httpx.BaseTransport):
    """Passes requests to the service and keeps each exchange."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner
        self.exchanges: list[Exchange] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Sends `request` on and records it with its answer."""
        response = self.inner.handle_request(request)
        response.read()
        response.request = request
        self.exchanges.append(Exchange.of(response))
        return response


def test_every_request_and_answer_of_the_client_validates_against_the_document(
    service: TestClient[Litestar], document: Schema
) -> None:
    transport = Recording(ServiceTransport(client=service))  # type: ignore[arg-type]
    base = str(service.base_url)
    with Client(base, transport=transport) as host:
        alice = host.register_bot("alice", game="shithead")
        bob = host.register_bot("bob", game="shithead", kind="external", version="2")
        host.register_bot("robot", game="shithead", kind="builtin", strategy="random")
        seats = [{"kind": "external", "bot": "alice"}, {"bot": "heuristic"}]
        game_id = host.create_game("shithead", seats, seed=3, ruleset={"max_moves": 200})
        host.game(game_id)
    with Client(base, token=alice.token, transport=transport) as player:
        player.turns(wait=0)
        player.view(game_id, 0)
        player.wait_turn(game_id, 0, wait=1)
        player.act(game_id, 0, lambda view: view.legal_actions[0], note="sdk-note: first")
        noter = lambda view, _action: f"sdk-note: v{view.version}"  # noqa: E731
        last = player.play(game_id, 0, lambda view: view.legal_actions[-1], wait=1, note=noter)
        assert last.status != "playing"
        page = service.get(
            f"/v1/games/{game_id}/events", headers={"Authorization": f"Bearer {alice.token}"}
        )
        texts = [e["data"]["text"] for e in page.json()["events"] if e["type"] == "NoteTaken"]
        assert texts[0] == "sdk-note: first"
        assert len(texts) > 1
        assert all(text.startswith("sdk-note: v") for text in texts[1:])
        opened = player.challenge("shithead", [("bob", "2")], expires_in=60)
        player.get_challenge(opened["challenge_id"])
    with Client(base, token=bob.token, transport=transport) as other:
        assert [c["challenge_id"] for c in other.challenges()] == [opened["challenge_id"]]
        other.decline_challenge(opened["challenge_id"], reason="busy")
        second = Client(base, token=alice.token, transport=transport).challenge(
            "shithead", [("bob", "2")]
        )
        other.accept_challenge(second["challenge_id"])

    checker = Checker(document)
    errors = [error for exchange in transport.exchanges for error in checker.errors(exchange)]
    assert errors == []
    used = {name for name, _ in checker.checked}
    assert {
        "registerBot", "createGame", "getGame", "waitBotTurns", "getSeatView", "waitSeatTurn",
        "postAction", "issueChallenge", "getChallenge", "listBotChallenges", "declineChallenge",
        "acceptChallenge",
    } <= used  # fmt: skip


def test_the_comparison_reads_enums_consts_and_alternatives_of_objects() -> None:
    doc = Schemas(
        {
            "Play": {"type": "object", "properties": {"type": {"const": "Play"}}},
            "Pass": {"type": "object", "properties": {"type": {"enum": ["Pass"]}}},
        },
        "#/components/schemas/",
    )
    action = {
        "oneOf": [{"$ref": "#/components/schemas/Play"}, {"$ref": "#/components/schemas/Pass"}]
    }
    assert doc.kinds(action) == {"object"}
    assert doc.kinds({"const": "Play"}) == {"string"}
    assert doc.kinds({"allOf": [{"type": "integer"}, {"minimum": 0}]}) == {"integer"}
    client = Schemas({}, "#/$defs/")
    assert list(drift(client, {"type": "object"}, doc, action, "action")) == []
    found = list(drift(client, {"type": "string"}, doc, action, "action"))
    assert found == ["action: the document allows ['object'], the client ['string']"]
