"""The document declares each operation's security as it is: a request without credentials
to an operation whose token is optional is served (or not found), and one to an operation
whose token is required is refused with 401 or 403, on a service with an admin key."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from services.game.http.openapi.operations import OPTIONAL, REQUIRED
from shared.store.memory import InMemoryEventStore
from tests.support.api import ADMIN, admin_client, register

SEATED = {"getSeatView", "waitSeatTurn", "postAction", "forkGame"}
"""Operations probed on a running game with external seats (the others on a finished one)."""


class Service:
    """The service with an admin key, two external bots, a running game with their seats, a
    finished game of built-in bots and an open challenge."""

    def __init__(self) -> None:
        store = InMemoryEventStore()
        self.client = admin_client(store)
        self.tokens = {name: register(self.client, name)["token"] for name in ("alice", "bob")}
        seats = [{"kind": "external", "bot": "alice"}, {"kind": "external", "bot": "bob"}]
        self.running = self.create({"game": "shithead", "seats": seats, "seed": 3})
        self.finished = self.create({"game": "beggar", "players": 2, "seed": 3})
        self.wait_until_over(self.finished["game_id"])
        body = {"game": "shithead", "opponents": [{"bot": "bob"}]}
        alice = {"Authorization": f"Bearer {self.tokens['alice']}"}
        challenge = self.client.post("/v1/challenges", json=body, headers=alice)
        assert challenge.status_code == 201, challenge.text
        self.challenge_id = challenge.json()["challenge_id"]

    def create(self, body: dict[str, Any]) -> dict[str, Any]:
        created = self.client.post("/v1/games", json=body, headers=ADMIN)
        assert created.status_code == 201, created.text
        game: dict[str, Any] = created.json()
        return game

    def wait_until_over(self, game_id: str) -> None:
        deadline = time.monotonic() + 10
        while self.client.get(f"/v1/games/{game_id}").json()["status"] == "playing":
            assert time.monotonic() < deadline, "the built-in bots did not finish"
            time.sleep(0.02)

    def anonymous_status(self, method: str, path: str, operation: dict[str, Any]) -> int:
        """Returns the status a request without credentials gets from `operation`."""
        name = operation["operationId"]
        game = self.running if name in SEATED else self.finished
        ids = {
            "game_id": game["game_id"],
            "challenge_id": self.challenge_id,
            "name": "alice",
            "version": "1",
            "game": "shithead",
            "entrant": "0",
        }
        url = re.sub(r"\{([^}]+)\}", lambda found: ids.get(found.group(1), "nope"), path)
        bodies: dict[str, Any] = {
            "postAction": {
                "seat": 0,
                "action": {"type": "Ready"},
                "expected_version": self.running["version"],
            },
            "issueChallenge": {"game": "shithead", "opponents": [{"bot": "bob"}]},
        }
        body = bodies.get(name, {} if "requestBody" in operation else None)
        params = {"seat": 0} if name in {"getSeatView", "waitSeatTurn"} else None
        response = self.client.request(method.upper(), url, json=body, params=params)
        return response.status_code


@pytest.fixture(scope="module")
def service() -> Iterator[Service]:
    built = Service()
    with built.client:
        yield built


def operations(service: Service) -> list[tuple[str, str, dict[str, Any]]]:
    document = service.client.get("/schema/openapi.json").json()
    return [
        (method, path, operation)
        for path, item in document["paths"].items()
        for method, operation in item.items()
    ]


def test_every_operation_declares_its_token_required_or_optional(service: Service) -> None:
    for _, _, operation in operations(service):
        assert operation["security"] in (REQUIRED, OPTIONAL), operation["operationId"]


def test_the_declared_security_is_what_a_request_without_credentials_gets(
    service: Service,
) -> None:
    wrong = []
    for method, path, operation in operations(service):
        status = service.anonymous_status(method, path, operation)
        refused = status in (401, 403)
        if refused != (operation["security"] == REQUIRED):
            wrong.append((operation["operationId"], operation["security"], status))
    assert wrong == [], wrong


def test_public_reads_say_a_token_is_optional_and_hosting_says_it_is_required(
    service: Service,
) -> None:
    by_id = {operation["operationId"]: operation for _, _, operation in operations(service)}
    for name in ("listGameEvents", "streamGame", "replayGame", "getGame", "getLeaderboard"):
        assert by_id[name]["security"] == OPTIONAL, name
    for name in ("createGame", "registerBot", "createTournament", "streamBotEvents"):
        assert by_id[name]["security"] == REQUIRED, name
