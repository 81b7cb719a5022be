"""Schemathesis against the game service's own OpenAPI document, every operation, on two
targets: the app in-process over the in-memory store (schemathesis' ASGI transport), and
`cardarena serve game` running as a process over Redis and PostgreSQL (with a worker and
the projection, as the e2e stack starts them), its document loaded from its
/schema/openapi.json and every case sent over HTTP.

Both have an admin key, sent with every case (generated credentials would only ever reach
the 401 path; schemathesis' own cases without credentials still go without). Each case must
not be a 5xx, must answer a status its operation documents, and must match the documented
schema of that status. The number of cases run, per target, operation and status, and the
operations no case succeeded on (whose success schemas went unchecked), are printed and
written to tests/artifacts/schemathesis.json.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import Case
from schemathesis.checks import not_a_server_error
from schemathesis.schemas import BaseSchema
from schemathesis.specs.openapi.checks import (
    response_schema_conformance,
    status_code_conformance,
)

from services.dev import service_ready
from services.game.app import create_app
from services.game.auth import Access
from shared.handlers import InProcessDispatcher
from shared.settings import Settings
from shared.store.memory import InMemoryEventStore
from tests.e2e.conftest import running_stack
from tests.e2e.support import wait_for

pytestmark = pytest.mark.reliability

ARTIFACT = Path(__file__).resolve().parents[1] / "artifacts" / "schemathesis.json"
MAX_EXAMPLES = 40
"""Per operation and target: enough to reach the error paths of every field; both targets
together run in about two minutes on two cores."""

STREAMING = {
    "streamGame": "server-sent events: the body is a stream, not a document to validate",
    "streamBotEvents": "server-sent events: open until the client leaves",
    "waitBotTurns": "a long poll that may wait a minute per case (wait=0..60)",
}
"""Operations kept out of schema conformance (they are still checked for 5xx elsewhere)."""

TARGETS = {
    "in-process": "the app in the test process over the in-memory store, ASGI transport",
    "running-service": "`cardarena serve game` as a process over Redis and PostgreSQL (with a"
    " worker and the projection), HTTP; its document from /schema/openapi.json",
}
"""The services the cases are sent to: the test's parameter ids and what each one is."""

schemathesis.serializer.alias("application/x-ndjson", "text/plain")
"""An import's body is an export's text (JSON lines): generated strings are sent as they are."""

KEY = "schemathesis-admin-key-0123456789"
ADMIN = {"Authorization": f"Bearer {KEY}"}
SUMMARIES: dict[str, dict[str, Any]] = {}
"""The summary of each target that ran, by name, written out at the end of the module."""


@dataclass
class Target:
    """A service under test: its schema, and the cases it answered so far."""

    name: str
    schema: BaseSchema
    answers: Counter[tuple[str, int]] = field(default_factory=Counter)
    """Cases by operation label and response status."""
    succeeded: set[str] = field(default_factory=set)
    """The operations that answered a case of their own method with a 2xx."""
    started: float = field(default_factory=time.monotonic)

    def summary(self) -> dict[str, Any]:
        """Returns the number of cases run, in all, per status and per operation and status,
        and the operations that never succeeded (their success schemas went unchecked)."""
        per_operation: dict[str, Counter[int]] = {}
        for (label, status), n in sorted(self.answers.items()):
            per_operation.setdefault(label, Counter())[status] += n
        per_status: Counter[int] = sum(per_operation.values(), Counter())
        return {
            "target": TARGETS[self.name],
            "cases": per_status.total(),
            "operations": len(per_operation),
            "seconds": round(time.monotonic() - self.started, 1),
            "per_status": {str(k): v for k, v in sorted(per_status.items())},
            "per_operation": {
                label: {str(k): v for k, v in statuses.items()}
                for label, statuses in per_operation.items()
            },
            "operations_never_succeeding": sorted(set(per_operation) - self.succeeded),
        }


@contextlib.contextmanager
def in_process() -> Iterator[BaseSchema]:
    """Yields the schema of the app over the in-memory store, called through ASGI."""
    store = InMemoryEventStore()
    access = Access.embedded(store, Settings(admin_key=KEY, rate_limit=0))
    app = create_app(store, InProcessDispatcher(store), access=access)
    yield schemathesis.openapi.from_asgi("/schema/openapi.json", app)


@contextlib.contextmanager
def running_service(request: pytest.FixtureRequest) -> Iterator[BaseSchema]:
    """Yields the schema served by the e2e stack (this test's Redis namespace and database),
    once the game service is ready; stops the stack afterwards."""
    extra = {"CARDARENA_ADMIN_KEY": KEY, "CARDARENA_RATE_LIMIT": "0"}
    with running_stack(
        request.getfixturevalue("redis_url"),
        request.getfixturevalue("redis_client"),
        request.getfixturevalue("namespace"),
        request.getfixturevalue("database_url"),
        extra,
    ) as stack:
        # /ready: the projection has applied the migrations that the views read.
        wait_for(lambda: service_ready(stack.base_url), 60, "the game service to be ready")
        yield schemathesis.openapi.from_url(f"{stack.base_url}/schema/openapi.json")


@pytest.fixture(params=list(TARGETS))
def target(request: pytest.FixtureRequest) -> Iterator[Target]:
    """Returns the target named by the parameter; records its summary afterwards."""
    name: str = request.param
    # schemathesis 4.32's lazy schemas read and write `Node._nodeid` (to name each operation's
    # subtest), which pytest 9.2 no longer has; without it every lazy test fails at once.
    request.node._nodeid = request.node.nodeid
    service = in_process() if name == "in-process" else running_service(request)
    with service as schema:
        started = Target(name, schema)
        try:
            yield started
        finally:
            SUMMARIES[name] = started.summary()


@pytest.fixture
def api_schema(target: Target) -> BaseSchema:
    """Returns the target's schema (schemathesis loads it lazily, per target)."""
    return target.schema


@pytest.fixture(scope="module", autouse=True)
def record_cases() -> Iterator[None]:
    """Prints and writes the number of cases run, per target, at the end."""
    yield
    summary = {
        "cases": sum(s["cases"] for s in SUMMARIES.values()),
        "max_examples_per_operation": MAX_EXAMPLES,
        "targets": SUMMARIES,
        "excluded": STREAMING,
    }
    ARTIFACT.parent.mkdir(exist_ok=True)
    ARTIFACT.write_text(json.dumps(summary, indent=2) + "\n")
    for name, ran in SUMMARIES.items():
        print(
            f"schemathesis {name}: {ran['cases']} cases over {ran['operations']} operations"
            f" in {ran['seconds']} s; {len(ran['operations_never_succeeding'])} never succeeded"
        )


SCHEMA = schemathesis.pytest.from_fixture("api_schema").exclude(operation_id=list(STREAMING))


@SCHEMA.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
)
def test_every_operation_answers_documented_non_5xx_responses(
    case: Case[Any], target: Target
) -> None:
    response = case.call_and_validate(
        headers=ADMIN,
        checks=[not_a_server_error, status_code_conformance, response_schema_conformance],
    )
    target.answers[case.operation.label, response.status_code] += 1
    # A 2xx to another method (the coverage phase's OPTIONS, say) is no success of this one.
    if response.status_code < 300 and case.method.upper() == case.operation.method.upper():
        target.succeeded.add(case.operation.label)
