"""A game that only a test knows (High card, tests/support/toy_game.py), hosted for a block
with `catalog.hosting`: created, played, replayed, exported and imported through the API and
its export replayed offline, with nothing in `services/` or `shared/` naming it."""

from __future__ import annotations

from typing import Any

from litestar import Litestar
from litestar.testing import TestClient

from services.game.app import create_app
from shared.app.runtime import InProcessDispatcher
from shared.catalog import game_names, hosting
from shared.model import log_replay
from shared.store.memory import InMemoryEventStore
from tests.support.toy_game import HIGH_CARD

Client = TestClient[Litestar]
SEATS = [{"kind": "external"}, {"kind": "bot", "bot": "random"}, {"kind": "external"}]
"""Seats 0 and 2 are posted by the test; seat 1, a built-in bot, moves as soon as it is due."""


def answer(client: Client, path: str, **params: Any) -> Any:
    """Returns the JSON body of a 200 to GET `path`."""
    response = client.get(path, params=params)
    assert response.status_code == 200, response.text
    return response.json()


def play_through_the_api(client: Client, game_id: str) -> int:
    """Posts the last legal action of each client seat the game waits for until it ends;
    returns how many actions were posted."""
    posted = 0
    while due := answer(client, f"/v1/games/{game_id}/view", seat=0)["to_move"]:
        assert posted < len(SEATS), "a client seat moved twice"
        turn = answer(client, f"/v1/games/{game_id}/view", seat=due[0])
        assert SEATS[turn["seat"]]["kind"] == "external", "the built-in bot moves by itself"
        body = {
            "seat": turn["seat"],
            "action": turn["legal_actions"][-1],
            "expected_version": turn["version"],
        }
        response = client.post(f"/v1/games/{game_id}/actions", json=body)
        assert response.status_code == 200, response.text
        posted += 1
    return posted


def test_a_game_hosted_by_a_test_goes_through_the_api_the_replay_and_the_export() -> None:
    store = InMemoryEventStore()
    with hosting(HIGH_CARD), TestClient(create_app(store, InProcessDispatcher(store))) as client:
        created = client.post("/v1/games", json={"game": "high-card", "seats": SEATS, "seed": 9})
        assert created.status_code == 201, created.text
        game_id = created.json()["game_id"]
        running = answer(client, f"/v1/games/{game_id}")
        assert running["status"] == "playing"
        assert running["table"] == {"held": [2, 2, 2], "shown": []}

        assert play_through_the_api(client, game_id) == 2
        game = answer(client, f"/v1/games/{game_id}")
        replay = answer(client, f"/v1/games/{game_id}/replay")
        at_deal = answer(client, f"/v1/games/{game_id}/replay", version=2, seat=1)
        exported = client.get(f"/v1/games/{game_id}/export")
        assert exported.status_code == 200, exported.text
        document = answer(client, "/schema/openapi.json")

        elsewhere = InMemoryEventStore()
        with TestClient(create_app(elsewhere, InProcessDispatcher(elsewhere))) as other:
            imported = other.post("/v1/games/import", content=exported.content)
            assert imported.status_code == 201, imported.text
            assert other.get(f"/v1/games/{game_id}/export").content == exported.content
        report = log_replay.replay_log(exported.content.splitlines())

    assert game["status"] == "finished"
    assert sorted(game["result"]["places"])[0] == 1
    assert [seat["kind"] for seat in game["seats"]] == [seat["kind"] for seat in SEATS]
    assert replay["over"] is True
    assert replay["result"] == game["result"]
    kinds = [item["type"] for item in replay["events"]]
    assert kinds == ["GameCreated", "HighCardDealt", *["CardShown"] * 3, "GameFinished"]
    assert (len(at_deal["view"]["hand"]), at_deal["view"]["held"]) == (2, [2, 2, 2])
    assert report.ok, (report.version, report.reason)
    assert report.result is not None
    assert report.result.places == game["result"]["places"]
    assert report.verification is not None
    assert report.verification.status == "ok"
    assert "high-card" in str(document)
    assert "high-card" not in game_names(), "hosted for the block only"
    unknown = log_replay.replay_log(exported.content.splitlines())
    assert (unknown.ok, unknown.reason) == (False, "unknown game 'high-card'")
