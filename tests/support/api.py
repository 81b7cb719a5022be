"""The service as the API tests drive it: a client of the embedded service over an in-memory
store (open, or with the admin key), a bot's client of a served one, the admin key and a bot's
bearer header, a bot registered, and the problem details every refusal answers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx
from litestar import Litestar
from litestar.testing import TestClient

from services.game.app import create_app
from services.game.http.pipeline.auth import Access
from services.game.http.pipeline.problems import MEDIA_TYPE, TITLES, TYPE_PREFIX
from services.settings import Settings
from shared.app.runtime import InProcessDispatcher
from shared.ports.archive import EventArchive
from shared.store.memory import InMemoryEventStore

Client = TestClient[Litestar]
KEY = "sesame-0123456789"
ADMIN = {"Authorization": f"Bearer {KEY}"}
ALICE: dict[str, Any] = {"name": "alice", "game": "shithead", "kind": "external"}
BOB: dict[str, Any] = {"name": "bob", "game": "shithead", "kind": "external"}
HOOK: dict[str, Any] = {
    "name": "hook",
    "game": "shithead",
    "kind": "webhook",
    "url": "https://bots.example/hook",
}


def bearer(token: str) -> dict[str, str]:
    """Returns the Authorization header presenting `token`."""
    return {"Authorization": f"Bearer {token}"}


def problem(response: httpx.Response, status: int, slug: str | None = None) -> dict[str, Any]:
    """Returns the problem-details body of `response` after checking its status and shape: the
    media type, a type, a title and a detail; with `slug`, the type is that problem's and the
    title its own."""
    assert response.status_code == status, response.text[:300]
    assert response.headers["content-type"].startswith(MEDIA_TYPE)
    body: dict[str, Any] = response.json()
    assert (body["status"], bool(body["type"]), bool(body["title"]), bool(body["detail"])) == (
        status,
        True,
        True,
        True,
    )
    if slug is not None:
        assert (body["type"], body["title"]) == (f"{TYPE_PREFIX}{slug}", TITLES[slug])
    return body


def unauthorized(response: httpx.Response) -> dict[str, Any]:
    """Checks a 401 with its Bearer challenge; returns the problem."""
    body = problem(response, 401)
    assert body["type"].endswith("unauthorized")
    assert response.headers["www-authenticate"].startswith("Bearer")
    return body


def forbidden(response: httpx.Response) -> dict[str, Any]:
    """Checks a 403; returns the problem."""
    body = problem(response, 403)
    assert body["type"].endswith("forbidden")
    return body


def app_client(
    store: InMemoryEventStore, *, archive: EventArchive | None = None, **settings: Any
) -> Client:
    """Returns a client (to enter) of the service over `store` (and `archive`), in process, with
    `settings` over the service's defaults but one: no rate limit (games are long; a test of the
    limits sets its own). Open mode unless `admin_key` is set: see `admin_client`. A test that
    registers a webhook at `bots.example` (which resolves nowhere) sets
    `webhook_allow_private=True`; the URL guard has its own tests (test_webhook_urls)."""
    access = Access.embedded(store, Settings(**{"rate_limit": 0, **settings}))
    app = create_app(store, InProcessDispatcher(store), access=access, archive=archive)
    return TestClient(app)


def admin_client(
    store: InMemoryEventStore, *, archive: EventArchive | None = None, **settings: Any
) -> Client:
    """Returns `app_client` with the admin key `KEY` set: a request needs `ADMIN` or a bot's
    `bearer` token."""
    return app_client(store, archive=archive, admin_key=KEY, **settings)


def bot_client(base_url: str, token: str | None, **options: Any) -> httpx.Client:
    """Returns an HTTP client (to enter) of the service at `base_url` whose requests present the
    bot `token` (None: anonymous); `options` go to `httpx.Client` (timeout: 60 s unless said)."""
    headers = bearer(token) if token else {}
    return httpx.Client(base_url=base_url, headers=headers, **{"timeout": 60, **options})


def register(
    client: httpx.Client, spec: Mapping[str, Any] | str, admin: Mapping[str, str] = ADMIN
) -> dict[str, Any]:
    """Registers a bot as the admin (`admin`'s header; the test client's `ADMIN` unless said);
    `spec` is the bot's, or the name of an external Shithead bot. Returns the 201 body (with
    its credentials)."""
    if isinstance(spec, str):
        spec = {"name": spec, "game": "shithead", "kind": "external"}
    created = client.post("/v1/bots", json=spec, headers=admin)
    assert created.status_code == 201, created.text
    body: dict[str, Any] = created.json()
    return body
