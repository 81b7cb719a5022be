"""Fixtures shared by the unit tier: an in-memory store and a client of the embedded service
over it, and a module's own service with the document it serves."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from shared.store.memory import InMemoryEventStore
from tests.support.api import Client, app_client


@pytest.fixture
def store() -> InMemoryEventStore:
    """Returns an empty in-memory event store."""
    return InMemoryEventStore()


@pytest.fixture
def client(request: pytest.FixtureRequest, store: InMemoryEventStore) -> Iterator[Client]:
    """Returns a client of the embedded service over `store` (`app_client`: in open mode, no rate
    limit), with the settings a test's `service` marker names over those, e.g.
    `pytestmark = pytest.mark.service(admin_key=KEY)`."""
    marker = request.node.get_closest_marker("service")
    with app_client(store, **(marker.kwargs if marker else {})) as served:
        yield served


@pytest.fixture(scope="module")
def served() -> Iterator[Client]:
    """Returns a client of the embedded service in open mode over an in-memory store of its
    own, one per module: for tests that read what every service serves alike (the document)."""
    with app_client(InMemoryEventStore()) as service:
        yield service


@pytest.fixture(scope="module")
def document(served: Client) -> dict[str, Any]:
    """Returns the OpenAPI document that `served`'s service serves."""
    body: dict[str, Any] = served.get("/schema/openapi.json").json()
    return body
