"""The checker of answers against the OpenAPI document (tests/support/openapi_check.py) finds
each kind of disagreement: a body off its schema, an undocumented status or media type, a
request body off its schema, and a path the document does not have."""

from __future__ import annotations

import dataclasses
import json

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.support.openapi_check import Checker, Exchange, Recorder


@pytest.fixture(scope="module")
def checker(served: TestClient[Litestar]) -> Checker:
    """Returns a checker over the served document."""
    return Checker(served.get("/schema/openapi.json").json())


@pytest.fixture(scope="module")
def game(served: TestClient[Litestar]) -> Exchange:
    """Returns the recorded answer of a finished game's summary."""
    created = served.post("/v1/games", json={"game": "beggar", "players": 2, "seed": 1})
    recorder = Recorder()
    recorder(served.get(f"/v1/games/{created.json()['game_id']}"))
    return recorder.exchanges[0]


def test_a_documented_answer_passes(checker: Checker, game: Exchange) -> None:
    assert list(checker.errors(game)) == []
    assert checker.checked["getGame", 200] >= 1


def test_a_body_off_its_schema_is_named_with_where(checker: Checker, game: Exchange) -> None:
    body = json.loads(game.response_body)
    body["version"] = "7"
    del body["status"]
    wrong = dataclasses.replace(game, response_body=json.dumps(body).encode())
    errors = list(checker.errors(wrong))
    assert any("at /version" in error and "getGame" in error for error in errors), errors
    assert any("'status' is a required property" in error for error in errors), errors


def test_an_undocumented_status_or_media_type_is_a_disagreement(
    checker: Checker, game: Exchange
) -> None:
    assert ["does not document status 418" in e for e in checker.errors(
        dataclasses.replace(game, status=418))] == [True]  # fmt: skip
    html = dataclasses.replace(game, response_type="text/html")
    assert ["answers 'text/html'" in e for e in checker.errors(html)] == [True]


def test_a_request_body_off_its_schema_is_a_disagreement(
    served: TestClient[Litestar], checker: Checker
) -> None:
    recorder = Recorder()
    recorder(served.post("/v1/games", json={"game": "beggar", "players": 2}))
    accepted = recorder.exchanges[0]
    assert list(checker.errors(accepted)) == []
    sent = dataclasses.replace(accepted, request_body=b'{"game": "beggar", "players": "2"}')
    assert any(error.startswith("request ") for error in checker.errors(sent))


def test_a_path_outside_the_document_is_a_disagreement(checker: Checker, game: Exchange) -> None:
    elsewhere = dataclasses.replace(game, path="/v2/games/x")
    assert list(checker.errors(elsewhere)) == [
        "GET /v2/games/x -> 200: no operation of the document"
    ]
    assert checker.operation("GET", "/v1/bots/me") is not None
    assert checker.operation("GET", "/v1/bots/me")[0] == "/v1/bots/me"  # type: ignore[index]


def test_a_problem_of_another_type_than_the_projects_is_a_disagreement(
    served: TestClient[Litestar], checker: Checker
) -> None:
    recorder = Recorder()
    recorder(served.get("/v1/games/nope"))
    missing = recorder.exchanges[0]
    assert list(checker.errors(missing)) == []
    blank = json.loads(missing.response_body) | {"type": "about:blank"}
    wrong = dataclasses.replace(missing, response_body=json.dumps(blank).encode())
    assert any("not one of the project's" in error for error in checker.errors(wrong))


def test_an_unknown_route_must_answer_a_problem_of_the_projects(
    served: TestClient[Litestar], checker: Checker
) -> None:
    recorder = Recorder()
    recorder(served.get("/v1/no-such-route"))
    recorder(served.delete("/v1/games"))
    assert [list(checker.errors(exchange)) for exchange in recorder.exchanges] == [[], []]
    html = dataclasses.replace(recorder.exchanges[0], response_type="text/html")
    assert ["not application/problem+json" in e for e in checker.errors(html)] == [True]
