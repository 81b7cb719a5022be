"""The door: what the service refuses before it reads a request's input. A request without
credentials to an operation that needs them is 401 before its parameters are judged or its body
read; a bot token that is none is 401 before a move's body is read (where the registry's fold
is trusted, as every process following it has it); a bot's own writes read at most
`BOT_BODY_SIZE` bytes (413 beyond)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from litestar.types import HTTPRequestEvent, Message

from services.game.http.pipeline import strict
from services.game.http.pipeline.limits import BOT_BODY_SIZE
from shared.store.memory import InMemoryEventStore
from tests.support.api import (
    ADMIN,
    ALICE,
    KEY,
    Client,
    admin_client,
    bearer,
    problem,
    register,
    unauthorized,
)

pytestmark = pytest.mark.service(admin_key=KEY)

METHODS = ("get", "post", "put", "patch", "delete")

STRANGE_QUERY = "?limit=lots&wait=-1&seat=nan&version=x&after=-9"
"""Every query parameter the operations take, each with a value they refuse (400)."""


def operations(client: Client) -> Iterator[tuple[str, str, list[dict[str, Any]]]]:
    """Yields (method, path, security) of every operation of the service's document."""
    document = client.get("/schema/openapi.json").json()
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method in METHODS:
                yield method.upper(), path, operation.get("security") or []


def test_every_operation_that_needs_credentials_is_401_without_them_before_its_input_is_judged(
    client: Client,
) -> None:
    checked = 0
    for method, path, security in operations(client):
        if not security or {} in security:
            continue
        url = re.sub(r"\{[^}]+\}", "z" * 40, path) + STRANGE_QUERY
        answer = client.request(
            method, url, content=b"{not json", headers={"content-type": "application/json"}
        )
        assert unauthorized(answer)["detail"].startswith("this operation needs"), (method, path)
        checked += 1
    assert checked >= 30, "the document lists the operations that need credentials"


def test_an_operation_anyone_may_call_still_judges_its_input_without_credentials(
    client: Client,
) -> None:
    refused = client.get("/v1/games?limit=lots")
    assert problem(refused, 400)["field"] == "limit"
    account = client.post("/v1/accounts", json={"name": "ada"})
    assert problem(account, 403, "registration-refused")


def _call(client: Client, path: str, headers: list[tuple[bytes, bytes]]) -> tuple[int, int]:
    """Posts a 1 MiB body of unparseable JSON to `path` straight through the app's ASGI
    interface; returns the answer's status and how many times the app read the body."""
    reads: list[int] = []
    statuses: list[int] = []

    async def receive() -> HTTPRequestEvent:
        reads.append(1)
        return {"type": "http.request", "body": b"[" * (1 << 20), "more_body": False}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    scope: dict[str, Any] = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(b"content-type", b"application/json"), *headers],
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
        "state": {},
    }
    client.blocking_portal.call(client.app, scope, receive, send)
    return statuses[0], len(reads)


def test_a_strangers_move_is_refused_before_its_body_is_read(store: InMemoryEventStore) -> None:
    with admin_client(store) as client:
        token = register(client, ALICE)["token"]
        seats = [{"kind": "external", "bot": "alice"}, {"bot": "random"}]
        created = client.post("/v1/games", json={"game": "shithead", "seats": seats}, headers=ADMIN)
        path = f"/v1/games/{created.json()['game_id']}/actions"
        # As a process following the registry holds it: look-ups read nothing while trusted.
        registry = client.app.state["access"].registry
        registry.refresh(force=True)
        registry.trust(time.monotonic() + 600)
        forged = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
        for headers in ([], [(b"authorization", f"Bearer {forged}".encode())]):
            assert _call(client, path, headers) == (401, 0), headers
        status, reads = _call(client, path, [(b"authorization", f"Bearer {token}".encode())])
        assert (status, reads) == (413, 1), "the bot's own body is read, up to its limit"


def test_a_bots_writes_read_at_most_bot_body_size_bytes(client: Client) -> None:
    token = register(client, ALICE)["token"]
    seats = [{"kind": "external", "bot": "alice"}, {"bot": "random"}]
    created = client.post("/v1/games", json={"game": "shithead", "seats": seats}, headers=ADMIN)
    game_id = created.json()["game_id"]
    view = client.get(f"/v1/games/{game_id}/view?seat=0", headers=bearer(token)).json()
    padding = " " * (BOT_BODY_SIZE + 1)
    move = {"seat": 0, "action": view["legal_actions"][0], "expected_version": view["version"]}
    body = f'{{"seat": 0, "action": {{"type": "Ready"}}, "expected_version": 0{padding}}}'
    too_large = client.post(
        f"/v1/games/{game_id}/actions",
        content=body.encode(),
        headers={**bearer(token), "content-type": "application/json"},
    )
    assert problem(too_large, 413, "body-too-large")["limit"] == BOT_BODY_SIZE
    noted = {**move, "note": "\u00e9" * 512}  # the longest note, each byte escaped in JSON
    accepted = client.post(
        f"/v1/games/{game_id}/actions",
        content=json.dumps(noted, ensure_ascii=True).encode(),
        headers={**bearer(token), "content-type": "application/json"},
    )
    assert accepted.status_code == 200, accepted.text
    ladder = client.post(
        "/v1/ladders/" + "0" * 32 + "/queue", content=padding.encode(), headers=bearer(token)
    )
    assert problem(ladder, 413, "body-too-large")["limit"] == BOT_BODY_SIZE


def test_no_route_sets_a_before_request_hook_of_its_own(client: Client) -> None:
    # Litestar takes the nearest layer's `before_request`: a route (or controller, or router)
    # with its own would skip the app's strict-input guard for that route.
    app = client.app
    for route in app.routes:
        for handler in getattr(route, "route_handlers", ()):
            layers = [layer for layer in handler.ownership_layers if layer is not app]
            own = [layer for layer in layers if getattr(layer, "before_request", None)]
            assert not own, f"{route.path}: {handler} sets its own before_request"
            assert handler.resolve_before_request() is app.before_request, route.path
    assert app.before_request is strict.guard
