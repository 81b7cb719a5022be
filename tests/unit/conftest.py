"""Fixtures shared by the unit tier: the embedded service and the document it serves."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from services.game.app import create_app
from shared.app.runtime import InProcessDispatcher
from shared.store.memory import InMemoryEventStore


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient[Litestar]]:
    """Returns a test client of the embedded service in open mode, over an in-memory store of
    its own (one per module; a module that needs keys or limits defines its own `client`)."""
    store = InMemoryEventStore()
    with TestClient(create_app(store, InProcessDispatcher(store))) as served:
        yield served


@pytest.fixture(scope="module")
def document(client: TestClient[Litestar]) -> dict[str, Any]:
    """Returns the OpenAPI document that `client`'s service serves."""
    served: dict[str, Any] = client.get("/schema/openapi.json").json()
    return served
