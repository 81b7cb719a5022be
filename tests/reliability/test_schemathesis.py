"""Schemathesis against the game service's own OpenAPI document, every operation in-process.

The app runs over the in-memory store with schemathesis' ASGI transport and an admin
key, sent with every case (generated credentials would only ever reach the 401 path).
Each case must not be a 5xx, must answer a status its operation documents, and must match
the documented schema of that status. The number of cases run is printed and written to
tests/artifacts/schemathesis.json.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import Case
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    response_schema_conformance,
    status_code_conformance,
)

from services.game.app import create_app
from services.game.auth import Access
from shared.handlers import InProcessDispatcher
from shared.settings import Settings
from shared.store.memory import InMemoryEventStore

pytestmark = pytest.mark.reliability

ARTIFACT = Path(__file__).resolve().parents[1] / "artifacts" / "schemathesis.json"
MAX_EXAMPLES = 40
"""Per operation: enough to reach the error paths of every field, under three minutes."""

STREAMING = {
    "streamGame": "server-sent events: the body is a stream, not a document to validate",
    "streamBotEvents": "server-sent events: open until the client leaves",
    "waitBotTurns": "a long poll that may wait a minute per case (wait=0..60)",
}
"""Operations kept out of schema conformance (they are still checked for 5xx elsewhere)."""

schemathesis.serializer.alias("application/x-ndjson", "text/plain")
"""An import's body is an export's text (JSON lines): generated strings are sent as they are."""

KEY = "schemathesis-admin-key-0123456789"
ADMIN = {"Authorization": f"Bearer {KEY}"}
STORE = InMemoryEventStore()
APP = create_app(
    STORE,
    InProcessDispatcher(STORE),
    access=Access.embedded(STORE, Settings(admin_key=KEY, rate_limit=0)),
)
SCHEMA = schemathesis.openapi.from_asgi("/schema/openapi.json", APP).exclude(
    operation_id=list(STREAMING)
)
CASES: Counter[str] = Counter()
STATUSES: Counter[int] = Counter()


@pytest.fixture(scope="module", autouse=True)
def record_cases() -> Iterator[None]:
    """Prints and writes the number of cases run, per operation and per status, at the end."""
    yield
    summary = {
        "cases": sum(CASES.values()),
        "operations": len(CASES),
        "max_examples_per_operation": MAX_EXAMPLES,
        "per_operation": dict(sorted(CASES.items())),
        "per_status": {str(k): v for k, v in sorted(STATUSES.items())},
        "excluded": STREAMING,
    }
    ARTIFACT.parent.mkdir(exist_ok=True)
    ARTIFACT.write_text(json.dumps(summary, indent=2) + "\n")
    print(f"schemathesis: {summary['cases']} cases over {summary['operations']} operations")


@SCHEMA.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
)
def test_every_operation_answers_documented_non_5xx_responses(case: Case[Any]) -> None:
    response = case.call_and_validate(
        headers=ADMIN,
        checks=[not_a_server_error, status_code_conformance, response_schema_conformance],
    )
    CASES[case.operation.label] += 1
    STATUSES[response.status_code] += 1
