"""The bot registry and tournament cancellation through the API, in the embedded default."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

from services.game.app import create_app
from services.game.http.pipeline.auth import Access
from services.settings import Settings
from shared.app.bot_turns import play_bot_turns
from shared.app.loading import load
from shared.app.runtime import InProcessDispatcher
from shared.app.tournaments import (
    after_game,
    cancel_tournament,
    create_tournament,
    load_tournament,
    start_game,
)
from shared.model.tournaments.model import Entrant, TournamentDefinition
from shared.store.memory import InMemoryEventStore
from tests.support.api import Client

DEEP: dict[str, Any] = {
    "name": "deep",
    "game": "shithead",
    "strategy": "heuristic",
    "version": "2",
    "description": "the heuristic, labelled",
}


def test_a_registered_bot_is_listed_and_read_by_name_and_version(client: Client) -> None:
    created = client.post("/v1/bots", json=DEEP)
    assert created.status_code == 201, created.text
    bot = created.json()
    assert bot["key"] == "deep@2"
    assert bot["strategy"] == "heuristic"
    assert bot["registered_at"]
    assert created.headers["location"] == "/v1/bots/deep/2"
    assert client.get("/v1/bots/deep/2").json() == bot
    assert client.get("/v1/bots").json() == {"bots": [bot]}
    assert client.get("/v1/bots", params={"game": "autobus"}).json() == {"bots": []}


def test_registering_the_same_bot_again_returns_it_and_writes_nothing(
    client: Client, store: InMemoryEventStore
) -> None:
    first = client.post("/v1/bots", json=DEEP).json()
    again = client.post("/v1/bots", json=DEEP)
    assert again.status_code == 200
    assert again.json() == first
    assert len(client.get("/v1/bots").json()["bots"]) == 1


def test_a_taken_name_and_version_with_another_strategy_is_refused(client: Client) -> None:
    client.post("/v1/bots", json=DEEP)
    refused = client.post("/v1/bots", json={**DEEP, "strategy": "mc"})
    assert refused.status_code == 422
    assert refused.json()["field"] == "version"
    newer = client.post("/v1/bots", json={**DEEP, "strategy": "mc", "version": "3"})
    assert newer.status_code == 201
    assert [bot["key"] for bot in client.get("/v1/bots").json()["bots"]] == ["deep@2", "deep@3"]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"name": "Deep Blue"}, "name"),
        ({"version": ""}, "version"),
        ({"version": "a@b"}, "version"),
        ({"game": "chess"}, "game"),
        ({"strategy": "genius"}, "strategy"),
        ({"description": "x" * 501}, "description"),
    ],
)
def test_a_bad_registration_names_its_field_and_registers_nothing(
    client: Client, change: dict[str, Any], field: str
) -> None:
    refused = client.post("/v1/bots", json={**DEEP, **change})
    assert refused.status_code == 422, refused.text
    assert refused.json()["field"] == field
    assert client.get("/v1/bots").json() == {"bots": []}


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("http://127.0.0.1:9/x", "127.0.0.1 is a loopback address"),
        ("http://169.254.169.254/latest/meta-data/", "a link-local address"),
        ("http://[::ffff:10.0.0.5]/x", "10.0.0.5, a private address"),
        ("http://localhost:6379/", "localhost resolves to"),
    ],
)
def test_a_webhook_at_a_private_address_is_refused_naming_its_url_and_registers_nothing(
    client: Client, url: str, said: str
) -> None:
    hook = {"name": "hook", "game": "shithead", "kind": "webhook", "url": url}
    refused = client.post("/v1/bots", json=hook)
    assert refused.status_code == 422, refused.text
    assert refused.json()["field"] == "url"
    assert said in refused.json()["detail"]
    assert client.get("/v1/bots").json() == {"bots": []}


def test_with_private_webhooks_allowed_a_webhook_on_loopback_registers(
    store: InMemoryEventStore,
) -> None:
    access = Access.embedded(store, Settings(webhook_allow_private=True))
    hook = {"name": "hook", "game": "shithead", "kind": "webhook", "url": "http://127.0.0.1:9/x"}
    with TestClient(create_app(store, InProcessDispatcher(store), access=access)) as client:
        created = client.post("/v1/bots", json=hook)
    assert created.status_code == 201, created.text
    assert created.json()["url"] == hook["url"]


def test_unknown_fields_bad_filters_and_unknown_bots_are_client_errors(client: Client) -> None:
    assert client.post("/v1/bots", json={**DEEP, "colour": "red"}).status_code == 400
    unknown_game = client.get("/v1/bots", params={"game": "chess"})
    assert unknown_game.status_code == 400
    assert unknown_game.json()["field"] == "game"
    missing = client.get("/v1/bots/deep/9")
    assert missing.status_code == 404
    assert "deep@9" in missing.json()["detail"]


def test_a_tournament_enters_registered_bots_which_play_their_strategy_rated_by_version(
    client: Client, store: InMemoryEventStore
) -> None:
    client.post("/v1/bots", json=DEEP)
    body = {
        "game": "shithead",
        "entrants": [{"bot": "deep", "version": "2"}, {"bot": "random"}],
        "table_size": 2,
        "seed": "3",
    }
    created = client.post("/v1/tournaments", json=body)
    assert created.status_code == 201, created.text
    tournament = created.json()
    assert [e["strategy"] for e in tournament["definition"]["entrants"]] == ["heuristic", "random"]
    game_id = tournament["rounds"][0]["games"][0]["game_id"]
    seats = load(store, game_id).created.seats
    assert [(s.bot, s.rating_key) for s in seats] == [
        ("heuristic", "deep@2"),
        ("random", "random@1"),
    ]


def test_a_tournament_refuses_an_unregistered_bot_and_one_of_another_game(client: Client) -> None:
    client.post("/v1/bots", json=DEEP)
    body = {
        "game": "autobus",
        "entrants": [{"bot": "random"}, {"bot": "deep", "version": "2"}],
        "table_size": 2,
    }
    other_game = client.post("/v1/tournaments", json=body)
    assert other_game.status_code == 422
    assert other_game.json()["field"] == "entrants[1].bot"
    assert "plays Shithead" in other_game.json()["detail"]
    unregistered = client.post(
        "/v1/tournaments",
        json={**body, "game": "shithead", "entrants": [{"bot": "random"}, {"bot": "deep"}]},
    )
    assert unregistered.status_code == 422
    assert unregistered.json()["field"] == "entrants[1].bot"
    assert "deep@1" in unregistered.json()["detail"]
    assert client.get("/v1/tournaments").json()["tournaments"] == []


def _running(store: InMemoryEventStore) -> str:
    """Records a tournament with its first round scheduled but no game played."""
    definition = TournamentDefinition(
        game="beggar",
        entrants=[Entrant(bot="turner"), Entrant(bot="random")],
        table_size=2,
        games_per_table=2,
    )
    return create_tournament(store, definition)


def test_cancelling_a_running_tournament_stops_it_and_repeating_changes_nothing(
    client: Client, store: InMemoryEventStore
) -> None:
    tournament_id = _running(store)
    url = f"/v1/tournaments/{tournament_id}/cancel"
    cancelled = client.post(url, json={"reason": "host went home"})
    assert cancelled.status_code == 200, cancelled.text
    assert cancelled.json()["status"] == "cancelled"
    version = store.version(f"tournament:{tournament_id}")
    again = client.post(url)
    assert again.status_code == 200
    assert again.json()["status"] == "cancelled"
    assert store.version(f"tournament:{tournament_id}") == version
    state, _ = load_tournament(store, tournament_id)
    assert state.status == "cancelled"


def test_a_finished_tournament_cannot_be_cancelled_and_an_unknown_one_is_404(
    client: Client,
) -> None:
    body = {"game": "beggar", "entrants": [{"bot": "turner"}, {"bot": "random"}], "table_size": 2}
    tournament = client.post("/v1/tournaments", json=body).json()
    refused = client.post(f"/v1/tournaments/{tournament['tournament_id']}/cancel")
    assert refused.status_code == 409
    assert refused.json()["type"].endswith("tournament-over")
    assert client.get(f"/v1/tournaments/{tournament['tournament_id']}").json()["status"] == (
        "finished"
    )
    assert client.post("/v1/tournaments/nope/cancel").status_code == 404
    bad = client.post(f"/v1/tournaments/{tournament['tournament_id']}/cancel", json={"why": 1})
    assert bad.status_code == 400


def test_a_game_finishing_after_the_cancel_counts_for_nothing_and_starts_nothing(
    store: InMemoryEventStore,
) -> None:
    tournament_id = _running(store)
    state, _ = load_tournament(store, tournament_id)
    game_id = start_game(store, tournament_id, state, state.rounds[0].games[0])
    cancel_tournament(store, tournament_id)
    play_bot_turns(store, game_id)
    dispatched: list[str] = []
    after_game(store, game_id, dispatched.append)
    after, _ = load_tournament(store, tournament_id)
    assert after.records == ()
    assert after.status == "cancelled"
    assert dispatched == []
