"""The OpenAPI document lists the problems answered around the handlers: 413 on every
operation that reads a body, the app guard's 401/429/503 and 500 everywhere, and the
Retry-After header of every 429 and 503."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from services.game.app import MAX_BODY_SIZE
from services.game.http.pipeline.problems import MEDIA_TYPE
from tests.support.api import ADMIN, KEY

pytestmark = pytest.mark.service(admin_key=KEY)

PROBLEM_REF = "#/components/schemas/Problem"


@pytest.fixture(scope="module")
def operations(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Returns every operation of the served OpenAPI document, by operation id."""
    return {
        operation["operationId"]: operation
        for path in document["paths"].values()
        for operation in path.values()
    }


def body_taking(operations: dict[str, dict[str, Any]]) -> set[str]:
    """Returns the ids of the operations whose document has a request body."""
    return {name for name, operation in operations.items() if "requestBody" in operation}


def test_every_operation_with_a_request_body_documents_413_as_a_problem(
    operations: dict[str, dict[str, Any]],
) -> None:
    taking = body_taking(operations)
    assert {"createGame", "postAction", "registerBot", "importGame"} <= taking
    for name in taking:
        too_large = operations[name]["responses"].get("413")
        assert too_large is not None, f"{name} reads a body but does not document 413"
        assert too_large["content"][MEDIA_TYPE]["schema"] == {"$ref": PROBLEM_REF}, name


def test_operations_without_a_request_body_do_not_document_413(
    operations: dict[str, dict[str, Any]],
) -> None:
    documenting = {name for name, op in operations.items() if "413" in op["responses"]}
    assert documenting == body_taking(operations)


def test_the_documented_413_names_the_limit_of_its_operation(
    operations: dict[str, dict[str, Any]],
) -> None:
    assert "over 1 MiB" in operations["createGame"]["responses"]["413"]["description"]
    assert "over 16 MiB" in operations["importGame"]["responses"]["413"]["description"]


def test_a_body_over_the_limit_gets_the_documented_413_problem(
    client: TestClient[Litestar],
) -> None:
    headers = {**ADMIN, "content-type": "application/json"}
    response = client.post("/v1/games", content=b" " * (MAX_BODY_SIZE + 1), headers=headers)
    assert response.status_code == 413
    assert response.headers["content-type"].startswith(MEDIA_TYPE)
    assert response.json()["status"] == 413


def test_every_429_and_503_documents_its_retry_after_header(
    operations: dict[str, dict[str, Any]],
) -> None:
    for name, operation in operations.items():
        for status in ("429", "503"):
            response = operation["responses"][status]
            header = response.get("headers", {}).get("Retry-After")
            assert header is not None, f"{name} {status} lacks Retry-After"
            assert header["required"] is True
            assert header["schema"]["type"] == "integer"


def test_every_operation_documents_the_app_guard_problems_and_500(
    operations: dict[str, dict[str, Any]],
) -> None:
    for name, operation in operations.items():
        assert {"401", "429", "500", "503"} <= set(operation["responses"]), name


def test_a_health_check_with_a_bad_token_gets_its_documented_401(
    client: TestClient[Litestar], operations: dict[str, dict[str, Any]]
) -> None:
    response = client.get("/health", headers={"Authorization": "Bearer not-a-token"})
    assert response.status_code == 401
    assert "401" in operations["health"]["responses"]
