"""The game service's REST API: statuses, problem details, and nothing appended on any error.

`GameApiBehaviours` (tests/support/game_api.py) holds the behaviours that hold over every
event store; this module runs them over the in-memory store,
tests/integration/test_game_api_redis.py over Redis. `test-bump`, a tiny game with decisions
hosted here, exercises the action paths that Beggar-my-neighbour (no decisions) cannot.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from shared.catalog import hosting
from shared.messages.envelope import NewEvent, RecordedEvent
from shared.store.memory import InMemoryEventStore
from shared.store.port import AppendResult, StoreUnavailable
from tests.support.api import app_client, problem
from tests.support.game_api import (
    BUMP,
    GameApiBehaviours,
    bump_at,
    feed_size,
)


@pytest.fixture(autouse=True)
def _hosted() -> Iterator[None]:
    """Hosts test-bump beside the built-in games for each test of this module."""
    with hosting(BUMP):
        yield


class TestGameApiInMemory(GameApiBehaviours):
    """The behaviours over the in-memory store."""

    @pytest.fixture
    def store(self) -> InMemoryEventStore:
        """Returns an empty in-memory store."""
        return InMemoryEventStore()


class UnavailableStore(InMemoryEventStore):
    """An in-memory store whose every read and append fails as if its server were down."""

    def append(
        self,
        stream: str,
        kind: str,
        expected_version: int,
        events: Sequence[NewEvent],
        idempotency_key: str | None = None,
        fingerprint: str = "",
    ) -> AppendResult:
        raise StoreUnavailable("the store is down")

    def read(self, stream: str, after: int = 0, limit: int | None = None) -> list[RecordedEvent]:
        raise StoreUnavailable("the store is down")


class BrokenStore(InMemoryEventStore):
    """An in-memory store whose reads fail with an error nobody expects."""

    def read(self, stream: str, after: int = 0, limit: int | None = None) -> list[RecordedEvent]:
        raise RuntimeError("secret internals")


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/v1/games", {"game": "beggar", "players": 2}),
        ("GET", "/v1/games/some-game", None),
        ("GET", "/v1/games/some-game/events", None),
        ("GET", "/v1/games/some-game/view?seat=1", None),
        ("POST", "/v1/games/some-game/actions", bump_at(2)),
    ],
)
def test_an_unavailable_store_is_503_with_retry_after(method: str, path: str, body: Any) -> None:
    store = UnavailableStore()
    with app_client(store) as client:
        response = client.request(method, path, json=body)
    assert problem(response, 503)["type"].endswith("store-unavailable")
    assert response.headers["retry-after"] == "1"
    assert feed_size(store) == 0


def test_an_unexpected_error_is_a_500_problem_that_discloses_nothing() -> None:
    store = BrokenStore()
    with app_client(store) as client:
        response = client.get("/v1/games/some-game")
    assert "secret" not in problem(response, 500)["detail"]


def test_the_openapi_schema_documents_every_operation_and_its_problem_responses() -> None:
    store = InMemoryEventStore()
    with app_client(store) as client:
        schema = client.get("/schema/openapi.json").json()
    operations = {
        operation["operationId"]: operation
        for path in schema["paths"].values()
        for operation in path.values()
    }
    assert set(operations) == {
        "createGame",
        "listGames",
        "getGame",
        "getCatalog",
        "getSeatView",
        "listGameEvents",
        "postAction",
        "abortGame",
        "createTournament",
        "createEvaluation",
        "getEvaluation",
        "listEvaluations",
        "getTournament",
        "getTournamentStandings",
        "listTournaments",
        "getLeaderboard",
        "getRatingHistory",
        "listSchedules",
        "getSchedule",
        "cancelSchedule",
        "cancelTournament",
        "joinArena",
        "withdrawFromArena",
        "registerBot",
        "listBots",
        "getBot",
        "getCallingBot",
        "rotateBotToken",
        "revokeBotToken",
        "createAccount",
        "getCallingAccount",
        "listAccountBots",
        "suspendAccount",
        "issueInvite",
        "streamGame",
        "streamBotEvents",
        "streamTournament",
        "waitBotTurns",
        "waitSeatTurn",
        "listBotChallenges",
        "listBotGames",
        "issueChallenge",
        "getChallenge",
        "acceptChallenge",
        "declineChallenge",
        "cancelChallenge",
        "openLadder",
        "listLadders",
        "getLadder",
        "closeLadder",
        "joinLadder",
        "leaveLadder",
        "replayGame",
        "forkGame",
        "exportGame",
        "getGameVerification",
        "importGame",
        "health",
        "ready",
    }
    assert set(operations["postAction"]["responses"]) >= {"200", "400", "404", "409", "422", "503"}
    assert set(operations["createGame"]["responses"]) >= {"200", "201", "400", "422", "503"}
    for operation in operations.values():
        for status, response in operation["responses"].items():
            if int(status) >= 400:
                assert set(response["content"]) == {"application/problem+json"}, status
