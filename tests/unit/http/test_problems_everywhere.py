"""Problem details everywhere: what the router refuses before any handler runs (an unknown
route, a wrong method, a body over the limit) answers `application/problem+json` with a
problem type of the project's, never `about:blank` nor an HTML page."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from services.game.app import MAX_BODY_SIZE
from services.game.exports.controllers import IMPORT_MAX_BODY_SIZE
from services.game.http.pipeline.limits import BOT_BODY_SIZE
from services.game.http.pipeline.problems import MEDIA_TYPE, TYPE_PREFIX
from tests.support.api import ADMIN, KEY, problem

pytestmark = pytest.mark.service(admin_key=KEY)

JSON = {**ADMIN, "content-type": "application/json"}


@pytest.mark.parametrize(
    "path",
    [
        "/nope",
        "/v1",
        "/v1/gamez",
        "/v1/games/some-id/nothing-here",
        "/schema/nope",
        "/schema/swagger",
        "/schema/openapi.xml",
        "/schema/assets/redoc-0.0.0.js",
        "/v1/%ff%fe",
        "/schema/assets/%2e%2e/%2e%2e/pyproject.toml",
        "/schema/assets/redoc.standalone.js",
        "/replay/static/nope.js",
        "/replay/static/%2e%2e/viewer.py",
    ],
)
def test_an_unknown_route_is_a_404_problem_of_type_unknown_route(
    client: TestClient[Litestar], path: str
) -> None:
    problem(client.get(path, headers=ADMIN), 404, "unknown-route")


def test_an_unknown_route_is_the_same_problem_without_credentials_and_for_any_method(
    client: TestClient[Litestar],
) -> None:
    problem(client.get("/nope"), 404, "unknown-route")
    problem(client.post("/nope", json={}), 404, "unknown-route")
    problem(client.delete("/v1/nope/1"), 404, "unknown-route")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("PUT", "/v1/games"),
        ("DELETE", "/health"),
        ("PATCH", "/v1/games/some-id/actions"),
        ("POST", "/schema/openapi.json"),
        ("POST", "/schema"),
    ],
)
def test_a_wrong_method_is_a_405_problem_naming_the_allowed_ones(
    client: TestClient[Litestar], method: str, path: str
) -> None:
    response = client.request(method, path, headers=ADMIN)
    body = problem(response, 405, "method-not-allowed")
    allowed = {name.strip() for name in response.headers["allow"].split(",")}
    assert method not in allowed
    assert allowed <= {"GET", "POST", "DELETE", "OPTIONS", "HEAD"}
    for name in allowed:
        assert name in body["detail"]


def test_a_body_just_over_the_limit_is_a_413_problem_naming_the_limit(
    client: TestClient[Litestar],
) -> None:
    over = client.post("/v1/games", content=b" " * (MAX_BODY_SIZE + 1), headers=JSON)
    assert problem(over, 413, "body-too-large")["limit"] == MAX_BODY_SIZE
    # At the limit the body is read: a body of blanks is then malformed JSON, not too large.
    at = client.post("/v1/games", content=b" " * MAX_BODY_SIZE, headers=JSON)
    assert at.status_code == 400, at.text


def test_a_chunked_body_over_the_limit_is_the_same_413_problem(
    client: TestClient[Litestar],
) -> None:
    def chunks() -> Iterator[bytes]:
        for _ in range(MAX_BODY_SIZE // 2**16 + 1):
            yield b" " * 2**16

    over = client.post("/v1/games", content=chunks(), headers=JSON)
    assert "content-length" not in over.request.headers
    assert problem(over, 413, "body-too-large")["limit"] == MAX_BODY_SIZE


def test_a_413_names_the_limit_of_its_own_operation(client: TestClient[Litestar]) -> None:
    # The import reads up to 16 MiB: a 2 MiB body is read (and refused as a log), a body
    # one byte over 16 MiB is not.
    headers = {**ADMIN, "content-type": "application/x-ndjson"}
    read = client.post("/v1/games/import", content=b"x" * (2 * MAX_BODY_SIZE), headers=headers)
    assert read.status_code != 413, read.text
    body = b"x" * (IMPORT_MAX_BODY_SIZE + 1)
    over = client.post("/v1/games/import", content=body, headers=headers)
    assert problem(over, 413, "body-too-large")["limit"] == IMPORT_MAX_BODY_SIZE


def test_a_lie_about_the_length_is_no_way_around_the_limit(
    client: TestClient[Litestar],
) -> None:
    headers = {**JSON, "content-length": "2"}
    over = client.post("/v1/games", content=b" " * (MAX_BODY_SIZE + 1), headers=headers)
    assert over.status_code in {400, 413}, over.text
    assert over.headers["content-type"].startswith(MEDIA_TYPE)
    assert not over.json()["type"].startswith("about:")


def test_an_unknown_bot_is_a_problem_of_type_unknown_bot(client: TestClient[Litestar]) -> None:
    problem(client.get("/v1/bots/nobody/1"), 404, "unknown-bot")


def test_no_answer_of_the_service_has_the_type_about_blank(
    client: TestClient[Litestar],
) -> None:
    answers = [
        client.get("/nope"),
        client.put("/v1/games"),
        client.post("/v1/games", content=b" " * (MAX_BODY_SIZE + 1), headers=JSON),
        client.get("/v1/games/nope"),
        client.get("/v1/bots/nobody/1"),
        client.get("/v1/games/%00/view?seat=0"),
    ]
    for answer in answers:
        assert answer.json()["type"].startswith(TYPE_PREFIX), answer.text


def test_the_documented_413_names_the_problem_type_it_answers(
    client: TestClient[Litestar],
) -> None:
    document = client.get("/schema/openapi.json").json()
    too_large = document["paths"]["/v1/games"]["post"]["responses"]["413"]
    assert "`body-too-large`" in too_large["description"]
    assert "`limit`" in too_large["description"]


def test_a_bots_own_token_or_a_wrong_one_gets_the_same_problems(
    client: TestClient[Litestar],
) -> None:
    registered = client.post(
        "/v1/bots", json={"name": "prober", "game": "shithead", "kind": "external"}, headers=ADMIN
    )
    live, wrong = registered.json()["token"], "cab_0000000000000000.not-a-token"
    over = b" " * (BOT_BODY_SIZE + 1)
    for token in (live, wrong):
        bearer = {"Authorization": f"Bearer {token}", "content-type": "application/json"}
        problem(client.get("/v1/nope", headers=bearer), 404, "unknown-route")
        problem(client.put("/v1/games/x/actions", headers=bearer), 405, "method-not-allowed")
        # The move's limit holds for every caller: the body is refused before it is read whole.
        answer = client.post("/v1/games/x/actions", content=over, headers=bearer)
        assert problem(answer, 413, "body-too-large")["limit"] == BOT_BODY_SIZE
